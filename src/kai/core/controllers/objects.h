#pragma once
// What KAI's PodGroup and Queue controllers read of each object, decoded from the API's JSON
// (or a manifest): only those fields, so a controller watching every pod of a cluster holds
// little per object. Statuses are kept as the text the server holds, which is what a write is
// compared with.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/controllers/quantity.h"
#include "kai/core/k8s/doc.h"

namespace kai::controllers {

using TextList = std::map<std::string, std::string, std::less<>>;

struct PodFacts {
  std::string ns, name;
  std::string pod_group;  // the pod-group-name annotation ("" none)
  std::string phase, node_name;
  bool scheduled = false;  // condition PodScheduled=True
  // The containers' requests summed in order (KAI counts neither init containers nor overhead).
  ResourceList container_requests;
  // The GPU-sharing annotations, as written.
  std::optional<std::string> gpu_fraction, gpu_memory, fraction_devices, received_type;
  friend bool operator==(const PodFacts&, const PodFacts&) = default;
};

struct NodeFacts {
  std::string name;
  // nvidia.com/gpu.memory and the beta.amd.com/gpu.vram* labels: the per-GPU memory.
  TextList gpu_memory_labels;
  friend bool operator==(const NodeFacts&, const NodeFacts&) = default;
};

struct PriorityClassFacts {
  std::string name;
  int value = 0;
  bool global_default = false;
  friend bool operator==(const PriorityClassFacts&, const PriorityClassFacts&) = default;
};

// status.resourcesStatus of a PodGroup.
struct ResourcesStatus {
  TextList requested, allocated, allocated_non_preemptible;
  friend bool operator==(const ResourcesStatus&, const ResourcesStatus&) = default;
};

struct PodGroupFacts {
  std::string ns, name, queue, priority_class_name, preemptibility;
  ResourcesStatus status;
  friend bool operator==(const PodGroupFacts&, const PodGroupFacts&) = default;
};

// The part of a Queue's status KAI's queue controller writes.
struct QueueStatusValue {
  TextList allocated, allocated_non_preemptible, requested;
  std::vector<std::string> child_queues;
  friend bool operator==(const QueueStatusValue&, const QueueStatusValue&) = default;
};

struct QueueFacts {
  std::string name, parent, display_name;
  bool has_resources = false;  // spec.resources is set
  // spec.resources.{gpu,cpu,memory}.quota as KAI's float64 fields (absent: 0).
  double gpu_quota = 0, cpu_quota = 0, memory_quota = 0;
  QueueStatusValue status;
  friend bool operator==(const QueueFacts&, const QueueFacts&) = default;
};

// Each names the object and the field it could not read.
Result<PodFacts> DecodePodFacts(const doc::Node& obj);
Result<NodeFacts> DecodeNodeFacts(const doc::Node& obj);
Result<PriorityClassFacts> DecodePriorityClassFacts(const doc::Node& obj);
Result<PodGroupFacts> DecodePodGroupFacts(const doc::Node& obj);
Result<QueueFacts> DecodeQueueFacts(const doc::Node& obj);

}  // namespace kai::controllers
