#pragma once
// Semi-preemptible PodGroups (KAI v0.18 alpha, spec.preemptibility: semi-preemptible; KAI's
// design docs/developer/designs/semi-preemptible). The floor of every PodSet - its first
// minMember pods - is protected: charged to the queue's quota like a non-preemptible job (so it
// must fit in deserved quota) and never a victim of reclaim, preempt or consolidation. Pods above
// a floor are preemptible: they may use over-quota surplus and are evicted one at a time.
//
// Which pods form the floor (docs/deviations.md): when the snapshot is built, the pods of a
// PodSet that hold resources, oldest first (creation time, then name, then uid), up to its
// minMember. During a session a pod placed while its PodSet's floor has room joins the floor, and
// a floor pod that stops being active-allocated leaves it (Session::MovePod keeps this live).
#include <vector>

#include "kai/core/snapshot/snapshot.h"

namespace kai {

// Marks the floor pods of every semi-preemptible job of a freshly built snapshot.
void SeedSemiPreemptibleFloors(Snapshot& snap);
// Marks a job's floor pods again from scratch (its pods' standing changed outside a session).
void ReseedFloors(Snapshot& snap, SnapJob& job);

// A pod of `job` becomes active-allocated / stops being so: joins or leaves its PodSet's floor.
// Call JoinFloor before the allocation handlers run and LeaveFloor after the deallocation ones,
// so that queue accounting sees the pod's standing while it counts.
void JoinFloor(SnapJob& job, SnapPod& pod);
void LeaveFloor(SnapJob& job, SnapPod& pod);

// Whether a pod is charged to non-preemptible quota: every pod of a non-preemptible job, the
// floor pods of a semi-preemptible one.
bool ChargedNonPreemptible(const SnapJob& job, const SnapPod& pod);

// The tasks (pending pods of `job`, in placement order) that would join a floor if placed now:
// per PodSet, the first (minMember - floor pods) of them. All tasks of a non-preemptible job,
// none of a preemptible one.
std::vector<PodId> ProtectedTasks(const Snapshot& snap, const SnapJob& job,
                                  const std::vector<PodId>& tasks);

// Active-allocated pods of a job above its PodSets' floors (what reclaim, preempt and
// consolidation may take from a semi-preemptible job).
int SurplusPods(const SnapJob& job);

}  // namespace kai
