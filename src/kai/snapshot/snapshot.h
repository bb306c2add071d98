#pragma once
// The dense per-cycle view of the cluster that a scheduling session works on. Objects are
// addressed by dense integer ids; the session mutates node accounting and pod placement in place
// through Statements (framework/statement.h) which keep an undo log.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kai/model/cluster.h"
#include "kai/resource/resources.h"

namespace kai {

using NodeId = int32_t;
using PodId = int32_t;
using JobId = int32_t;
using QueueId = int32_t;
inline constexpr int32_t kNone = -1;

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
bool IsAllocated(PodStatus s);        // Allocated, Binding, Bound, Running (holds resources now)
bool IsActiveAllocated(PodStatus s);  // Allocated, Pipelined, Binding, Bound, Running
bool IsActiveUsed(PodStatus s);       // ActiveAllocated + Releasing, StuckInReleasing
bool IsAlive(PodStatus s);            // ActiveAllocated + Pending + Gated

struct SnapNode {
  const NodeObject* obj = nullptr;
  std::string_view name;
  Resources allocatable;
  Resources idle;
  Resources releasing;
  Resources used;
  int64_t gpu_memory_mib = 100;
  // Empty when pods may be placed; else why not (NotReady, Unschedulable, MemoryPressure...).
  std::string unusable_reason;
  std::vector<PodId> pods;  // active-used pods placed on the node
};

struct SnapPod {
  const PodObject* obj = nullptr;
  std::string_view ns, name, uid;
  JobId job = kNone;
  NodeId node = kNone;
  PodStatus status = PodStatus::kPending;
  Resources request;
  std::optional<int64_t> task_priority;  // kai.scheduler/task-priority label
  bool task_priority_invalid = false;
  int role_rank = 2;  // 0: kubeflow master/launcher, 1: ray head, 2: others
  UnixSeconds creation = 0;
  std::vector<std::string> gpu_groups;
  bool kai_scheduled = false;  // scheduled by kai (else a foreign pod occupying its node)
  bool virtually_evicted = false;
  bool kai_utility = false;  // GPU reservation pods of kai's binder (never foreign load)  //
                             // evicted by an uncommitted Statement (a simulation)
};

struct SnapJob {
  const PodGroupObject* obj = nullptr;
  std::string_view ns, name, uid;
  QueueId queue = kNone;
  int priority = 0;
  bool preemptible = true;
  int min_member = 1;
  UnixSeconds creation = 0;
  std::vector<PodId> pods;
  std::optional<UnixSeconds> last_start;
  std::optional<UnixSeconds> stale_since;  // kai.scheduler/stale-podgroup-timestamp
  int active_allocated = 0;  // pods in an active-allocated status (kept live by the session)
  int MinAvailable() const { return min_member; }
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
  const QueueQuota& Quota(CoreResource r) const;
};

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
  std::vector<const TopologyObject*> topologies;

  // Allocatable resources of usable nodes.
  Resources TotalCapacity() const;
  // What fair share divides: TotalCapacity less what pods of other schedulers hold there.
  // Set by the proportion plugin when the session opens.
  Resources fair_share_capacity;
};

// Builds the snapshot; `state` must outlive it (names are views into it).
Snapshot BuildSnapshot(const ClusterState& state, UnixSeconds now);

// Node accounting for a pod in `status` on `node` (KAI's node_info add/remove task).
void AddPodToNode(SnapNode& node, const Resources& request, PodStatus status);
void RemovePodFromNode(SnapNode& node, const Resources& request, PodStatus status);
// True when the pod asks for neither GPUs (whole, fractional or MIG) nor anything but CPU/memory.
bool IsCpuOnly(const SnapPod& pod);
bool IsGpuNode(const SnapNode& node);

}  // namespace kai
