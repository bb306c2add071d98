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
  return FitsIn(Needed(pod, node), node.idle);
}

bool FitsIdleOrReleasing(const SnapPod& pod, const SnapNode& node, Shortage* shortage) {
  return FitsIn(Needed(pod, node), node.idle + node.releasing, shortage);
}

}  // namespace kai::plugins
