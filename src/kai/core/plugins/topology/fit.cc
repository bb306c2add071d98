#include "kai/core/plugins/topology/fit.h"

#include <algorithm>
#include <limits>
#include <map>

namespace kai::plugins::topology {
namespace {

inline constexpr double kMissingResourceRatio = 1000.0;

bool UsesGpu(const SnapPod& pod) {
  return pod.request.milli_gpu > 0 || pod.obj->gpu_sharing.IsShared();
}

// KAI useRepresentorPodsAccounting: all tasks or none use GPUs, and every extended resource one
// task asks for is asked for by all.
bool Homogeneous(const Snapshot& snap, std::span<const PodId> tasks) {
  size_t gpu_users = 0;
  std::map<ResourceId, size_t> scalar_users;
  for (PodId p : tasks) {
    const SnapPod& pod = snap.pods[p];
    if (UsesGpu(pod)) ++gpu_users;
    for (const auto& [id, amount] : pod.request.scalars) {
      if (amount > 0) ++scalar_users[id];
    }
  }
  if (gpu_users != 0 && gpu_users != tasks.size()) return false;
  return std::all_of(scalar_users.begin(), scalar_users.end(),
                     [&](const auto& e) { return e.second == tasks.size(); });
}

// Copies of `need` that fit in `have` along one resource (need > 0).
int64_t Copies(int64_t have, int64_t need) { return have <= 0 ? 0 : have / need; }

// A task's request as the topology filter sees it: a gpu-fraction pod asks fraction x devices
// GPUs (KAI's ResReqVector); a gpu-memory pod asks none there.
Resources TopologyRequest(const SnapPod& pod) {
  Resources r = pod.request;
  if (pod.share.kind == GpuShareKind::kFraction) {
    r.milli_gpu = pod.share.portion_milli * pod.share.devices;
  }
  return r;
}

// Free GPUs of a node's partly used shared GPUs, as fractions of a device (KAI
// AvailableSharedGPUFractions: float64, kept so that the copies counted match KAI's).
double SharedGpuFractions(const SnapNode& node) {
  if (node.gpu_memory_mib <= 0) return 0;
  double total = 0;
  for (const GpuGroup& g : node.gpu_groups) {
    if (g.used <= 0) continue;
    const int64_t available = node.gpu_memory_mib - g.allocated + g.releasing;
    if (available > 0) {
      total += static_cast<double>(available) / static_cast<double>(node.gpu_memory_mib);
    }
  }
  return total;
}

// Copies of a fractional GPU request a node holds along the GPU dimension: its free whole GPUs
// plus the free fractions of its shared ones, over the fraction (KAI's float division).
int64_t FractionalGpuCopies(const SnapNode& node, int64_t free_milli_gpu, int64_t need_milli) {
  const double free =
      static_cast<double>(free_milli_gpu) / kMilliPerUnit + SharedGpuFractions(node);
  const double need = static_cast<double>(need_milli) / kMilliPerUnit;
  return free < need ? 0 : static_cast<int64_t>(free / need);
}

}  // namespace

Demand DemandOf(const Snapshot& snap, std::span<const PodId> tasks) {
  Demand d;
  for (PodId p : tasks) {
    const Resources r = TopologyRequest(snap.pods[p]);
    d.total += r;
    d.largest = d.pods == 0 ? r : Max(d.largest, r);
    ++d.pods;
  }
  d.count_pods = Homogeneous(snap, tasks);
  return d;
}

int64_t NodeAccommodation(const Demand& demand, const SnapNode& node) {
  const Resources& one = demand.largest;
  if (one.IsBestEffort() && one.pods <= 1) return demand.pods;
  Resources need = one;
  if (node.allocatable.pods == 0) need.pods = 0;  // a node without a pod count limits nothing
  const Resources free = node.idle + node.releasing;
  const bool fractional = need.milli_gpu > 0 && need.milli_gpu < kMilliPerUnit;
  int64_t copies = std::numeric_limits<int64_t>::max();
  if (fractional) {
    copies = FractionalGpuCopies(node, free.milli_gpu, need.milli_gpu);
    need.milli_gpu = 0;  // counted above
  }
  if (copies == 0 || !FitsIn(need, free)) return 0;
  for (CoreResource r :
       {CoreResource::kCpu, CoreResource::kMemory, CoreResource::kGpu, CoreResource::kPods}) {
    if (need.Get(r) > 0) copies = std::min(copies, Copies(free.Get(r), need.Get(r)));
  }
  for (const auto& [id, amount] : need.scalars) {
    if (amount > 0) copies = std::min(copies, Copies(free.Scalar(id), amount));
  }
  return copies == std::numeric_limits<int64_t>::max() ? demand.pods : copies;
}

double DominantRatio(const Resources& request, const Resources& free) {
  double ratio = 0;
  auto consider = [&](int64_t want, int64_t have) {
    if (want <= 0) return;
    const double r =
        have <= 0 ? kMissingResourceRatio : static_cast<double>(want) / static_cast<double>(have);
    ratio = std::max(ratio, r);
  };
  consider(request.milli_cpu, free.milli_cpu);
  consider(request.memory, free.memory);
  consider(request.milli_gpu, free.milli_gpu);
  for (const auto& [id, amount] : request.scalars) consider(amount, free.Scalar(id));
  return ratio;
}

Evaluator::Evaluator(const Tree& tree, const Snapshot& snap, const Demand& demand, DomainId scope)
    : tree_(tree), snap_(snap), demand_(demand), caps_(tree.domains.size()) {
  Sum(scope);
}

void Evaluator::Sum(DomainId d) {
  DomainCapacity& cap = caps_[d];
  const Domain& dom = tree_.domains[d];
  if (demand_.count_pods) cap.fit_pods = 0;
  if (dom.children.empty()) {
    for (NodeId n : dom.nodes) {
      const SnapNode& node = snap_.nodes[n];
      cap.free += node.idle;
      cap.free += node.releasing;
      if (demand_.count_pods) cap.fit_pods += NodeAccommodation(demand_, node);
    }
    return;
  }
  for (DomainId c : dom.children) {
    Sum(c);
    cap.free += caps_[c].free;
    if (demand_.count_pods) cap.fit_pods += caps_[c].fit_pods;
  }
}

bool Evaluator::Fits(DomainId d) const {
  if (caps_[d].fit_pods >= 0) return caps_[d].fit_pods >= demand_.pods;
  return Ratio(d) <= 1.0;
}

void SortForPacking(Tree& tree, const Evaluator& eval, DomainId scope, int max_level) {
  std::vector<DomainId>& children = tree.domains[scope].children;
  std::vector<std::pair<double, DomainId>> keyed;
  keyed.reserve(children.size());
  for (DomainId c : children) keyed.emplace_back(eval.Ratio(c), c);
  std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return tree.domains[a.second].id < tree.domains[b.second].id;
  });
  for (size_t i = 0; i < keyed.size(); ++i) children[i] = keyed[i].second;
  if (tree.domains[scope].level == max_level) return;
  for (DomainId c : tree.domains[scope].children) SortForPacking(tree, eval, c, max_level);
}

}  // namespace kai::plugins::topology
