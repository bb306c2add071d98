// allocate: places pending jobs on free (or being-freed) resources, gang by gang, in the order
// of the job queue (KAI actions/allocate). A job is kept only when all its tasks for this step
// fit in one simulation; otherwise everything it tried is rolled back.
#include <algorithm>

#include "kai/core/actions/builtin.h"
#include "kai/core/actions/common/job_queue.h"
#include "kai/core/actions/common/placement.h"
#include "kai/core/framework/job_tasks.h"

namespace kai::actions {
namespace {

bool IsGangScheduling(const SnapJob& job) {
  return std::any_of(job.sub_groups.begin(), job.sub_groups.end(),
                     [](const SnapSubGroup& sg) { return sg.pod_set && sg.min_member > 1; });
}

// A gang reason when the failed task's PodSet stays below its minimum (KAI
// handleFailedTaskAllocation), naming the SubGroup when the PodGroup has SubGroups.
std::vector<Reason> FailureReasons(const Session& s, JobId j, const PlacementResult& r) {
  const SnapJob& job = s.snap().jobs[j];
  std::vector<Reason> reasons;
  if (r.failed_task != kNone && IsGangScheduling(job)) {
    const SnapSubGroup& set = job.sub_groups[s.snap().pods[r.failed_task].sub_group];
    if (set.active_allocated < set.min_member) {
      reasons.push_back(GangReason{.sub_group = job.HasSubGroups() ? std::string(set.name) : "",
                                   .placed = set.active_allocated + r.placed,
                                   .required = set.min_member});
    }
  }
  reasons.insert(reasons.end(), r.reasons.begin(), r.reasons.end());
  return reasons;
}

class AllocateAction : public Action {
 public:
  void Execute(Session& s) override {
    // kai only (docs/deviations.md): jobs nominated to the room a disruptive action freed for
    // them last cycle go first, so that no job the queue order prefers retakes that room and
    // gets evicted again (a reclaim/allocate livelock KAI has).
    // Allocate moves only the pods of the job it popped: the others keep their order keys.
    JobQueue nominated(s, JobQueueOptions{.max_depth = s.config().QueueDepth("allocate"),
                                          .only_nominated = true,
                                          .jobs_fixed_while_queued = true});
    Drain(s, nominated);
    JobQueue queue(s, JobQueueOptions{.max_depth = s.config().QueueDepth("allocate"),
                                      .jobs_fixed_while_queued = true});
    for (const auto& [job, reason] : queue.Skipped()) s.SetJobReasons(job, {reason});
    if (KeepAll(s, queue)) return;
    Drain(s, queue);
  }

 private:
  // Every job of the queue keeps its verdict from the last cycle (framework/verdict_memo.h): none
  // is decided, so their order does not matter.
  static bool KeepAll(Session& s, const JobQueue& queue) {
    const std::vector<JobId> jobs = queue.Jobs();
    if (jobs.empty() || !s.memo().KeepsAll(s, jobs)) return false;
    for (JobId j : jobs) s.memo().Take(s, j, VerdictMemo::Reasons::kReplace);
    return true;
  }

  void Drain(Session& s, JobQueue& queue) {
    while (!queue.Empty()) {
      const JobId job = queue.Pop();
      if (job == kNone) break;
      if (TryJob(s, job) && JobHasPending(s, job)) queue.Push(job);
    }
  }

  // Returns true when the job's step was committed.
  bool TryJob(Session& s, JobId j) {
    // A verdict kept or shared implies tasks to allocate (it was decided on them).
    if (s.memo().Take(s, j, VerdictMemo::Reasons::kReplace)) return false;
    std::vector<PodId>& tasks = tasks_;
    TasksToAllocate(s, j, /*real=*/true, tasks);
    if (tasks.empty()) return false;
    if (auto reason = s.CheckJobCapacity(j, tasks)) {
      s.memo().Tried(s);
      s.SetJobReasons(j, {*reason});
      s.memo().Decided(s, j, {.reasons = {*reason}});
      return false;
    }
    // Its queue admits it, and a job of its shape in another queue failed to place.
    if (s.memo().TakePlacement(s, j)) return false;
    s.memo().Tried(s);
    SnapJob& job = s.snap().jobs[j];
    const bool had_allocated = HasAllocated(s, j);
    Statement stmt(s);
    PlacementResult placed = PlaceJob(s, stmt, j, tasks, /*pipeline_only=*/false);
    if (!placed.ok) {
      std::vector<Reason> reasons = FailureReasons(s, j, placed);
      s.SetJobReasons(j, reasons);
      stmt.Discard();
      s.memo().PlacementFailed(s, j, {.reasons = std::move(reasons)});
      return false;
    }
    const bool pipelined = ShouldPipelineJob(s, j);
    if (pipelined) ConvertAllocatedToPipelined(s, stmt, j);
    stmt.Commit();
    if (ActionMetrics* m = s.metrics().current()) ++m->podgroups_scheduled;
    s.SetJobReasons(j, {});
    if (!pipelined && !had_allocated) job.last_start = s.now();
    return true;
  }

  static bool HasAllocated(const Session& s, JobId j) {
    for (PodId p : s.snap().jobs[j].pods) {
      if (IsAllocated(s.snap().pods[p].status)) return true;
    }
    return false;
  }

  std::vector<PodId> tasks_;  // the job's tasks in TryJob (one buffer for the whole action)
};

}  // namespace

std::unique_ptr<Action> MakeAllocate() { return std::make_unique<AllocateAction>(); }

}  // namespace kai::actions
