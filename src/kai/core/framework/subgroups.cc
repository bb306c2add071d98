#include "kai/core/framework/subgroups.h"

#include <functional>

namespace kai {
namespace {

// Counts the pods of a PodSet whose status passes `pred`.
template <class Pred>
int CountPods(const Snapshot& snap, const SnapJob& job, SubGroupIndex set, Pred pred) {
  int n = 0;
  for (PodId p : job.PodsOf(set)) n += pred(snap.pods[p].status) ? 1 : 0;
  return n;
}

// The SubGroup holds its minimum counting only the pods `counts` accepts (by id).
template <class Counts>
bool SatisfiedBy(const SnapJob& job, SubGroupIndex i, const Counts& counts) {
  const SnapSubGroup& sg = job.sub_groups[i];
  if (sg.pod_set) {
    int n = 0;
    for (PodId p : job.PodsOf(i)) n += counts(p) ? 1 : 0;
    return n >= sg.min_member;
  }
  int n = 0;
  for (SubGroupIndex c : sg.Members()) n += SatisfiedBy(job, c, counts) ? 1 : 0;
  return n >= sg.MembersToSatisfy();
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
  return SatisfiedBy(job, kRootSubGroup, [&](PodId p) {
    const PodStatus st = snap.pods[p].status;
    return IsAlive(st) && st != PodStatus::kGated;
  });
}

bool IsSplitBy(const SnapJob& job, const std::function<bool(PodId)>& counts) {
  bool any = false;
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    if (!job.sub_groups[i].pod_set) continue;
    int n = 0;
    for (PodId p : job.PodsOf(static_cast<SubGroupIndex>(i))) n += counts(p) ? 1 : 0;
    if (n > 0 && n < job.sub_groups[i].min_member) return true;
    any = any || n > 0;
  }
  return any && !SatisfiedBy(job, kRootSubGroup, counts);
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
  // A flat PodGroup holding its minimum of active-allocated pods (kept live) is not stale: its
  // active-used pods are at least those.
  if (!job.has_sub_groups && job.active_allocated >= job.sub_groups[1].min_member) return false;
  int active = 0;
  for (PodId p : job.pods) {
    const PodStatus st = snap.pods[p].status;
    if (st == PodStatus::kSucceeded) return false;
    active += IsActiveUsed(st) ? 1 : 0;
  }
  if (active == 0) return false;
  // A flat PodGroup's one PodSet holds all its pods: the count above decides.
  if (!job.has_sub_groups) return active < job.sub_groups[1].min_member;
  return !IsGangSatisfied(snap, job);
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
