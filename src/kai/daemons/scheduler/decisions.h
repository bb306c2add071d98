#pragma once
// What one cycle decided, as the writes a live scheduler makes: the difference between the pods'
// statuses when the session opened and when it closed, plus the PodGroups' timers and the stale
// BindRequests to clean. Pure: it reads the session and the world, and writes nothing.
#include <optional>
#include <string>
#include <vector>

#include "kai/core/framework/reasons.h"
#include "kai/core/framework/session.h"
#include "kai/core/model/cluster.h"
#include "kai/core/snapshot/dra.h"

namespace kai::scheduler {

struct ObjectRef {
  std::string ns, name, uid;
};

struct BindDecision {
  ObjectRef pod;
  std::string node;
  std::vector<std::string> gpu_groups;
  std::string received_resource_type;  // Regular, Fraction, MigInstance
  int gpu_count = 0;                   // devices (whole GPUs, or devices of a fraction)
  std::string gpu_portion;             // "%.2f" of a device, as KAI writes it
  std::vector<DraClaimResult> claims;  // spec.resourceClaimAllocations (DRA)
  // spec.extendedResourceClaimAllocation (DRA-backed extended resources)
  std::optional<DraExtendedResult> extended;
  NumaPlacementRecord numa_zones;  // spec.predictedNUMAZones (snapshot/numa.h)
};

struct EvictDecision {
  ObjectRef pod;
  ObjectRef pod_group;
  std::string message;  // the action, the beneficiary and the rule
  std::string action;
  ObjectRef preemptor;  // the beneficiary's PodGroup (empty name when none)
  int gang_size = 0;    // pods of the PodGroup evicted this cycle
};

struct PendingPodDecision {
  ObjectRef pod;
  ObjectRef pod_group;
  std::string message;  // the fit errors, rendered from the structured reasons
  bool mark_unschedulable = true;
};

struct PodGroupDecision {
  ObjectRef pod_group;
  // Timer annotations (RFC 3339) that changed this cycle; "" removes one.
  std::vector<std::pair<std::string, std::string>> annotations;
  // The timers after the cycle and the PodGroup's index in the world the cycle read, so that the
  // scheduler counts the new timers at once (the writes go out in the background).
  std::optional<UnixSeconds> last_start, stale_since;
  size_t world_index = 0;
  // The PodGroup has pending pods: an Unschedulable condition with this message, else cleared.
  std::optional<std::string> unschedulable;
  std::vector<Reason> reasons;  // the typed reasons behind `unschedulable` (the condition's list)
  bool clear_conditions = false;
  // KAI's NotReady event: the PodGroup waits for pods (too few exist, or they are gated); its
  // pods get no Unschedulable event and the PodGroup no condition then, as in KAI.
  std::optional<std::string> not_ready;
  // KAI's StaleJob event: the PodGroup carries the stale stamp (it runs below its minimum).
  std::optional<std::string> stale;
};

// KAI's Pipelined event: the pod ends the cycle pipelined onto a node that is being freed.
struct PipelinedDecision {
  ObjectRef pod;
  std::string node;
};

struct NominateDecision {
  ObjectRef pod;
  std::string node;  // "" clears status.nominatedNodeName
};

struct Decisions {
  std::vector<BindDecision> binds;
  std::vector<EvictDecision> evictions;
  std::vector<PendingPodDecision> pending;
  std::vector<PodGroupDecision> pod_groups;
  std::vector<NominateDecision> nominations;
  std::vector<PipelinedDecision> pipelined;
  std::vector<ObjectRef> stale_bind_requests;
};

// The statuses of the session's pods before any action ran (Snapshot order).
std::vector<PodStatus> InitialStatuses(const Snapshot& snap);

// Reads the closed session against the statuses it opened with and the world it was built from.
Decisions ExtractDecisions(const Session& s, const std::vector<PodStatus>& initial,
                           const ClusterState& world);

}  // namespace kai::scheduler
