#include "kai/core/snapshot/gpu_accounting.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "kai/core/model/defaults.h"

namespace kai {
namespace {

// Resources a node does not offer are not tracked on it (KAI zeroes them).
Resources Tracked(const SnapNode& node, const SnapPod& pod) {
  Resources r = pod.request;
  if (pod.kai_utility) r.milli_gpu = 0;  // reservation pods hold the GPU of a shared group
  if (node.allocatable.milli_cpu == 0) r.milli_cpu = 0;
  if (node.allocatable.memory == 0) r.memory = 0;
  if (node.allocatable.milli_gpu == 0) r.milli_gpu = 0;
  if (node.allocatable.pods == 0) r.pods = 0;
  if (!r.scalars.empty()) {
    std::erase_if(r.scalars, [&](const auto& e) { return node.allocatable.Scalar(e.first) == 0; });
  }
  return r;
}

constexpr int64_t kOneGpu = kMilliPerUnit;

int64_t UsedSharedDevices(const SnapNode& n) {
  return std::count_if(n.gpu_groups.begin(), n.gpu_groups.end(),
                       [](const GpuGroup& g) { return g.used > 0; });
}

// KAI re-derives whether the node's idle whole GPUs still count a GPU that a shared group now
// holds: idle + used devices above the device count means they do.
bool IdleCountsSharedGpu(const SnapNode& n) {
  return n.gpu_devices <
         n.idle.milli_gpu / kOneGpu + n.used.milli_gpu / kOneGpu + UsedSharedDevices(n);
}

bool AllReleasing(const GpuGroup& g) { return g.used != 0 && g.releasing == g.used; }

void AddShared(SnapNode& n, GpuGroup& g, int64_t m, PodStatus status) {
  g.used += m;
  if (status == PodStatus::kReleasing) {
    g.releasing += m;
    g.allocated += m;
    g.has_allocated = true;
    if (g.used == g.releasing) {
      if (!g.marked_releasing) {
        n.releasing.milli_gpu += kOneGpu;
        g.marked_releasing = true;
      }
      if (IdleCountsSharedGpu(n)) n.idle.milli_gpu -= kOneGpu;
    }
  } else if (status == PodStatus::kPipelined) {
    g.releasing -= m;
    if (g.used - m == g.releasing + m) n.releasing.milli_gpu -= kOneGpu;
  } else {
    g.allocated += m;
    g.has_allocated = true;
    if (g.used <= m && IdleCountsSharedGpu(n)) n.idle.milli_gpu -= kOneGpu;
    if (g.marked_releasing) {
      n.releasing.milli_gpu -= kOneGpu;
      g.marked_releasing = false;
    }
  }
}

void RemoveShared(SnapNode& n, GpuGroup& g, int64_t m, PodStatus status) {
  g.used -= m;
  if (status == PodStatus::kReleasing) {
    g.releasing -= m;
    g.allocated -= m;
    if (g.used <= 0) {
      if (!IdleCountsSharedGpu(n)) n.idle.milli_gpu += kOneGpu;
      if (g.marked_releasing) {
        n.releasing.milli_gpu -= kOneGpu;
        g.marked_releasing = false;
      }
    }
  } else if (status == PodStatus::kPipelined) {
    g.releasing += m;
    const bool was_all_releasing = g.used + m == g.releasing - m;
    if (was_all_releasing || (g.used == 0 && g.releasing == 0)) n.releasing.milli_gpu += kOneGpu;
  } else {
    g.allocated -= m;
    if (g.used <= 0 && !IdleCountsSharedGpu(n)) n.idle.milli_gpu += kOneGpu;
    if (AllReleasing(g) && !g.marked_releasing) {
      n.releasing.milli_gpu += kOneGpu;
      g.marked_releasing = true;
    }
  }
}

// The group names of a node mostly share a prefix (its name) and differ at the end: length and
// last character first.
bool SameGroupName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || a.back() == b.back()) && a == b;
}

GpuGroup& GroupFor(SnapNode& n, const std::string& name) {
  if (GpuGroup* g = FindGroup(n, name)) return *g;
  // A node's groups are its shared devices (more only while some are being released).
  if (n.gpu_groups.empty()) n.gpu_groups.reserve(std::clamp<size_t>(n.gpu_devices, 1, 16));
  n.gpu_groups.push_back(GpuGroup{.name = name});
  return n.gpu_groups.back();
}

void AddSigned(Resources& to, const Resources& r, int sign) {
  if (sign > 0) {
    to += r;
  } else {
    to -= r;
  }
}

// sign +1 adds the pod's resources to the node, -1 removes them.
void ApplyVector(SnapNode& node, const Resources& r, PodStatus status, int sign) {
  AddSigned(node.used, r, sign);
  if (status == PodStatus::kReleasing) {
    AddSigned(node.releasing, r, sign);
    AddSigned(node.idle, r, -sign);
  } else if (status == PodStatus::kPipelined) {
    AddSigned(node.releasing, r, -sign);
  } else {
    AddSigned(node.idle, r, -sign);
  }
}

