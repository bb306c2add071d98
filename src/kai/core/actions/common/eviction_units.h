#pragma once
// What a victim job still runs while a disruptive action builds its scenario, and the next
// eviction unit it gives up (KAI GetTasksToEvict, §4.1): one surplus pod of a PodSet above its
// minimum (searching members in reverse SubGroup order, recursing into SubGroupSets), else a whole
// surplus member of a SubGroupSet that has more satisfied members than it needs, else every pod
// the job still runs. Inside a PodSet the pod scheduled last (task order) goes first, so leaders
// (masters, ray heads, high task-priority) go last.
// A semi-preemptible job only ever gives one pod above a PodSet's floor at a time (searching
// members in reverse SubGroup order); its floors - and so its whole SubGroups - are never given.
#include <span>
#include <vector>

#include "kai/core/framework/session.h"
#include "kai/core/framework/subgroups.h"

namespace kai::actions {

// Appends the active-allocated pods (Pipelined included) of one PodSet of the job to `out` in
// eviction order: the pod that would be scheduled last first, floor pods of a semi-preemptible
// job last of all.
void AppendInEvictionOrder(const Session& session, JobId job, SubGroupIndex pod_set,
                           std::vector<PodId>& out);

// Appends every active-allocated pod of the job, PodSet by PodSet down the SubGroup tree, in the
// order VictimJobPods gives them when the job leaves whole (its unit when WholeAtOnce holds).
void AppendWholeJob(const Session& session, JobId job, std::vector<PodId>& out);

class VictimJobPods {
 public:
  // The job's active-allocated pods (Pipelined included), each PodSet in eviction order.
  VictimJobPods(const Session& session, JobId job);
  // Count: the pods it may still give (of a semi-preemptible job, those above its floors).
  bool Empty() const { return count_ == 0; }
  int Count() const { return count_; }
  // The job's standing against its PodSets' minimums on the pods it still runs.
  GangLevel Level() const;
  // Removes and returns the next eviction unit (empty only when Empty()).
  std::vector<PodId> TakeUnit();
  // The same, appended to `out`.
  void TakeUnit(std::vector<PodId>& out);

 private:
  const SnapJob& job() const { return session_->snap().jobs[job_]; }
  int Remaining(SubGroupIndex pod_set) const {
    return static_cast<int>(pods_[pod_set].size() - taken_[pod_set]);
  }
  int Satisfied(SubGroupIndex sg) const;
  bool IsSatisfied(SubGroupIndex sg) const;
  bool HasSurplus(SubGroupIndex sg) const;
  // The members of a SubGroupSet in eviction order; a lone member needs no list.
  struct MemberOrder {
    SubGroupIndex lone = kNone;
    std::vector<SubGroupIndex> sorted;
    std::span<const SubGroupIndex> View() const {
      return lone != kNone ? std::span<const SubGroupIndex>(&lone, 1)
                           : std::span<const SubGroupIndex>(sorted);
    }
  };
  MemberOrder EvictionOrder(SubGroupIndex set) const;
  bool TakeElastic(SubGroupIndex set, std::vector<PodId>& out);
  void TakeAll(SubGroupIndex sg, std::vector<PodId>& out);
  bool TakeSurplusPod(SubGroupIndex set, std::vector<PodId>& out);

  const Session* session_;
  JobId job_;
  std::vector<std::vector<PodId>> pods_;  // per SubGroup index (PodSets only), eviction order
  std::vector<size_t> taken_;             // per SubGroup: pods already given up (a prefix)
  int count_ = 0;
  bool semi_ = false;  // a semi-preemptible job: only pods above the floors are given
};

}  // namespace kai::actions
