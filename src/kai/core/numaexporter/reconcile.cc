#include "kai/core/numaexporter/reconcile.h"

#include <set>
#include <unordered_map>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"

namespace kai::numaexporter {

std::string PodKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::vector<ObservedPod> ObservePods(const std::vector<PodAllocation>& pods,
                                     const CpuToNuma& cpus) {
  std::vector<ObservedPod> out;
  for (const PodAllocation& pod : pods) {
    const Placement p = ComputePlacement(pod, cpus);
    if (!p.empty()) out.push_back({pod.ns, pod.name, PlacementText(p)});
  }
  return out;
}

std::vector<ObservedPod> PollPatches(const std::vector<ObservedPod>& observed,
                                     const WriteCache& cache) {
  std::vector<ObservedPod> out;
  for (const ObservedPod& pod : observed) {
    const auto it = cache.find(PodKey(pod.ns, pod.name));
    if (it == cache.end() || it->second != pod.value) out.push_back(pod);
  }
  return out;
}

void PruneCache(WriteCache& cache, const std::vector<PodAllocation>& listed) {
  std::set<std::string> keep;
  for (const PodAllocation& pod : listed) keep.insert(PodKey(pod.ns, pod.name));
  std::erase_if(cache, [&](const auto& entry) { return !keep.count(entry.first); });
}

Result<LivePod> ReadLivePod(const doc::Node& item) {
  const doc::Node meta = item["metadata"];
  LivePod pod{std::string(meta["namespace"].Scalar()), std::string(meta["name"].Scalar()), {}};
  if (pod.ns.empty() || pod.name.empty()) {
    return Error{"a pod of the list has no metadata.namespace or metadata.name"};
  }
  const doc::Node value = meta["annotations"][keys::kNumaPlacementObserved];
  if (value.IsScalar()) pod.annotation = std::string(value.Scalar());
  return pod;
}

DriftPlan PlanDrift(const std::vector<ObservedPod>& observed, const std::vector<LivePod>& live) {
  std::unordered_map<std::string, const LivePod*> by_key;
  for (const LivePod& pod : live) by_key.emplace(PodKey(pod.ns, pod.name), &pod);
  DriftPlan plan;
  for (const ObservedPod& pod : observed) {
    const auto it = by_key.find(PodKey(pod.ns, pod.name));
    if (it == by_key.end()) continue;
    const bool same = it->second->annotation && *it->second->annotation == pod.value;
    (same ? plan.in_sync : plan.patches).push_back(pod);
  }
  return plan;
}

std::string AnnotationPatch(const std::string& value) {
  k8s::MetaPatch p;
  p.annotations.emplace_back(std::string(keys::kNumaPlacementObserved), value);
  return k8s::MetadataMergePatch(p);
}

}  // namespace kai::numaexporter