// Whether Tracked leaves the pod's request as it is (the common case): then no copy is made.
bool TrackedAsRequested(const SnapNode& node, const SnapPod& pod) {
  const Resources& r = pod.request;
  const Resources& offered = node.allocatable;
  auto kept = [](int64_t need, int64_t on_node) { return need == 0 || on_node != 0; };
  return r.scalars.empty() && (!pod.kai_utility || r.milli_gpu == 0) &&
         kept(r.milli_cpu, offered.milli_cpu) && kept(r.memory, offered.memory) &&
         kept(r.milli_gpu, offered.milli_gpu) && kept(r.pods, offered.pods);
}

// Adds (sign +1) or removes (-1) the resources the node tracks of the pod.
void ApplyTracked(SnapNode& node, const SnapPod& pod, PodStatus status, int sign) {
  if (TrackedAsRequested(node, pod)) {
    ApplyVector(node, pod.request, status, sign);
  } else {
    ApplyVector(node, Tracked(node, pod), status, sign);
  }
}

}  // namespace

int64_t SharedMemoryOn(const SnapNode& node, const GpuShare& share) {
  if (share.kind == GpuShareKind::kMemory) return share.memory_mib;
  // KAI multiplies the float fraction by the device memory and truncates.
  return static_cast<int64_t>(static_cast<double>(share.portion_milli) / kMilliPerUnit *
                              static_cast<double>(node.gpu_memory_mib));
}

namespace {

// KAI's getGpuMemoryFractionalOnNode: ceil(memory / device memory, 0.01) in float64.
double MemoryPortion(const SnapNode& node, int64_t memory_mib) {
  if (node.gpu_memory_mib <= 0) return 0;
  return std::ceil(static_cast<double>(memory_mib) / static_cast<double>(node.gpu_memory_mib) *
                   100) /
         100;
}

// A GPU amount rounded to 0.01, in milli-GPU.
int64_t HundredthsMilli(double portion) {
  return std::llround(portion * 100) * (kMilliPerUnit / 100);
}

}  // namespace

int64_t SharedPortionOn(const SnapNode& node, const GpuShare& share) {
  // KAI: a gpu-memory request is ceil(memory / device memory, 0.01) of a device; GPU amounts are
  // then rounded to 0.01. Both in float64, reproduced here.
  if (share.kind == GpuShareKind::kMemory)
    return HundredthsMilli(MemoryPortion(node, share.memory_mib));
  return HundredthsMilli(static_cast<double>(share.portion_milli) / kMilliPerUnit);
}

GpuAmount AvailableGpus(const SnapNode& node) {
  const int64_t whole = node.idle.milli_gpu + MigMilliGpus(node.idle) + node.releasing.milli_gpu +
                        MigMilliGpus(node.releasing);
  GpuAmount out{whole, whole / kMilliPerUnit * node.gpu_memory_mib};
  for (const GpuGroup& g : node.gpu_groups) {
    if (g.allocated > 0) {  // KAI's getSumOfAvailableSharedGPUs
      out.milli_gpu += kMilliPerUnit - HundredthsMilli(MemoryPortion(node, g.allocated));
      out.memory_mib += node.gpu_memory_mib - g.allocated;
    }
    // KAI's getSumOfReleasingSharedGPUs: a group releasing all it uses counts as a whole
    // releasing GPU already.
    if (g.releasing > 0 && !(g.used > 0 && g.releasing == g.used)) {
      out.milli_gpu += HundredthsMilli(MemoryPortion(node, g.releasing));
      out.memory_mib += g.releasing;
    }
  }
  return out;
}

ReleasingGpus BreakdownReleasing(const Snapshot& snap, const SnapNode& node) {
  ReleasingGpus out;
  out.kai = node.releasing.milli_gpu;
  if (node.allocatable.milli_gpu > 0) {  // else the node tracks no GPUs of its pods (Tracked)
    for (PodId p : node.pods) {
      const SnapPod& pod = snap.pods[p];
      if (pod.status == PodStatus::kReleasing && !pod.kai_utility)
        out.freed += pod.request.milli_gpu;
    }
  }
  for (const GpuGroup& g : node.gpu_groups) out.freed += g.marked_releasing ? kOneGpu : 0;
  out.promised = out.freed - out.kai;
  out.promised_from_idle = std::max<int64_t>(0, out.promised - out.freed);
  return out;
}

GpuAmount DemandedGpus(const SnapPod& pod) {
  switch (pod.share.kind) {
    case GpuShareKind::kFraction:
      return {pod.share.portion_milli * pod.share.devices, 0};
    case GpuShareKind::kMemory:
      return {0, pod.share.memory_mib};
    case GpuShareKind::kNone:
      break;
  }
  return {pod.request.milli_gpu + MigMilliGpus(pod.request), 0};
}

