#pragma once
// What the node scale adjuster reads of a pod (KAI's pkg/nodescaleadjuster/): a fractional pod's
// GPU share, PodScheduled condition and scheduling constraints, and a scaling pod's link to its
// fractional pod. Read from the API's JSON or a manifest (one doc tree for both); the GPU-sharing
// annotations through kai's pod decoder, so an invalid one is rejected as everywhere else in kai.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"

namespace kai::scaleadjuster {

// KAI's labels linking a scaling pod to the fractional pod it stands for.
inline constexpr std::string_view kSharedGpuPodName = "shared-gpu-pod-name";
inline constexpr std::string_view kSharedGpuPodNamespace = "shared-gpu-pod-namespace";
inline constexpr std::string_view kScalingPodContainer = "scaling-pod";

struct PodCondition {
  std::string status, reason;
  friend bool operator==(const PodCondition&, const PodCondition&) = default;
};

struct PodFacts {
  std::string ns, name;
  std::string scheduler_name = "default-scheduler";
  std::string node_name;
  std::string phase = "Pending";
  bool terminating = false;  // metadata.deletionTimestamp is set
  Labels labels, annotations;
  std::optional<PodCondition> scheduled;  // status.conditions[type=PodScheduled]
  // The decoded GPU share; `decode_error` (naming the field) when kai's decoder rejected the pod.
  GpuSharingRequest gpu_sharing;
  std::optional<std::string> decode_error;
  // The containers' cpu / memory requests summed (init containers and overhead are not counted,
  // as in KAI); `has_requests`: some container has a requests map at all.
  int64_t cpu_milli = 0, memory_bytes = 0;
  bool has_requests = false;
  // spec.affinity, spec.tolerations, spec.nodeSelector as JSON, copied verbatim ("" = absent).
  std::string affinity_json, tolerations_json, node_selector_json;
  int64_t gpu_request = 0;  // containers[0] requests nvidia.com/gpu (whole devices)

  std::string Key() const { return ns + "/" + name; }
  // gpu-fraction or gpu-memory is set and not empty (KAI's requestFractionalGPU).
  bool AnnotatedFractional() const;
  // PodScheduled is False with reason Unschedulable.
  bool Unschedulable() const;
  bool Finished() const { return phase == "Succeeded" || phase == "Failed"; }
};

// Reads one Pod object. Errors name the pod and the field (a missing name, a bad quantity).
Result<PodFacts> ReadPodFacts(const doc::Node& pod, const std::string& source);

// A subtree of the doc (JSON numbers and strings alike are scalars there) written back as JSON,
// numbers where the Pod schema has integers (`path` is the subtree's field path, sequences as
// "[]", e.g. "tolerations"); "" for an absent or null subtree.
std::string SubtreeJson(const doc::Node& node, const std::string& path);

}  // namespace kai::scaleadjuster
