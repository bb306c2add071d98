#include "kai/core/framework/job_tasks.h"

#include <algorithm>

#include "kai/core/framework/subgroups.h"

namespace kai {
namespace {

class TaskCollector {
 public:
  TaskCollector(const Session& s, JobId j, bool real)
      : s_(s), job_id_(j), job_(s.snap().jobs[j]), real_(real) {}

  // Gang phase (the set is below its minimum): the missing pods of its first K members in
  // SubGroup order, satisfied members among them contributing none. Elastic phase: the tasks of
  // the first member in SubGroup order that has any.
  void FromSet(SubGroupIndex set, std::vector<PodId>& out) {
    const SnapSubGroup& sg = job_.sub_groups[set];
    if (sg.member_count == 1 && sg.MembersToSatisfy() <= 1) {
      // One member that alone satisfies the set (a flat PodGroup): whether the set is below its
      // minimum or not, that member gives its tasks.
      FromMember(sg.first_member, out);
      return;
    }
    const std::vector<SubGroupIndex> members = OrderedMembers(s_, job_id_, set);
    if (!IsSubGroupSatisfied(job_, set)) {
      const int k = job_.sub_groups[set].MembersToSatisfy();
      for (int i = 0; i < k && i < static_cast<int>(members.size()); ++i) {
        if (IsSubGroupSatisfied(job_, members[i])) continue;
        FromMember(members[i], out);
      }
      return;
    }
    for (SubGroupIndex m : members) {
      const size_t before = out.size();
      FromMember(m, out);
      if (out.size() > before) return;
    }
  }

 private:
  void FromMember(SubGroupIndex m, std::vector<PodId>& out) {
    if (job_.sub_groups[m].pod_set) {
      FromPodSet(m, out);
    } else {
      FromSet(m, out);
    }
  }

  // Below its minimum: the missing pods; at or above it: one more pod.
  void FromPodSet(SubGroupIndex set, std::vector<PodId>& out) {
    const SnapSubGroup& ps = job_.sub_groups[set];
    const auto first = static_cast<std::ptrdiff_t>(out.size());
    for (PodId p : job_.PodsOf(set)) {
      const SnapPod& pod = s_.snap().pods[p];
      if (pod.status == PodStatus::kPending ||
          (!real_ && pod.status == PodStatus::kReleasing && pod.virtually_evicted)) {
        out.push_back(p);
      }
    }
    std::sort(out.begin() + first, out.end(),
              [&](PodId a, PodId b) { return s_.TaskBefore(a, b); });
    const int missing = ps.min_member - ps.active_allocated;
    const size_t take = missing > 0 ? static_cast<size_t>(missing) : 1;
    if (out.size() - first > take) out.resize(first + take);
  }

  const Session& s_;
  JobId job_id_;
  const SnapJob& job_;
  bool real_;
};

}  // namespace

std::vector<SubGroupIndex> OrderedMembers(const Session& s, JobId job, SubGroupIndex set) {
  const SnapJob& j = s.snap().jobs[job];
  std::vector<SubGroupStanding> members;
  members.reserve(j.sub_groups[set].member_count);
  for (SubGroupIndex c : j.sub_groups[set].Members()) {
    members.push_back({c, SatisfiedMembers(j, c), j.sub_groups[c].MembersToSatisfy()});
  }
  std::sort(members.begin(), members.end(),
            [&](const SubGroupStanding& a, const SubGroupStanding& b) {
              return s.SubGroupBefore(job, a, b);
            });
  std::vector<SubGroupIndex> out;
  out.reserve(members.size());
  for (const SubGroupStanding& m : members) out.push_back(m.index);
  return out;
}

void TasksToAllocate(const Session& s, JobId j, bool real, std::vector<PodId>& out) {
  out.clear();
  TaskCollector(s, j, real).FromSet(kRootSubGroup, out);
}

std::vector<PodId> TasksToAllocate(const Session& s, JobId j, bool real) {
  std::vector<PodId> tasks;
  TasksToAllocate(s, j, real, tasks);
  return tasks;
}

Resources TasksToAllocateRequest(const Session& s, JobId j, bool real) {
  static thread_local std::vector<PodId> tasks;  // summed at once: no caller sees it
  TasksToAllocate(s, j, real, tasks);
  return s.SumRequests(tasks);
}

}  // namespace kai
