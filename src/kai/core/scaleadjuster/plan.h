#pragma once
// KAI's node scale adjuster (pkg/nodescaleadjuster/), as a pure plan: from the pods seen and the
// scaling pods that exist, which scaling pods to delete, which to create and which still need
// their PodScheduled=False status. Cluster autoscalers do not count GPU fractions, so for
// unschedulable fractional pods KAI creates placeholder pods asking whole GPUs in their place
// (named <namespace>-<name> of the pod they stand for, in the scaling namespace); one scaling pod
// stands for as many fractions as fit on its GPUs. A pass that deleted a scaling pod starts a
// cool-down during which none is created (the node it brought may take the remaining fractions).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/scaleadjuster/pod_facts.h"
#include "kai/core/util/time.h"

namespace kai::scaleadjuster {

struct AdjusterConfig {
  std::string ns = "kai-scale-adjust";  // where scaling pods live (--scale-adjust-namespace)
  std::string image = "registry/local/kai-scheduler/scalingpodscaling-pod";  // KAI's default
  std::string app_label = "scaling-pod";        // their app label (--scaling-pod-app-label)
  std::string service_account = "scaling-pod";  // --scaling-pod-service-account
  std::string scheduler_name = "kai-scheduler";
  int64_t memory_fraction_centi = 10;  // a gpu-memory pod counts as this share (0.1)
  int64_t cool_down_seconds = 60;
};

struct ScalingPodCreate {
  std::string name;     // <namespace>-<name> of the fractional pod
  std::string for_pod;  // namespace/name
  int64_t devices = 0;
  std::string body;  // the Pod as JSON
};

struct ScalingPodDelete {
  std::string name;
  std::string why;
};

struct AdjustPlan {
  std::vector<ScalingPodDelete> deletes;
  std::vector<ScalingPodCreate> creates;
  std::vector<std::string> status_patches;  // scaling pods without a PodScheduled condition
  std::vector<std::string> log;             // pods skipped, creations held back, with the reason
  bool in_cool_down = false;
  std::optional<UnixSeconds> cool_down_ends;  // when creations may resume
};

// `pods`: the pods scaling pods may stand for (at least the unbound pods of the scheduler);
// `scaling`: the scaling pods in the scaling namespace (labelled app=<app_label>).
// `last_scale_down`: when a scaling pod was last deleted (nullopt: not since the start).
AdjustPlan PlanAdjustment(const AdjusterConfig& config, const std::vector<PodFacts>& pods,
                          const std::vector<PodFacts>& scaling, UnixSeconds now,
                          std::optional<UnixSeconds> last_scale_down);

// The scaling pod's name for a fractional pod (KAI: "<namespace>-<name>").
std::string ScalingPodName(const std::string& ns, const std::string& name);

// A scaling pod standing for `pod`: `devices` whole GPUs requested and limited, the containers'
// cpu and memory requests summed, its affinity, tolerations and node selector copied.
std::string ScalingPodJson(const AdjusterConfig& config, const PodFacts& pod, int64_t devices);

// The fractional pods a scaling pod may be created for: the scheduler's, unbound, annotated with
// a GPU share, not finished, PodScheduled=False/Unschedulable; sorted by namespace, then name.
std::vector<const PodFacts*> UnschedulableFractionalPods(const AdjusterConfig& config,
                                                         const std::vector<PodFacts>& pods);

// Why a scaling pod is no longer needed ("" while it is): it finished, or the pod it stands for
// is gone, bound, finished or no longer unschedulable (a pod without a PodScheduled condition
// keeps its scaling pod, as in KAI).
std::string UnneededBecause(const PodFacts& scaling, const std::vector<PodFacts>& pods);

}  // namespace kai::scaleadjuster
