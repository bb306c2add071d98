#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

// Resources a node does not offer at all are ignored, as KAI ignores untracked dimensions.
Resources Needed(const SnapPod& pod, const SnapNode& node) {
  Resources need = pod.request;
  if (node.allocatable.pods == 0) need.pods = 0;
  return need;
}

}  // namespace

bool FitsIdle(const SnapPod& pod, const SnapNode& node) {
  if (pod.request.IsBestEffort() && !pod.obj->gpu_sharing.IsShared()) return true;
  const Resources& r = pod.request;
  const Resources& h = node.idle;
  if (r.milli_gpu > 0 && r.milli_gpu > h.milli_gpu) return false;
  if (r.milli_cpu > 0 && r.milli_cpu > h.milli_cpu) return false;
  if (r.memory > 0 && r.memory > h.memory) return false;
  if (node.allocatable.pods != 0 && r.pods > 0 && r.pods > h.pods) return false;
  for (const auto& [id, amount] : r.scalars) {
    if (amount > 0 && amount > h.Scalar(id)) return false;
  }
  return true;
}

bool FitsIdleOrReleasing(const SnapPod& pod, const SnapNode& node, Shortage* shortage) {
  return FitsIn(Needed(pod, node), node.idle + node.releasing, shortage);
}

}  // namespace kai::plugins
