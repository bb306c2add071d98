#include "kai/core/actions/common/eviction_units.h"

#include <algorithm>

namespace kai::actions {

void AppendInEvictionOrder(const Session& s, JobId job, SubGroupIndex pod_set,
                           std::vector<PodId>& out) {
  const size_t first = out.size();
  for (PodId p : s.snap().jobs[job].PodsOf(pod_set)) {
    if (IsActiveAllocated(s.snap().pods[p].status)) out.push_back(p);
  }
  // Reverse task order: the pod that would be scheduled last is evicted first; floor pods of a
  // semi-preemptible job last of all.
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), [&](PodId a, PodId b) {
    const bool fa = s.snap().pods[a].in_floor, fb = s.snap().pods[b].in_floor;
    if (fa != fb) return fb;
    return s.TaskBefore(b, a);
  });
}

namespace {

void AppendSubtree(const Session& s, JobId job, SubGroupIndex sg, std::vector<PodId>& out) {
  const SnapSubGroup& group = s.snap().jobs[job].sub_groups[sg];
  for (SubGroupIndex c : group.Members()) AppendSubtree(s, job, c, out);
  if (group.pod_set) AppendInEvictionOrder(s, job, sg, out);
}

}  // namespace

void AppendWholeJob(const Session& s, JobId job, std::vector<PodId>& out) {
  AppendSubtree(s, job, kRootSubGroup, out);
}

VictimJobPods::VictimJobPods(const Session& s, JobId job)
    : session_(&s),
      job_(job),
      pods_(s.snap().jobs[job].sub_groups.size()),
      taken_(pods_.size(), 0),
      semi_(s.snap().jobs[job].semi_preemptible) {
  const SnapJob& j = s.snap().jobs[job];
  for (size_t i = 0; i < j.sub_groups.size(); ++i) {
    if (!j.sub_groups[i].pod_set) continue;
    AppendInEvictionOrder(s, job, static_cast<SubGroupIndex>(i), pods_[i]);
    const int n = static_cast<int>(pods_[i].size());
    count_ += semi_ ? std::max(0, n - j.sub_groups[i].min_member) : n;
  }
}

GangLevel VictimJobPods::Level() const {
  GangLevel level = GangLevel::kExactly;
  for (size_t i = 0; i < pods_.size(); ++i) {
    const SnapSubGroup& sg = job().sub_groups[i];
    if (!sg.pod_set) continue;
    const int n = Remaining(static_cast<SubGroupIndex>(i));
    if (n < sg.min_member) return GangLevel::kBelow;
    if (n > sg.min_member) level = GangLevel::kAbove;
  }
  return level;
}

int VictimJobPods::Satisfied(SubGroupIndex i) const {
  const SnapSubGroup& sg = job().sub_groups[i];
  if (sg.pod_set) return Remaining(i);
  int n = 0;
  for (SubGroupIndex c : sg.Members()) n += IsSatisfied(c) ? 1 : 0;
  return n;
}

bool VictimJobPods::IsSatisfied(SubGroupIndex i) const {
  return Satisfied(i) >= job().sub_groups[i].MembersToSatisfy();
}

bool VictimJobPods::HasSurplus(SubGroupIndex i) const {
  const SnapSubGroup& sg = job().sub_groups[i];
  if (sg.pod_set) return Remaining(i) > sg.min_member;
  if (Satisfied(i) > sg.MembersToSatisfy()) return true;
  for (SubGroupIndex c : sg.Members()) {
    if (HasSurplus(c)) return true;
  }
  return false;
}

VictimJobPods::MemberOrder VictimJobPods::EvictionOrder(SubGroupIndex set) const {
  const SnapSubGroup& sg = job().sub_groups[set];
  if (sg.member_count == 1) return MemberOrder{.lone = sg.first_member};
  std::vector<SubGroupStanding> members;
  for (SubGroupIndex c : sg.Members()) {
    members.push_back({c, Satisfied(c), job().sub_groups[c].MembersToSatisfy()});
  }
  // Reverse SubGroup order: the member that would be filled last gives first.
  std::sort(members.begin(), members.end(),
            [&](const SubGroupStanding& a, const SubGroupStanding& b) {
              return session_->SubGroupBefore(job_, b, a);
            });
  MemberOrder out;
  for (const SubGroupStanding& m : members) out.sorted.push_back(m.index);
  return out;
}

bool VictimJobPods::TakeElastic(SubGroupIndex set, std::vector<PodId>& out) {
  const int satisfied = Satisfied(set);
  if (satisfied == 0) return false;
  const MemberOrder order = EvictionOrder(set);
  const std::span<const SubGroupIndex> members = order.View();
  if (HasSurplus(set)) {
    for (SubGroupIndex m : members) {
      const SnapSubGroup& sg = job().sub_groups[m];
      if (!sg.pod_set) {
        if (TakeElastic(m, out)) return true;
      } else if (Remaining(m) > sg.min_member) {
        out.push_back(pods_[m][taken_[m]++]);
        return true;
      }
    }
  }
  if (job().sub_groups[set].MembersToSatisfy() < satisfied) {
    const size_t before = out.size();
    for (SubGroupIndex m : members) {
      TakeAll(m, out);
      if (out.size() > before) return true;
    }
  }
  return false;
}

bool VictimJobPods::TakeSurplusPod(SubGroupIndex set, std::vector<PodId>& out) {
  const SnapSubGroup& sg = job().sub_groups[set];
  if (sg.pod_set) {
    if (Remaining(set) <= sg.min_member) return false;
    out.push_back(pods_[set][taken_[set]++]);
    return true;
  }
  const MemberOrder order = EvictionOrder(set);
  for (SubGroupIndex m : order.View()) {
    if (TakeSurplusPod(m, out)) return true;
  }
  return false;
}

void VictimJobPods::TakeAll(SubGroupIndex i, std::vector<PodId>& out) {
  const SnapSubGroup& sg = job().sub_groups[i];
  for (SubGroupIndex c : sg.Members()) TakeAll(c, out);
  if (!sg.pod_set) return;
  out.insert(out.end(), pods_[i].begin() + static_cast<std::ptrdiff_t>(taken_[i]), pods_[i].end());
  taken_[i] = pods_[i].size();
}

std::vector<PodId> VictimJobPods::TakeUnit() {
  std::vector<PodId> unit;
  TakeUnit(unit);
  return unit;
}

void VictimJobPods::TakeUnit(std::vector<PodId>& out) {
  const size_t before = out.size();
  if (semi_) {
    TakeSurplusPod(kRootSubGroup, out);
  } else if (!TakeElastic(kRootSubGroup, out)) {
    TakeAll(kRootSubGroup, out);
  }
  count_ -= static_cast<int>(out.size() - before);
}

}  // namespace kai::actions
