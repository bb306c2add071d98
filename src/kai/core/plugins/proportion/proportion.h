#pragma once
// proportion: hierarchical fair share (deserved quota, then surplus by priority and weight), the
// queue order that serves under-served queues first, and queue capacity checks (limit and
// non-preemptible quota) on the leaf queue and every ancestor. kai-semantics.md §3.
#include <array>

#include "kai/core/framework/session.h"
#include "kai/core/plugins/proportion/resource_division.h"

namespace kai::plugins::proportion {

inline constexpr std::array<CoreResource, 3> kQueueResources = {
    CoreResource::kCpu, CoreResource::kMemory, CoreResource::kGpu};

// One amount per kQueueResources entry (cpu, memory, gpu), and a Resources' amounts in that order.
inline constexpr size_t kNumQueueResources = kQueueResources.size();
using Amounts = std::array<int64_t, kNumQueueResources>;
inline Amounts AmountsOf(const Resources& r) { return {r.milli_cpu, r.memory, r.milli_gpu}; }

// Allocatable resources of usable nodes less what pods of other schedulers hold on them.
Resources FairShareCapacity(const Snapshot& snap);

// Fills fair_share_capacity and, per queue, fair_share, allocated, allocated_non_preemptible and
// requested of every queue.
void ComputeQueueShares(Snapshot& snap, double k_value);

// The amount a queue may hold before it is over its share: the limit when quota is unlimited,
// else max(quota, fair share) capped by the limit. -1 = unlimited.
int64_t AllocatableShare(const SnapQueue& q, CoreResource r);

// nullopt when the queue may take `request` (checked on the leaf and every ancestor); else a
// reason.
std::optional<Reason> CheckQueueCapacity(const Snapshot& snap, QueueId leaf, bool preemptible,
                                         const Resources& request);
// The same with the part of `request` charged to non-preemptible quota given apart (the floor pods
// of a semi-preemptible job; all of a non-preemptible one's).
std::optional<Reason> CheckQueueCapacity(const Snapshot& snap, QueueId leaf,
                                         const Resources& request,
                                         const Resources& protected_request);

// Registers CanReclaim, the reclaim victim filter and the reclaim scenario validator.
// `priority_in_quota`: queuePriorityInQuotaReclaim (alpha in KAI 0.18, default off).
void RegisterReclaimHooks(Session& session, double saturation_multiplier, bool priority_in_quota);

}  // namespace kai::plugins::proportion
