#include "kai/actions/common/disruptive.h"

#include <algorithm>
#include <optional>

#include "kai/actions/common/queue_use.h"
#include "kai/resource/quantity.h"
#include "kai/snapshot/semi_preemptible.h"

namespace kai::actions {
namespace {

// Preemptible jobs, and semi-preemptible ones with pods above their floors.
bool MayBeVictim(const SnapJob& job) {
  return job.preemptible || (job.semi_preemptible && SurplusPods(job) > 0);
}

// The jobs that may be victims as the action starts, in id order. During the action only the
// jobs it serves gain pods (AddServed), so these and those are all that may be victims later.
class VictimPool {
 public:
  explicit VictimPool(const Session& s) {
    for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
      if (s.snap().jobs[j].queue != kNone && MayBeVictim(s.snap().jobs[j]) &&
          HasEvictablePod(s, j)) {
        jobs_.push_back(j);
      }
    }
  }
  void AddServed(JobId job) {
    auto it = std::lower_bound(jobs_.begin(), jobs_.end(), job);
    if (it == jobs_.end() || *it != job) jobs_.insert(it, job);
  }
  const std::vector<JobId>& Jobs() const { return jobs_; }

 private:
  std::vector<JobId> jobs_;
};

std::vector<JobId> Candidates(const Session& s, const VictimPool& pool, JobId preemptor,
                              const DisruptiveSpec& spec) {
  std::vector<JobId> out;
  for (JobId j : pool.Jobs()) {
    if (j == preemptor || s.snap().jobs[j].queue == kNone) continue;
    if (!MayBeVictim(s.snap().jobs[j]) || !HasEvictablePod(s, j)) continue;
    if (!spec.candidate(s, preemptor, j)) continue;
    out.push_back(j);
    if (spec.max_victim_jobs >= 0 && static_cast<int64_t>(out.size()) > spec.max_victim_jobs) break;
  }
  return out;
}

int64_t EvictableGpus(const Session& s, const std::vector<JobId>& jobs) {
  int64_t total = 0;
  for (JobId j : jobs) {
    for (PodId p : EvictablePods(s, j)) total += s.snap().pods[p].request.milli_gpu;
  }
  return total;
}

// Adds why the action could not help this job to the job's pending reasons.
void Explain(Session& s, JobId job, DisruptionReason why) {
  std::vector<Reason> reasons = s.JobReasons(job);
  reasons.push_back(std::move(why));
  s.SetJobReasons(job, std::move(reasons));
}

// The search ran and found no scenario that fits the job.
DisruptionReason Unsolved(const Session& s, const DisruptiveSpec& spec,
                          const std::vector<JobId>& candidates, const SolveResult& result) {
  return DisruptionReason{
      .action = spec.action,
      .outcome = result.gave_up ? DisruptionOutcome::kGaveUp : DisruptionOutcome::kNoFit,
      .candidate_jobs = static_cast<int>(candidates.size()),
      .candidate_milli_gpu = EvictableGpus(s, candidates),
      .scenarios_tried = result.scenarios_tried,
      .scenarios_pruned = result.scenarios_pruned,
      .bound = result.gave_up ? result.bound : ""};
}

}  // namespace

void RunDisruptive(Session& s, const DisruptiveSpec& spec) {
  JobQueue queue(s, spec.queue_options);
  VictimPool pool(s);
  while (!queue.Empty()) {
    const JobId job = queue.Pop();
    if (job == kNone) break;
    TraceSink* const trace = s.config().trace;
    if (!spec.eligible(s, job)) {
      if (trace)
        trace->Line(spec.action + ": " + std::string(s.snap().jobs[job].name) + " not eligible");
      Explain(s, job,
              {.action = spec.action,
               .outcome = DisruptionOutcome::kNotEligible,
               .rule = spec.not_eligible});
      continue;
    }
    const std::vector<JobId> candidates = Candidates(s, pool, job, spec);
    if (trace) {
      trace->Line(spec.action + ": " + std::string(s.snap().jobs[job].name) + " candidates " +
                  std::to_string(candidates.size()));
    }
    if (candidates.empty()) {
      Explain(
          s, job,
          {.action = spec.action, .outcome = DisruptionOutcome::kNoCandidates, .rule = spec.rule});
      continue;
    }
    std::optional<QueueUseBook> book;
    if (spec.record_queue_use) book.emplace(s, job, candidates);
    Statement stmt(s);
    SolverConfig solver = spec.solver;
    solver.max_scenarios = s.config().max_scenarios_per_job;
    solver.restart_split_gangs = s.config().restart_partly_moved_gangs;
    solver.max_millis = s.config().max_search_millis_per_job;
    SolveResult result = SolveJob(s, stmt, job, candidates, solver);
    if (trace) {
      trace->Line("  solved=" + std::to_string(result.solved ? 1 : 0) +
                  " tried=" + std::to_string(result.scenarios_tried) +
                  " pruned=" + std::to_string(result.scenarios_pruned));
    }
    if (!result.solved) {
      Explain(s, job, Unsolved(s, spec, candidates, result));
      continue;
    }
    ExplainEvictions(s, job, result, spec.action, spec.rule, book ? &*book : nullptr);
    stmt.Commit();
    pool.AddServed(job);
  }
}

}  // namespace kai::actions
