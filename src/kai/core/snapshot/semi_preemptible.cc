#include "kai/core/snapshot/semi_preemptible.h"

#include <algorithm>
#include <tuple>

namespace kai {
namespace {

bool AnyFloor(const SnapJob& job) {
  return std::any_of(job.sub_groups.begin(), job.sub_groups.end(),
                     [](const SnapSubGroup& sg) { return sg.pod_set && sg.min_member > 0; });
}

// Floor order: oldest first, then namespace/name, then uid (a total order).
bool OlderPod(const SnapPod& a, const SnapPod& b) {
  return std::tie(a.creation, a.ns, a.name, a.uid) < std::tie(b.creation, b.ns, b.name, b.uid);
}

void SeedJob(Snapshot& snap, SnapJob& job) {
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    if (!job.sub_groups[i].pod_set) continue;
    std::vector<PodId> holding;
    for (PodId p : job.PodsOf(static_cast<SubGroupIndex>(i))) {
      if (IsActiveAllocated(snap.pods[p].status)) holding.push_back(p);
    }
    std::sort(holding.begin(), holding.end(),
              [&](PodId a, PodId b) { return OlderPod(snap.pods[a], snap.pods[b]); });
    for (PodId p : holding) JoinFloor(job, snap.pods[p]);
  }
}

void SeedFloorsOf(Snapshot& snap, SnapJob& job) {
  if (!job.semi_preemptible) return;
  if (!AnyFloor(job)) {
    // minMember 0 everywhere: nothing is protected, the job is plainly preemptible.
    job.semi_preemptible = false;
    job.preemptible = true;
    return;
  }
  SeedJob(snap, job);
}

}  // namespace

void SeedSemiPreemptibleFloors(Snapshot& snap) {
  for (SnapJob& job : snap.jobs) SeedFloorsOf(snap, job);
}

void ReseedFloors(Snapshot& snap, SnapJob& job) {
  for (SnapSubGroup& sg : job.sub_groups) sg.floor_pods = 0;
  for (PodId p : job.pods) snap.pods[p].in_floor = false;
  SeedFloorsOf(snap, job);
}

void JoinFloor(SnapJob& job, SnapPod& pod) {
  if (!job.semi_preemptible || pod.in_floor || pod.sub_group == kNone) return;
  SnapSubGroup& set = job.sub_groups[pod.sub_group];
  if (set.floor_pods >= set.min_member) return;
  pod.in_floor = true;
  ++set.floor_pods;
}

void LeaveFloor(SnapJob& job, SnapPod& pod) {
  if (!pod.in_floor) return;
  pod.in_floor = false;
  --job.sub_groups[pod.sub_group].floor_pods;
}

bool ChargedNonPreemptible(const SnapJob& job, const SnapPod& pod) {
  if (job.semi_preemptible) return pod.in_floor;
  return !job.preemptible;
}

std::vector<PodId> ProtectedTasks(const Snapshot& snap, const SnapJob& job,
                                  const std::vector<PodId>& tasks) {
  if (!job.semi_preemptible) return job.preemptible ? std::vector<PodId>{} : tasks;
  std::vector<int> room(job.sub_groups.size(), 0);
  for (size_t i = 0; i < room.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    if (sg.pod_set) room[i] = std::max(0, sg.min_member - sg.floor_pods);
  }
  std::vector<PodId> out;
  for (PodId t : tasks) {
    const SubGroupIndex set = snap.pods[t].sub_group;
    if (set == kNone || snap.pods[t].in_floor || room[set] == 0) continue;
    --room[set];
    out.push_back(t);
  }
  return out;
}

int SurplusPods(const SnapJob& job) {
  int surplus = 0;
  for (const SnapSubGroup& sg : job.sub_groups) {
    if (sg.pod_set) surplus += std::max(0, sg.active_allocated - sg.min_member);
  }
  return surplus;
}

}  // namespace kai
