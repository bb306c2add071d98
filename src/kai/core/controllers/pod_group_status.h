#pragma once
// status.resourcesStatus of a PodGroup, as KAI's podgroup controller computes it from the
// PodGroup's pods (those whose pod-group-name annotation names it, in its namespace):
//   requested: Pending and Running pods: their containers' requests, plus gpu-fraction x
//     gpu-fraction-num-devices as nvidia.com/gpu and gpu-memory x that count as run.ai/gpu.memory;
//   allocated: Running pods, and Pending pods already scheduled (PodScheduled=True): their
//     containers' requests, plus, for a pod that received a fraction (received-resource-type
//     Fraction), nvidia.com/gpu of its gpu-fraction, or gpu-memory over its node's GPU memory;
//   allocatedNonPreemptible: allocated when the PodGroup is not preemptible (its preemptibility,
//     else its priority class's value, else the global default's, else 50, below 100); a
//     preemptible PodGroup's is left as it was.
// Succeeded and Failed pods count nowhere.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/controllers/objects.h"

namespace kai::controllers {

struct PodGroupInputs {
  const PodGroupFacts* pod_group = nullptr;
  std::vector<const PodFacts*> pods;                       // the PodGroup's pods, any order
  std::function<const NodeFacts*(std::string_view)> node;  // by name; null when unknown
  const std::vector<PriorityClassFacts>* priority_classes = nullptr;
};

// The status the PodGroup should hold. Errors name the pod and the annotation or node label
// that could not be read (KAI then leaves the status as it is and retries).
Result<ResourcesStatus> ComputePodGroupStatus(const PodGroupInputs& in);

// Whether KAI counts the PodGroup as preemptible (pkg/common/podgroup CalculatePreemptibility).
bool IsPreemptible(const PodGroupFacts& pg, const std::vector<PriorityClassFacts>& classes);

// A node's per-GPU memory in MiB, in nano units (the AMD label is in bytes-like units over 10^6,
// so it can be fractional). Errors: no label, two vendors' labels, a bad value.
Result<KubeQuantity> NodeGpuMemory(const NodeFacts& node);

// The JSON merge patch of the status subresource that turns `held` into `next`: only the lists
// that differ, each with the new values and null for names it no longer has ("{}" when equal).
std::string PodGroupStatusPatch(const ResourcesStatus& held, const ResourcesStatus& next);

}  // namespace kai::controllers
