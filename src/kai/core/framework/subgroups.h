#pragma once
// Gang questions asked of a job's SubGroup tree (KAI podgroup_info and subgroup_info, §4.1).
// Counts of active-allocated pods per PodSet are kept live by the session, so these answers follow
// a simulation as it evicts and places pods.
#include <functional>

#include "kai/core/snapshot/snapshot.h"

namespace kai {

// Members of a SubGroup that count towards its minimum: active-allocated pods of a PodSet, or
// satisfied members of a SubGroupSet (KAI GetNumActiveAllocatedMembers).
int SatisfiedMembers(const SnapJob& job, SubGroupIndex sg);
// The SubGroup has at least MembersToSatisfy() such members (KAI IsMinRequirementSatisfied).
bool IsSubGroupSatisfied(const SnapJob& job, SubGroupIndex sg);
// The whole job holds its minimum allocation: its root SubGroupSet is satisfied.
inline bool IsJobSatisfied(const SnapJob& job) { return IsSubGroupSatisfied(job, kRootSubGroup); }

// Enough pods exist (alive, not gated) to satisfy the tree: the allocation filter (KAI
// IsReadyForScheduling).
bool IsReadyForScheduling(const Snapshot& snap, const SnapJob& job);
// Counting only the pods `counts` accepts, the job runs split: some PodSet holds some of them
// but fewer than its minimum, or they are not enough for the SubGroup tree (none at all is not
// split).
bool IsSplitBy(const SnapJob& job, const std::function<bool(PodId)>& counts);
// Every PodSet has active-used pods >= its minimum (solver success, KAI IsGangSatisfied).
bool IsGangSatisfied(const Snapshot& snap, const SnapJob& job);
// Some PodSet holds active-used pods below its minimum while the job has active-used pods and no
// pod succeeded (KAI IsStale; minSubGroup is not consulted).
bool IsStaleGang(const Snapshot& snap, const SnapJob& job);
// Some PodSet has more pods than its minimum (KAI IsElastic).
bool IsElasticJob(const SnapJob& job);

// Where the job stands against its PodSets' minimums (the elastic job order): below when some
// PodSet is under its minimum, above when none is and some is over, else exactly at it.
enum class GangLevel : uint8_t { kBelow, kExactly, kAbove };
GangLevel JobGangLevel(const SnapJob& job);

}  // namespace kai
