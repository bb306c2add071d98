#pragma once
// The changes `kai explain` proposes for a pending workload (or that would have protected an
// evicted one): typed, applicable to a world of Kubernetes objects, and ordered by size.
#include <cstdint>
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"
#include "kai/core/util/time.h"

namespace kai {

enum class ChangeKind : uint8_t {
  kWait,                // let time pass until `at` (a job's min runtime, a preemption delay)
  kRemoveNodeSelector,  // drop `key` from the workload's pods' nodeSelector
  kRemoveNodeAffinity,  // drop the pods' required node affinity
  kTolerateTaints,      // add a toleration of each of `taints` to the pods
  kRelaxTopology,       // move a required topology level up (`to_level` "": no required level)
  kRaiseLimit,          // raise `queue`'s limit of `resource` by `amount`
  kRaiseQuota,          // raise `queue`'s (and its limited ancestors') quota by `amount`
  kFreeGpus,            // remove the pods in `freed` (`amount` milli-GPUs on `nodes`)
  kNonPreemptible,      // (protection) mark the workload's PodGroup non-preemptible
  kMinRuntime,          // (protection) give `queue` a min runtime of `amount` seconds
};

// A job whose pods a kFreeGpus change removes.
struct FreedJob {
  std::string job;                 // namespace/name of its PodGroup ("" for a pod without one)
  std::string queue;               // its queue
  bool over_quota = false;         // its queue holds more GPUs than its quota
  int64_t milli_gpu = 0;           // GPUs of the removed pods
  std::vector<std::string> pods;   // namespace/name of the removed pods
  std::vector<std::string> nodes;  // where they run, sorted
};

// The pods of a workload: those of PodGroup `ns`/`pod_group`, or the single pod `ns`/`pod`.
struct WorkloadRef {
  std::string ns, pod_group, pod;
  std::string Name() const;  // "ns/pod_group" or "ns/pod"
};

// The workload's pods, as indices into `world.pods` (in order).
std::vector<size_t> WorkloadPods(const ClusterState& world, const WorkloadRef& w);

struct Change {
  ChangeKind kind = ChangeKind::kWait;
  WorkloadRef workload;  // the pods that pod-level changes edit
  std::string queue;     // kRaiseLimit, kRaiseQuota, kMinRuntime
  std::string resource;  // kRaiseLimit, kRaiseQuota: cpu, memory or nvidia.com/gpu
  // kRaiseLimit/kRaiseQuota: in kai units (milli-GPU, millicores, bytes); kFreeGpus: milli-GPUs
  // freed; kMinRuntime: seconds.
  int64_t amount = 0;
  std::string key;                   // kRemoveNodeSelector: the label key
  std::vector<Taint> taints;         // kTolerateTaints
  std::string sub_group;             // kRelaxTopology: the constrained SubGroup ("" = the PodGroup)
  std::string from_level, to_level;  // kRelaxTopology
  std::vector<std::string> nodes;    // kFreeGpus, sorted
  std::vector<FreedJob> freed;       // kFreeGpus
  UnixSeconds at = 0;                // kWait
  std::string waiting_for;           // kWait: what ends then ("job ns/j's min runtime")
  std::string disruption;            // kMinRuntime: "preempt" or "reclaim"
};

// The change for people, e.g. "raise queue team-a's nvidia.com/gpu limit by 2 (to 6)"; `world`
// gives the values before the change.
std::string DescribeChange(const Change& c, const ClusterState& world);
const char* ChangeKindName(ChangeKind kind);

// Applies `c` to `world` (and `now` for kWait). Errors name the object the change cannot find.
Status ApplyChange(const Change& c, ClusterState& world, UnixSeconds& now);

// Size order, smallest first (documented in docs/commands/explain.md): by class (waiting; editing
// the workload itself; raising a queue's limit, then its quota; disrupting other workloads), then
// by amount within the class, then by the description as the final tie-breaker.
struct ChangeSize {
  int rank = 0;      // the class
  int64_t size = 0;  // within it: seconds, fields edited, amount, jobs disrupted
  int64_t size2 = 0;
};
ChangeSize SizeOf(const Change& c);

}  // namespace kai
