#include "kai/core/snapshot/fit.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace kai {
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

bool FitsEmptyNode(const SnapPod& pod, const SnapNode& node) {
  Resources need = pod.request;
  if (pod.share.IsShared())
    need.milli_gpu = std::max<int64_t>(1, pod.share.devices) * kMilliPerUnit;
  if (node.allocatable.pods == 0) need.pods = 0;  // no pod count on the node: none to exceed
  return FitsIn(need, node.allocatable);
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

namespace {

// Memory a pod would take on a shared GPU for CanJoinSharedGpu.
int64_t JoinMemory(const SnapNode& node, const SnapPod& pod) {
  if (pod.share.IsShared()) return SharedMemoryOn(node, pod.share);
  return pod.request.milli_gpu > 0 ? node.gpu_memory_mib : 0;
}

}  // namespace

bool CanJoinSharedGpu(const SnapPod& pod, const SnapNode& node) {
  return AnyGroupFits(node, JoinMemory(node, pod));
}

namespace {

// A GPU offered to the pod: a live shared group, or (group == nullptr) `whole` free GPUs, all
// alike, that would each become a new group.
struct Candidate {
  double score;
  const GpuGroup* group;
  int64_t whole = 0;
};

// Whole GPUs offered for sharing: KAI truncates idle and releasing counts separately.
int64_t WholeGpusOffered(const SnapNode& node) {
  return std::max<int64_t>(node.idle.milli_gpu / kMilliPerUnit, 0) +
         std::max<int64_t>(node.releasing.milli_gpu / kMilliPerUnit, 0);
}

// Higher score first; on equal scores shared groups before whole GPUs, then by group name (KAI
// leaves equal scores in map order; kai makes the order total).
bool Before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if ((a.group == nullptr) != (b.group == nullptr)) return a.group != nullptr;
  if (a.group && b.group) return a.group->name < b.group->name;
  return false;
}

// The GPUs of the node that can take `memory` more, in offer order (a stable sort by Before: a
// node has a few GPUs, so insertion into a reused buffer beats allocating). The whole GPUs are one
// entry: alike, they would sort next to each other.
const std::vector<Candidate>& FittingGpus(const SnapNode& node, int64_t memory, GpuScoreFn score) {
  static thread_local std::vector<Candidate> out;
  out.clear();
  auto insert = [](const Candidate& c) {
    size_t at = out.size();
    while (at > 0 && Before(c, out[at - 1])) --at;
    out.push_back(c);
    std::rotate(out.begin() + static_cast<std::ptrdiff_t>(at), out.end() - 1, out.end());
  };
  if (AnyGroupFits(node, memory)) {
    for (const GpuGroup& g : node.gpu_groups) {
      if (GroupFits(node, g, memory)) insert({score(&g), &g});
    }
  }
  if (const int64_t whole = WholeGpusOffered(node); whole > 0) {
    insert({score(nullptr), nullptr, whole});
  }
  return out;
}

// Devices the candidates offer together.
int64_t DevicesOffered(const std::vector<Candidate>& candidates) {
  int64_t n = 0;
  for (const Candidate& c : candidates) n += c.group ? 1 : c.whole;
  return n;
}

// k when `name` is "<prefix><k>" with k written as std::to_string writes it and below `limit`.
// The digits are read first: names of one node share the prefix and differ at the end.
std::optional<size_t> GroupNumber(std::string_view name, std::string_view prefix, size_t limit) {
  if (name.size() <= prefix.size() || name.size() - prefix.size() > 9) return std::nullopt;
  const std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  size_t k = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    k = k * 10 + static_cast<size_t>(c - '0');
  }
  if (k >= limit || !name.starts_with(prefix)) return std::nullopt;
  return k;
}

// A deterministic name for a new group on the node: "<node>-gpu<k>", the first k that neither a
// group in use on the node nor an already chosen one is named by. At most groups + chosen names
// are taken, so that k is at most their count.
std::string NewGroupName(const SnapNode& node, const std::vector<std::string>& chosen) {
  std::string name = std::string(node.name) + "-gpu";
  const size_t limit = node.gpu_groups.size() + chosen.size() + 1;
  static thread_local std::vector<char> taken;
  taken.assign(limit, 0);
  auto mark = [&](std::string_view used) {
    if (auto k = GroupNumber(used, name, limit)) taken[*k] = 1;
  };
  for (const GpuGroup& g : node.gpu_groups) {
    if (g.used != 0) mark(g.name);
  }
  for (const std::string& c : chosen) mark(c);
  const size_t k = static_cast<size_t>(std::find(taken.begin(), taken.end(), 0) - taken.begin());
  char digits[20];
  char* end = std::to_chars(digits, digits + sizeof(digits), k).ptr;
  name.append(digits, end);  // as std::to_string(k) writes it, without a temporary string
  return name;
}

// The group can take the pod from idle memory alone (not only from memory being freed).
bool IdleRoom(const SnapNode& node, const GpuGroup& g, int64_t memory) {
  return g.has_allocated && node.gpu_memory_mib - g.allocated - memory >= 0;
}

}  // namespace

std::optional<GpuChoice> ChooseSharedGpus(const SnapPod& p, const SnapNode& node,
                                          bool pipeline_only, GpuScoreFn score) {
  const int64_t memory = SharedMemoryOn(node, p.share);
  const std::vector<Candidate>& offered = FittingGpus(node, memory, score);
  if (DevicesOffered(offered) < p.share.devices) return std::nullopt;
  const bool fits_idle = FitsIdle(p, node);
  GpuChoice choice;
  // At most the devices offered (checked above); a reserved vector also appends faster.
  choice.groups.reserve(static_cast<size_t>(std::max<int64_t>(p.share.devices, 0)));
  for (const Candidate& c : offered) {
    for (int64_t i = 0; i < std::max<int64_t>(c.whole, 1); ++i) {
      if (c.group == nullptr) {
        choice.groups.push_back(NewGroupName(node, choice.groups));
        choice.new_group = true;
        choice.releasing = choice.releasing || pipeline_only || !fits_idle;
      } else {
        choice.groups.push_back(c.group->name);
        choice.releasing = choice.releasing || !IdleRoom(node, *c.group, memory) || !fits_idle;
      }
      if (static_cast<int64_t>(choice.groups.size()) == p.share.devices) return choice;
    }
  }
  return std::nullopt;
}

}  // namespace kai
