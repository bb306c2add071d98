#pragma once
// The dense per-cycle view of the cluster that a scheduling session works on. Objects are
// addressed by dense integer ids; the session mutates node accounting and pod placement in place
// through Statements (framework/statement.h) which keep an undo log.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/resource/resources.h"
#include "kai/core/snapshot/numa.h"

namespace kai {

using NodeId = int32_t;
using PodId = int32_t;
using JobId = int32_t;
using QueueId = int32_t;
// Position of a SubGroup in its job's SnapJob::sub_groups; 0 is the root.
using SubGroupIndex = int32_t;
inline constexpr int32_t kNone = -1;
inline constexpr SubGroupIndex kRootSubGroup = 0;

enum class PodStatus : uint8_t {
  kPending,
  kGated,
  kAllocated,
  kPipelined,
  kBinding,
  kBound,
  kRunning,
  kReleasing,
  kStuckInReleasing,
  kSucceeded,
  kFailed,
};
std::string_view PodStatusName(PodStatus s);
// KAI's status groups (pod_status.go).
// Allocated, Binding, Bound, Running (holds resources now).
inline bool IsAllocated(PodStatus s) {
  return s == PodStatus::kAllocated || s == PodStatus::kBinding || s == PodStatus::kBound ||
         s == PodStatus::kRunning;
}
// Allocated, Pipelined, Binding, Bound, Running.
inline bool IsActiveAllocated(PodStatus s) { return IsAllocated(s) || s == PodStatus::kPipelined; }
// ActiveAllocated + Releasing, StuckInReleasing.
inline bool IsActiveUsed(PodStatus s) {
  return IsActiveAllocated(s) || s == PodStatus::kReleasing || s == PodStatus::kStuckInReleasing;
}
// ActiveAllocated + Pending + Gated.
inline bool IsAlive(PodStatus s) {
  return IsActiveAllocated(s) || s == PodStatus::kPending || s == PodStatus::kGated;
}

// One shared GPU on a node (KAI's GPU group): memory in MiB of the node's per-GPU memory, so that
// fractions add exactly (0.3 + 0.7 of a 100 MiB device is 30 + 70). `used` counts every pod on
// it, `releasing` those being released (less those pipelined onto it), `allocated` those holding
// it outright (incl. releasing ones).
struct GpuGroup {
  std::string name;
  int64_t used = 0;
  int64_t releasing = 0;
  int64_t allocated = 0;
  bool has_allocated = false;     // a pod ever held it outright (else it is only pipelined)
  bool marked_releasing = false;  // counted as one releasing whole GPU on the node
};

struct SnapNode {
  const NodeObject* obj = nullptr;
  std::string_view name;
  Resources allocatable;
  Resources idle;
  Resources releasing;
  Resources used;
  int64_t gpu_memory_mib = 100;    // per device, floored to a multiple of 100 (KAI)
  bool gpu_memory_synced = false;  // the nvidia.com/gpu.memory label is present
  int64_t gpu_devices = 0;         // nvidia.com/gpu.count label, else allocatable GPUs
  bool mig_enabled = false;
  MigStrategy mig_strategy = MigStrategy::kNone;
  int legacy_mig_pods = 0;           // active pods asking MIG through an annotation
  std::vector<GpuGroup> gpu_groups;  // shared GPUs, in order of first use
  // The most memory (MiB) a live shared group can still take (-1 when none can take any), kept
  // with the groups, so that "does some shared GPU fit this pod" costs O(1) per node.
  int64_t max_group_room = -1;
  // Empty when pods may be placed; else why not (NotReady, Unschedulable, MemoryPressure...).
  std::string unusable_reason;
  std::vector<PodId> pods;  // active-used pods placed on the node
};

// How a pod asks for a GPU it may share (KAI's fraction / gpu-memory requests).
enum class GpuShareKind : uint8_t { kNone, kFraction, kMemory };
struct GpuShare {
  GpuShareKind kind = GpuShareKind::kNone;
  int64_t portion_milli = 0;  // kFraction: the fraction of one device, in milli-GPU
  int64_t memory_mib = 0;     // kMemory
  int64_t devices = 1;        // gpu-fraction-num-devices
  bool IsShared() const { return kind != GpuShareKind::kNone; }
};

struct SnapPod {
  const PodObject* obj = nullptr;
  std::string_view ns, name, uid;
  JobId job = kNone;
  NodeId node = kNone;
  NodeId nominated = kNone;  // status.nominatedNodeName, when it names a node of the snapshot
  // Read from the pod's object when the snapshot is built, so that checking a node for the pod
  // need not fetch the object (a cache miss per task on the placement path).
  bool selects_nodes = false;          // a nodeSelector or required node affinity
  bool requires_pod_affinity = false;  // required pod affinity or anti-affinity terms
  bool prefers_pod_affinity = false;   // preferred pod affinity or anti-affinity terms
  bool uses_host_ports = false;        // a container port with a hostPort
  bool uses_claims = false;            // a persistentVolumeClaim or ephemeral volume
  PodStatus status = PodStatus::kPending;
  Resources request;
  std::optional<int64_t> task_priority;  // kai.scheduler/task-priority label
  bool task_priority_invalid = false;
  int role_rank = 2;  // 0: kubeflow master/launcher, 1: ray head, 2: others
  UnixSeconds creation = 0;
  std::vector<std::string> gpu_groups;
  GpuShare share;
  bool legacy_mig = false;  // MIG asked through an annotation: KAI never schedules these
  // GPUs the pod counts for in queue accounting while it holds resources (KAI's accepted
  // vector: a shared pod's portion on its node, rounded to 0.01 GPU, times its devices). Set when
  // the pod is placed; kept afterwards so that removing it subtracts what adding it added.
  int64_t accepted_milli_gpu = 0;
  // GPUs a pending gpu-memory pod is charged in queue order and fair share (memory over the
  // smallest device memory of the cluster) and in capacity checks (over the largest), as KAI.
  int64_t memory_request_milli_gpu = 0;
  int64_t memory_capacity_milli_gpu = 0;
  bool kai_scheduled = false;  // scheduled by kai (else a foreign pod occupying its node)
  bool virtually_evicted = false;
  bool kai_utility = false;  // GPU reservation pods of kai's binder (never foreign load)
  // Labelled kai.scheduler/background=true (actions/common/background.h): in no job and no queue;
  // its place on a node counts as free, and it is evicted when a workload takes that place.
  bool background = false;
  // The PodSet of its job the pod belongs to (kai.scheduler/subgroup-name, else "default").
  SubGroupIndex sub_group = kNone;
  // In its PodSet's protected floor (semi-preemptible jobs, snapshot/semi_preemptible.h).
  bool in_floor = false;
};

// One node of a job's SubGroup tree (KAI's SubGroupSet / PodSet, §4.1). A SubGroupSet has
// members (children) and is satisfied when min_sub_group of them are (all when unset); a PodSet
// holds pods and is satisfied when min_member of them are active-allocated. A flat PodGroup is a
// root set with one PodSet "default" (min_member = spec.minMember, default 1); with spec.subGroups
// the root's minMember is ignored and a leaf without minMember needs 0 pods.
// A half-open range of indices to iterate (clang 14, used for the fuzz build, cannot compile
// libstdc++ 12's iota_view).
struct IndexRange {
  struct Iter {
    int32_t i;
    int32_t operator*() const { return i; }
    Iter& operator++() {
      ++i;
      return *this;
    }
    bool operator==(const Iter&) const = default;
  };
  int32_t first, last;
  Iter begin() const { return {first}; }
  Iter end() const { return {last}; }
};

struct SnapSubGroup {
  std::string_view name;  // "" for the root
  SubGroupIndex parent = kNone;
  // Members of a SubGroupSet: the job's SubGroups are laid out breadth first, so a set's members
  // are the member_count entries from first_member (none for a PodSet).
  SubGroupIndex first_member = 0;
  int32_t member_count = 0;
  bool pod_set = false;
  int min_member = 0;                                // PodSet: pods required
  std::optional<int> min_sub_group;                  // SubGroupSet: members required (unset = all)
  const TopologyConstraintSpec* topology = nullptr;  // spec.topologyConstraint, if any
  // Pods of a PodSet of a PodGroup with SubGroups; empty for the PodSet of a flat PodGroup, whose
  // pods are the job's (SnapJob::PodsOf serves both).
  std::vector<PodId> set_pods;
  int active_allocated = 0;  // PodSet: pods in an active-allocated status (kept live)
  int floor_pods = 0;        // PodSet of a semi-preemptible job: pods in its floor (kept live)
  // What satisfies this SubGroup: pods for a PodSet, satisfied members for a SubGroupSet.
  int MembersToSatisfy() const {
    return pod_set ? min_member : min_sub_group.value_or(member_count);
  }
  IndexRange Members() const { return {first_member, first_member + member_count}; }
};

struct SnapJob {
  const PodGroupObject* obj = nullptr;
  std::string_view ns, name, uid;
  QueueId queue = kNone;
  int priority = 0;
  // Non-preemptible and semi-preemptible jobs are not `preemptible`; a semi-preemptible one
  // protects only its PodSets' floors (snapshot/semi_preemptible.h).
  bool preemptible = true;
  bool semi_preemptible = false;
  int min_member = 1;  // spec.minMember (1 when unset); the tree below is what gangs use
  UnixSeconds creation = 0;
  std::vector<PodId> pods;               // pods of its PodSets
  std::vector<SnapSubGroup> sub_groups;  // the SubGroup tree; [kRootSubGroup] is the root set
  // Pods naming a SubGroup that is not a PodSet of the PodGroup: KAI leaves them out of the job
  // and never schedules them.
  std::vector<PodId> invalid_sub_group_pods;
  std::optional<UnixSeconds> last_start;
  std::optional<UnixSeconds> stale_since;  // kai.scheduler/stale-podgroup-timestamp
  int active_allocated = 0;     // pods in an active-allocated status (kept live by the session)
  bool has_sub_groups = false;  // spec.subGroups is not empty
  bool HasSubGroups() const { return has_sub_groups; }
  // The pods of one PodSet.
  std::span<const PodId> PodsOf(SubGroupIndex pod_set) const {
    if (!sub_groups[pod_set].pod_set) return {};
    return has_sub_groups ? std::span<const PodId>(sub_groups[pod_set].set_pods)
                          : std::span<const PodId>(pods);
  }
  // Pods the whole gang needs: the sum of its PodSets' minimums.
  int MinAvailable() const;
  // When spec.preemptionDelay ends, counted from the later of its creation and its last eviction;
  // none without a delay.
  std::optional<UnixSeconds> PreemptionDelayEnd() const;
  // The job order's final tie-break: earlier creation first, then UID.
  bool CreatedBefore(const SnapJob& other) const {
    if (creation != other.creation) return creation < other.creation;
    return uid < other.uid;
  }
};

struct QueueQuota {
  int64_t quota = 0, limit = 0, weight_milli = 0;
};

struct SnapQueue {
  const QueueObject* obj = nullptr;
  std::string_view name;
  QueueId parent = kNone;
  std::vector<QueueId> children;
  int priority = 100;
  QueueQuota gpu, cpu, memory;
  UnixSeconds creation = 0;
  // Filled by the proportion plugin (rolled up the tree, kept live during the session).
  Resources fair_share;
  Resources allocated;
  Resources allocated_non_preemptible;
  Resources requested;
  // Time-based fair share usage of cpu, memory, gpu in [0, 1] (0 without a usage store).
  std::array<double, 3> usage{};
  bool IsLeaf() const { return children.empty(); }
  const QueueQuota& Quota(CoreResource r) const {
    switch (r) {
      case CoreResource::kCpu:
        return cpu;
      case CoreResource::kMemory:
        return memory;
      default:
        return gpu;
    }
  }
};

struct DraView;      // snapshot/dra.h
struct StorageView;  // snapshot/storage.h

struct Snapshot {
  UnixSeconds now = 0;
  std::vector<SnapNode> nodes;
  std::vector<SnapPod> pods;
  std::vector<SnapJob> jobs;
  std::vector<SnapQueue> queues;
  std::vector<QueueId> root_queues;
  std::unordered_map<std::string_view, NodeId> node_by_name;
  std::unordered_map<std::string_view, QueueId> queue_by_name;
  std::vector<int32_t> node_name_rank;  // position of each node in name order (tie-breaks)
  std::vector<PodId> background_pods;   // pods with SnapPod::background, in id order
  std::vector<const TopologyObject*> topologies;
  // Dynamic Resource Allocation (snapshot/dra.h); null when the cluster has no DRA objects.
  std::shared_ptr<DraView> dra;
  // PersistentVolumes, claims, StorageClasses, CSINodes (snapshot/storage.h); null when the
  // cluster has none of them.
  std::shared_ptr<const StorageView> storage;
  NumaState numa;  // NUMA zones and placements (snapshot/numa.h); empty without topologies

  // Allocatable resources of usable nodes.
  Resources TotalCapacity() const;
  // What fair share divides: TotalCapacity less what pods of other schedulers hold there.
  // Set by the proportion plugin when the session opens.
  Resources fair_share_capacity;
};

// Builds the snapshot; `state` must outlive it (names are views into it).
Snapshot BuildSnapshot(const ClusterState& state, UnixSeconds now);

}  // namespace kai
