#pragma once
// Whether a pod fits a node, and on which GPUs (KAI's node_info IsTaskAllocatable* and
// FittingGPUs): the fit arithmetic every placement path uses, on the node's accounting
// (snapshot/gpu_accounting.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/resource/resources.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/snapshot.h"
#include "kai/core/util/function_ref.h"

namespace kai {

// Fits on the node's idle resources alone (best-effort pods always fit).
bool FitsIdle(const SnapPod& pod, const SnapNode& node);
// Whether the pod's request fits the node's allocatable resources with nothing else on it (a
// fraction needs one GPU per device); false: the pod never fits this node, however the load
// changes.
bool FitsEmptyNode(const SnapPod& pod, const SnapNode& node);
// Fits on idle plus releasing resources; a shared-GPU pod also needs devices for its portion.
bool FitsIdleOrReleasingFull(const SnapPod& pod, const SnapNode& node, Shortage* shortage);
inline bool FitsIdleOrReleasing(const SnapPod& pod, const SnapNode& node,
                                Shortage* shortage = nullptr) {
  const Resources& r = pod.request;
  if (shortage || !r.scalars.empty() || pod.share.IsShared()) {
    return FitsIdleOrReleasingFull(pod, node, shortage);
  }
  // The common case inline: core resources only, no shortage wanted. idle + releasing saturates
  // as Resources' sums do.
  auto over = [](int64_t need, int64_t idle, int64_t releasing) {
    int64_t have;
    if (__builtin_add_overflow(idle, releasing, &have))
      have = releasing > 0 ? INT64_MAX : INT64_MIN;
    return need > 0 && need > have;
  };
  const Resources& i = node.idle;
  const Resources& l = node.releasing;
  return !over(r.milli_gpu, i.milli_gpu, l.milli_gpu) &&
         !over(r.milli_cpu, i.milli_cpu, l.milli_cpu) && !over(r.memory, i.memory, l.memory) &&
         (node.allocatable.pods == 0 || !over(r.pods, i.pods, l.pods));
}
// Live shared GPU groups on the node with room for the pod's portion, counted up to `cap`.
int64_t CountFittingGroups(const SnapNode& node, const SnapPod& pod, int64_t cap);
// Whether the pod could join a live shared GPU of the node, as KAI's gpusharingorder asks it of
// every pod: a shared pod its portion, a whole-GPU pod a full device (never fits a live group: its
// releasing memory never exceeds its allocated memory), a pod without GPUs nothing (fits any live
// group).
bool CanJoinSharedGpu(const SnapPod& pod, const SnapNode& node);

// The GPUs of a node chosen for a pod that shares GPUs (KAI's FittingGPUs and
// GetNodePreferableGpuForSharing): live shared groups with room and whole free GPUs, ordered by
// `score` (the session's GPU order: gpupack prefers the fullest shared GPU, gpuspread a whole
// one), the first `devices` of them taken. A whole GPU becomes a new group.
struct GpuChoice {
  std::vector<std::string> groups;
  bool releasing = false;  // some chosen GPU is still being freed: the pod must be pipelined
  bool new_group = false;  // a whole GPU becomes a shared group (needs a reservation pod)
};
// Scores one GPU of the node for the pod: a live shared group, or (nullptr) a whole free GPU that
// would become a new group; higher GPUs are offered first.
using GpuScoreFn = FunctionRef<double(const GpuGroup*)>;
// Empty when the node cannot offer the pod's devices.
std::optional<GpuChoice> ChooseSharedGpus(const SnapPod& pod, const SnapNode& node,
                                          bool pipeline_only, GpuScoreFn score);

}  // namespace kai
