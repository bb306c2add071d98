#include "kai/framework/subgroups.h"

namespace kai {
namespace {

// Counts the pods of a PodSet whose status passes `pred`.
template <class Pred>
int CountPods(const Snapshot& snap, const SnapJob& job, SubGroupIndex set, Pred pred) {
  int n = 0;
  for (PodId p : job.PodsOf(set)) n += pred(snap.pods[p].status) ? 1 : 0;
  return n;
}

bool IsReady(const Snapshot& snap, const SnapJob& job, SubGroupIndex i) {
  const SnapSubGroup& sg = job.sub_groups[i];
  if (sg.pod_set) {
    const int ready = CountPods(
        snap, job, i, [](PodStatus st) { return IsAlive(st) && st != PodStatus::kGated; });
    return ready >= sg.min_member;
  }
  int ready = 0;
  for (SubGroupIndex c : sg.Members()) ready += IsReady(snap, job, c) ? 1 : 0;
  return ready >= sg.MembersToSatisfy();
}

}  // namespace

int SatisfiedMembers(const SnapJob& job, SubGroupIndex i) {
  const SnapSubGroup& sg = job.sub_groups[i];
  if (sg.pod_set) return sg.active_allocated;
  int n = 0;
  for (SubGroupIndex c : sg.Members()) n += IsSubGroupSatisfied(job, c) ? 1 : 0;
  return n;
}

bool IsSubGroupSatisfied(const SnapJob& job, SubGroupIndex i) {
  return SatisfiedMembers(job, i) >= job.sub_groups[i].MembersToSatisfy();
}

bool IsReadyForScheduling(const Snapshot& snap, const SnapJob& job) {
  return IsReady(snap, job, kRootSubGroup);
}

bool IsGangSatisfied(const Snapshot& snap, const SnapJob& job) {
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    const auto index = static_cast<SubGroupIndex>(i);
    if (sg.pod_set && CountPods(snap, job, index, IsActiveUsed) < sg.min_member) return false;
  }
  return true;
}

bool IsStaleGang(const Snapshot& snap, const SnapJob& job) {
  int active = 0;
  for (PodId p : job.pods) {
    const PodStatus st = snap.pods[p].status;
    if (st == PodStatus::kSucceeded) return false;
    active += IsActiveUsed(st) ? 1 : 0;
  }
  return active > 0 && !IsGangSatisfied(snap, job);
}

bool IsElasticJob(const SnapJob& job) {
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    const auto size = job.PodsOf(static_cast<SubGroupIndex>(i)).size();
    if (sg.pod_set && sg.min_member < static_cast<int>(size)) return true;
  }
  return false;
}

GangLevel JobGangLevel(const SnapJob& job) {
  if (!job.has_sub_groups) {  // one PodSet: the job's own counts
    const int min = job.sub_groups[1].min_member;
    if (job.active_allocated < min) return GangLevel::kBelow;
    return job.active_allocated == min ? GangLevel::kExactly : GangLevel::kAbove;
  }
  GangLevel level = GangLevel::kExactly;
  for (const SnapSubGroup& sg : job.sub_groups) {
    if (!sg.pod_set) continue;
    if (sg.active_allocated < sg.min_member) return GangLevel::kBelow;
    if (sg.active_allocated > sg.min_member) level = GangLevel::kAbove;
  }
  return level;
}

}  // namespace kai
