#include "kai/plugins/scores.h"

#include <cstdint>

namespace kai::plugins {
namespace {

// Resources a node does not offer at all are ignored, as KAI ignores untracked dimensions.
Resources Needed(const SnapPod& pod, const SnapNode& node) {
  Resources need = pod.request;
  if (node.allocatable.pods == 0) need.pods = 0;
  return need;
}

// idle + releasing of one resource, saturating as Resources' sums do.
int64_t FreeSum(int64_t idle, int64_t releasing) {
  int64_t sum;
  if (__builtin_add_overflow(idle, releasing, &sum)) return releasing > 0 ? INT64_MAX : INT64_MIN;
  return sum;
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
  // The common answer without building the sums; the shortage is worked out only on a miss.
  const Resources& r = pod.request;
  const Resources& i = node.idle;
  const Resources& l = node.releasing;
  auto over = [](int64_t need, int64_t idle, int64_t releasing) {
    return need > 0 && need > FreeSum(idle, releasing);
  };
  bool fits = !over(r.milli_gpu, i.milli_gpu, l.milli_gpu) &&
              !over(r.milli_cpu, i.milli_cpu, l.milli_cpu) && !over(r.memory, i.memory, l.memory) &&
              (node.allocatable.pods == 0 || !over(r.pods, i.pods, l.pods));
  for (size_t k = 0; fits && k < r.scalars.size(); ++k) {
    const auto& [id, amount] = r.scalars[k];
    fits = !over(amount, i.Scalar(id), l.Scalar(id));
  }
  if (fits || !shortage) return fits;
  return FitsIn(Needed(pod, node), node.idle + node.releasing, shortage);
}

}  // namespace kai::plugins
