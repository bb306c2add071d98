#include "kai/plugins/scores.h"

#include <algorithm>
#include <cstdint>

namespace kai::plugins {
namespace {

// Resources a node does not offer at all are ignored, as KAI ignores untracked dimensions.
Resources Needed(const SnapPod& pod, const SnapNode& node) {
  Resources need = pod.request;
  if (node.allocatable.pods == 0) need.pods = 0;
  return need;
}

// KAI accepts a portion of at most one device, or a whole number of devices (a fraction is always
// below one device; only a gpu-memory request can exceed it).
bool ValidPortion(const SnapNode& node, const GpuShare& share) {
  if (share.kind != GpuShareKind::kMemory) return true;
  const int64_t portion = SharedPortionOn(node, share);
  return portion <= kMilliPerUnit || portion % kMilliPerUnit == 0;
}

int64_t WholeDevices(int64_t milli_gpu) {
  return milli_gpu >= 0 ? milli_gpu / kMilliPerUnit
                        : -((-milli_gpu + kMilliPerUnit - 1) / kMilliPerUnit);
}

// A shared-GPU pod's devices: whole free GPUs (of `free_milli_gpu`) plus live shared groups with
// room take its portion (KAI's isTaskAllocatableOnNonAllocatedResources).
bool SharedDevicesFit(const SnapPod& pod, const SnapNode& node, int64_t free_milli_gpu) {
  const int64_t devices = pod.share.devices;
  const int64_t whole = WholeDevices(free_milli_gpu);
  if (whole >= devices) return ValidPortion(node, pod.share);
  return ValidPortion(node, pod.share) && whole + CountFittingGroups(node, pod, devices) >= devices;
}

Shortage SharedShortage(const SnapPod& pod, const SnapNode& node, int64_t free_milli_gpu) {
  return Shortage{.is_core = true,
                  .core = CoreResource::kGpu,
                  .need = SharedPortionOn(node, pod.share) * pod.share.devices,
                  .have = std::max<int64_t>(WholeDevices(free_milli_gpu), 0) * kMilliPerUnit};
}

// idle + releasing of one resource, saturating as Resources' sums do.
int64_t FreeSum(int64_t idle, int64_t releasing) {
  int64_t sum;
  if (__builtin_add_overflow(idle, releasing, &sum)) return releasing > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

}  // namespace

int64_t CountFittingGroups(const SnapNode& node, const SnapPod& pod, int64_t cap) {
  const int64_t memory = SharedMemoryOn(node, pod.share);
  if (!AnyGroupFits(node, memory)) return 0;
  if (cap == 1) return 1;
  int64_t n = 0;
  for (const GpuGroup& g : node.gpu_groups) {
    if (GroupFits(node, g, memory) && ++n >= cap) break;
  }
  return n;
}

bool FitsIdle(const SnapPod& pod, const SnapNode& node) {
  if (pod.request.IsBestEffort() && !pod.share.IsShared()) return true;
  const Resources& r = pod.request;
  const Resources& h = node.idle;
  if (r.milli_gpu > 0 && r.milli_gpu > h.milli_gpu) return false;
  if (r.milli_cpu > 0 && r.milli_cpu > h.milli_cpu) return false;
  if (r.memory > 0 && r.memory > h.memory) return false;
  if (node.allocatable.pods != 0 && r.pods > 0 && r.pods > h.pods) return false;
  for (const auto& [id, amount] : r.scalars) {
    if (amount > 0 && amount > h.Scalar(id)) return false;
  }
  return !pod.share.IsShared() || SharedDevicesFit(pod, node, h.milli_gpu);
}

bool FitsIdleOrReleasingFull(const SnapPod& pod, const SnapNode& node, Shortage* shortage) {
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
  if (fits && pod.share.IsShared()) {
    const int64_t free_gpu = FreeSum(i.milli_gpu, l.milli_gpu);
    if (SharedDevicesFit(pod, node, free_gpu)) return true;
    if (shortage) *shortage = SharedShortage(pod, node, free_gpu);
    return false;
  }
  if (fits || !shortage) return fits;
  return FitsIn(Needed(pod, node), node.idle + node.releasing, shortage);
}

}  // namespace kai::plugins