int64_t MigProfileGpus(std::string_view name) {
  if (!name.starts_with(kMigResourcePrefix)) return 0;
  name.remove_prefix(kMigResourcePrefix.size());
  int64_t gpus = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), gpus);
  const std::string_view rest(end, static_cast<size_t>(name.data() + name.size() - end));
  int64_t memory = 0;
  if (ec != std::errc() || gpus <= 0 || !rest.starts_with("g.")) return 0;
  const std::string_view mem = rest.substr(2);
  const auto [mend, mec] = std::from_chars(mem.data(), mem.data() + mem.size(), memory);
  if (mec != std::errc() || std::string_view(mend, mem.data() + mem.size() - mend) != "gb")
    return 0;
  return gpus;
}

int64_t MigMilliGpus(const Resources& r) {
  int64_t milli = 0;
  for (const auto& [id, amount] : r.scalars) {
    milli += MigProfileGpus(ResourceName(id)) * amount * kMilliPerUnit;
  }
  return milli;
}

int64_t RequestedMilliGpu(const SnapPod& pod) {
  if (pod.share.kind == GpuShareKind::kFraction) {
    const double portion = static_cast<double>(pod.share.portion_milli) / kMilliPerUnit;
    return std::llround(portion * 100) * (kMilliPerUnit / 100) * pod.share.devices;
  }
  if (pod.share.kind == GpuShareKind::kMemory) return pod.memory_request_milli_gpu;
  return pod.request.milli_gpu + MigMilliGpus(pod.request);
}

Resources QueueResources(const SnapPod& pod) {
  Resources out;
  out.milli_cpu = pod.request.milli_cpu;
  out.memory = pod.request.memory;
  out.milli_gpu = IsActiveUsed(pod.status) && pod.node != kNone ? pod.accepted_milli_gpu
                                                                : RequestedMilliGpu(pod);
  return out;
}

Resources AcceptedQueueResources(const SnapPod& pod) {
  Resources out;
  out.milli_cpu = pod.request.milli_cpu;
  out.memory = pod.request.memory;
  out.milli_gpu = pod.accepted_milli_gpu;
  return out;
}

int64_t GpuFreedBound(const SnapPod& pod) {
  if (!pod.share.IsShared()) return pod.request.milli_gpu;
  return kMilliPerUnit * static_cast<int64_t>(std::max<size_t>(pod.gpu_groups.size(), 1));
}

void RefreshGroupRoom(SnapNode& node) {
  node.max_group_room = -1;
  for (const GpuGroup& g : node.gpu_groups) {
    node.max_group_room = std::max(node.max_group_room, GroupRoom(node, g));
  }
}

GpuGroup* FindGroup(SnapNode& node, std::string_view name) {
  for (GpuGroup& g : node.gpu_groups) {
    if (SameGroupName(g.name, name)) return &g;
  }
  return nullptr;
}

void AddPodToNode(SnapNode& node, SnapPod& pod, PodStatus status) {
  ApplyTracked(node, pod, status, +1);
  if (pod.legacy_mig) ++node.legacy_mig_pods;
  if (!pod.share.IsShared()) {
    pod.accepted_milli_gpu = pod.request.milli_gpu + MigMilliGpus(pod.request);
    return;
  }
  pod.accepted_milli_gpu = SharedPortionOn(node, pod.share) * pod.share.devices;
  const int64_t m = SharedMemoryOn(node, pod.share);
  for (const std::string& name : pod.gpu_groups) AddShared(node, GroupFor(node, name), m, status);
  RefreshGroupRoom(node);
}

void RemovePodFromNode(SnapNode& node, const SnapPod& pod, PodStatus status) {
  ApplyTracked(node, pod, status, -1);
  if (pod.legacy_mig) --node.legacy_mig_pods;
  if (!pod.share.IsShared()) return;
  const int64_t m = SharedMemoryOn(node, pod.share);
  for (const std::string& name : pod.gpu_groups)
    RemoveShared(node, GroupFor(node, name), m, status);
  RefreshGroupRoom(node);  // a group the pod leaves has more room
}

bool IsCpuOnly(const SnapPod& pod) {
  if (pod.request.milli_gpu > 0 || pod.share.IsShared()) return false;
  for (const auto& [id, amount] : pod.request.scalars) {
    if (ResourceName(id).starts_with(kMigResourcePrefix)) return false;
  }
  return true;
}

bool IsGpuNode(const SnapNode& node) {
  if (node.allocatable.milli_gpu > 0) return true;
  for (const auto& [id, amount] : node.allocatable.scalars) {
    if (ResourceName(id).starts_with(kMigResourcePrefix)) return true;
  }
  return false;
}

}  // namespace kai
