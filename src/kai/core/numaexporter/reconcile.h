#pragma once
// What the NUMA placement exporter writes (KAI's pkg/npe exporter): the observed placement of each
// pod of its node, as the kai.scheduler/numa-placement-observed annotation, patched only where it
// changed. Two passes, both level-triggered:
//   - the poll pass (every --poll-interval) trusts a cache of what this process last wrote, so an
//     unchanged placement costs no API call;
//   - the drift pass (every --drift-resync-interval) compares with the pods' live annotations, so
//     an annotation removed or edited by someone else is written again.
// A pod's annotation is never removed: a pod that no longer holds topology-aligned resources keeps
// what was written, as KAI does. Pure: the daemon (daemons/numaexporter) lists and patches.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/numaexporter/placement.h"

namespace kai::numaexporter {

// A pod's annotation value to be: `value` is PlacementText of its placement.
struct ObservedPod {
  std::string ns, name, value;
  friend bool operator==(const ObservedPod&, const ObservedPod&) = default;
};

// "namespace/name" -> the value this process last wrote (or found in place).
using WriteCache = std::map<std::string, std::string>;

std::string PodKey(const std::string& ns, const std::string& name);

// The pods of the pod-resources answer that hold topology-aligned resources, with their values.
std::vector<ObservedPod> ObservePods(const std::vector<PodAllocation>& pods, const CpuToNuma& cpus);

// The poll pass: the observed pods whose value differs from what the cache says was written.
std::vector<ObservedPod> PollPatches(const std::vector<ObservedPod>& observed,
                                     const WriteCache& cache);

// Forgets the pods the pod-resources answer no longer lists (they left the node).
void PruneCache(WriteCache& cache, const std::vector<PodAllocation>& listed);

// A pod of the node as the API server has it.
struct LivePod {
  std::string ns, name;
  std::optional<std::string> annotation;  // kai.scheduler/numa-placement-observed
};

// A pod of an API list (its items[i]); an error names what is missing.
Result<LivePod> ReadLivePod(const doc::Node& item);

// The drift pass: the observed pods whose live annotation differs (`patches`), and those already
// right (`in_sync`, for the cache). Observed pods the API server does not list are left alone.
struct DriftPlan {
  std::vector<ObservedPod> patches, in_sync;
};
DriftPlan PlanDrift(const std::vector<ObservedPod>& observed, const std::vector<LivePod>& live);

// The merge patch that sets the annotation to `value`.
std::string AnnotationPatch(const std::string& value);

}  // namespace kai::numaexporter
