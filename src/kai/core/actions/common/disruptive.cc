#include "kai/core/actions/common/disruptive.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "kai/core/actions/common/queue_use.h"
#include "kai/core/framework/job_tasks.h"
#include "kai/core/resource/quantity.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai::actions {
namespace {

// Preemptible jobs, and semi-preemptible ones with pods above their floors.
bool MayBeVictim(const SnapJob& job) {
  return job.preemptible || (job.semi_preemptible && SurplusPods(job) > 0);
}

// Whether the job may be a victim in the session's state now (the caller's filter aside).
bool MayBeVictimNow(const Session& s, JobId j) {
  return s.snap().jobs[j].queue != kNone && MayBeVictim(s.snap().jobs[j]) && HasEvictablePod(s, j);
}

// The jobs that may be victims as the action starts, in id order, and, once a search asks, the
// same per leaf queue in victim order (VictimOffer). During the action only the jobs a commit
// touches change (the preemptor, which gains pods, and the victims' jobs): Touched keeps both
// views up to date.
class VictimPool {
 public:
  explicit VictimPool(const Session& s) : s_(s) {
    for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
      if (MayBeVictimNow(s, j)) jobs_.push_back(j);
    }
  }

  // The job's pods changed in a commit: it enters, leaves or moves in victim order (in the sorted
  // view when it is next asked for).
  void Touched(JobId job) {
    auto it = std::lower_bound(jobs_.begin(), jobs_.end(), job);
    if (it == jobs_.end() || *it != job) jobs_.insert(it, job);  // stale entries are filtered
    if (sorted_) touched_.push_back(job);
  }

  const std::vector<JobId>& Jobs() const { return jobs_; }
  // The searches' scratch (VictimOffer::scratch), made once for the action.
  VictimScratch* Scratch() {
    if (!scratch_) scratch_.emplace(s_.snap().jobs.size());
    return &*scratch_;
  }
  // The victim-ordered lists of the leaf queues `keep` says yes to, and `accept` for every job.
  VictimOffer Offer(const std::function<bool(QueueId)>& keep, std::function<bool(JobId)> accept) {
    Sort();
    for (JobId j : touched_) Place(j);
    touched_.clear();
    VictimOffer offer{&sorted_->by_queue, {}, std::move(accept), Scratch()};
    for (QueueId q : sorted_->leaves) {
      if (!sorted_->by_queue[q].empty() && keep(q)) offer.leaves.push_back(q);
    }
    return offer;
  }
  // For a search by `preemptor` that skips jobs that cannot help it: every leaf's jobs that help
  // it (UsefulNodes::Helps), in victim order, when a preemptor whose placement is the same
  // (VerdictMemo::PlacementShapeOf) was offered victims since the last commit, so that its
  // searches read each list once per placement, not once per job. Otherwise null: the search
  // reads the offer lazily.
  const std::vector<std::vector<JobId>>* HelpfulLists(Session& s, JobId preemptor) {
    const JobId shape = s.memo().PlacementShapeOf(s, preemptor);
    if (shape == kNone) return nullptr;
    const uint64_t epoch = s.CommitCount() + 1;
    Helpful& helpful = helpful_[shape];
    if (helpful.epoch != epoch) {  // the first since the last commit
      helpful = Helpful{.epoch = epoch};
      return nullptr;
    }
    if (helpful.by_queue.empty()) ListHelpful(s, preemptor, helpful.by_queue);
    return &helpful.by_queue;
  }
  // Whether the offer, or a job of an inner queue (which no offer holds), has a job `accept`
  // says yes to: the lists are read in order up to the first.
  bool Any(const VictimOffer& offer) const {
    for (QueueId q : offer.leaves) {
      const std::vector<JobId>& list = (*offer.by_queue)[q];
      if (std::any_of(list.begin(), list.end(), offer.accept)) return true;
    }
    return std::any_of(inner_.begin(), inner_.end(), offer.accept);
  }
  // The jobs of the offer, and of inner queues, that `accept` says yes to, in id order: every job
  // `accept` takes, when the offer leaves out only queues where it takes none.
  std::vector<JobId> Accepted(const VictimOffer& offer) const {
    std::vector<JobId> out;
    for (QueueId q : offer.leaves) {
      const std::vector<JobId>& list = (*offer.by_queue)[q];
      std::copy_if(list.begin(), list.end(), std::back_inserter(out), offer.accept);
    }
    std::copy_if(inner_.begin(), inner_.end(), std::back_inserter(out), offer.accept);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // The victim-ordered view, made when first asked from the jobs that may be victims then.
  void Sort() {
    if (sorted_) return;
    std::vector<JobId> now;
    now.reserve(jobs_.size());
    for (JobId j : jobs_) {
      if (!MayBeVictimNow(s_, j)) continue;
      now.push_back(j);
      if (!s_.snap().queues[s_.snap().jobs[j].queue].IsLeaf()) inner_.push_back(j);
    }
    level_.assign(s_.snap().jobs.size(), std::nullopt);
    sorted_ = SortVictims(s_, now, &level_);
  }

  // A job that cannot help a preemptor is passed over by its search; these lists leave it out.
  struct Helpful {
    uint64_t epoch = 0;  // Session::CommitCount + 1 when a preemptor of the shape was first offered
    std::vector<std::vector<JobId>> by_queue;  // per queue id; empty until listed
  };

  void ListHelpful(Session& s, JobId preemptor, std::vector<std::vector<JobId>>& out) const {
    UsefulNodes useful(s, TasksToAllocate(s, preemptor, /*real=*/false));
    out.resize(s.snap().queues.size());
    for (QueueId q : sorted_->leaves) {
      for (JobId j : sorted_->by_queue[q]) {
        if (useful.Helps(j, *level_[j])) out[q].push_back(j);
      }
    }
  }

  // Takes the job out of the sorted view and puts it back where it stands now, if it may be a
  // victim.
  void Place(JobId job) {
    const QueueId q = s_.snap().jobs[job].queue;
    if (q == kNone) return;
    if (!s_.snap().queues[q].IsLeaf()) {
      auto at = std::lower_bound(inner_.begin(), inner_.end(), job);
      if (at == inner_.end() || *at != job) inner_.insert(at, job);
      return;
    }
    std::vector<JobId>& list = sorted_->by_queue[q];
    if (std::optional<GangLevel>& was = level_[job]) {
      auto at = Find(list, job, *was);
      if (at == list.end() || *at != job) at = std::find(list.begin(), list.end(), job);
      list.erase(at);
      was.reset();
    }
    if (!MayBeVictimNow(s_, job)) return;
    const GangLevel level = JobGangLevel(s_.snap().jobs[job]);
    std::vector<QueueId>& leaves = sorted_->leaves;
    if (std::find(leaves.begin(), leaves.end(), q) == leaves.end()) leaves.push_back(q);
    list.insert(Find(list, job, level), job);
    level_[job] = level;
  }

  // Where the job stands, or would stand, in the list at the level.
  std::vector<JobId>::iterator Find(std::vector<JobId>& list, JobId job, GangLevel level) const {
    return std::lower_bound(list.begin(), list.end(), job, [&](JobId a, JobId b) {
      return VictimBefore(s_, a, *level_[a], b, level);
    });
  }

  const Session& s_;
  std::vector<JobId> jobs_;
  std::vector<JobId> inner_;  // the jobs of sorted_ in inner queues (a job in none is in no list)
  std::optional<VictimsByQueue> sorted_;
  std::vector<JobId> touched_;  // changed since sorted_ was brought up to date (Place: idempotent)
  std::vector<std::optional<GangLevel>> level_;  // per job in sorted_: the level it is sorted by
  std::optional<VictimScratch> scratch_;
  std::unordered_map<JobId, Helpful> helpful_;  // by placement shape
};

// Whether the job is a candidate victim of the preemptor now.
bool IsCandidate(const Session& s, JobId preemptor, JobId j, const DisruptiveSpec& spec) {
  return j != preemptor && MayBeVictimNow(s, j) && spec.candidate(s, preemptor, j);
}

std::vector<JobId> ListCandidates(const Session& s, const VictimPool& pool, JobId preemptor,
                                  const DisruptiveSpec& spec) {
  std::vector<JobId> out;
  for (JobId j : pool.Jobs()) {
    if (!IsCandidate(s, preemptor, j, spec)) continue;
    out.push_back(j);
    if (spec.max_victim_jobs >= 0 && static_cast<int64_t>(out.size()) > spec.max_victim_jobs) break;
  }
  return out;
}

// Which jobs of the job's shape may share a search that simulated scenarios (ActionVerdict::
// shareable, after, before). A scenario re-places the job among the victims of its own leaf
// queue in job order, and the victims' order keys change with what the scenario evicted: where
// the keys tie, the creation tie-break (SnapJob::CreatedBefore) decides. A job of the same shape
// has the same keys as this one in every state the search passes through, so it takes the same
// path when no same-queue candidate lies between the two in creation order. Job orders that are
// not keys (Session::JobOrderHasKeys) may read anything of the job: no sharing then.
void SetSharing(const Session& s, JobId job, const std::vector<JobId>& candidates,
                ActionVerdict& v) {
  if (!s.JobOrderHasKeys()) {
    v.shareable = false;
    return;
  }
  const SnapJob& self = s.snap().jobs[job];
  for (JobId c : candidates) {
    const SnapJob& other = s.snap().jobs[c];
    if (other.queue != self.queue) continue;
    if (other.CreatedBefore(self)) {
      if (v.after == kNone || s.snap().jobs[v.after].CreatedBefore(other)) v.after = c;
    } else if (self.CreatedBefore(other)) {
      if (v.before == kNone || other.CreatedBefore(s.snap().jobs[v.before])) v.before = c;
    } else {
      v.shareable = false;  // the same creation time and UID: no place between them
    }
  }
}

// Candidate victims computed for a job, reused for jobs of the same shape while nothing is
// committed (they depend on the job only through its queue, priority and requests).
class CandidateCache {
 public:
  const std::vector<JobId>* Find(Session& s, JobId job) {
    const JobId shape = s.memo().ShapeOf(s, job);
    auto it = shape == kNone ? entries_.end() : entries_.find(shape);
    if (it == entries_.end() || it->second.commits != s.CommitCount()) return nullptr;
    return &it->second.candidates;
  }
  void Keep(Session& s, JobId job, const std::vector<JobId>& candidates) {
    const JobId shape = s.memo().ShapeOf(s, job);
    if (shape != kNone) entries_[shape] = Entry{s.CommitCount(), candidates};
  }

 private:
  struct Entry {
    uint64_t commits;
    std::vector<JobId> candidates;
  };
  std::unordered_map<JobId, Entry> entries_;
};

// A job's candidate victims. Uncapped (spec.max_victim_jobs unset), the search is offered the
// pool's victim-ordered lists and reads them only as far as it takes victims: the list in id
// order is made only where something needs it (an unsolved job's reason and sharing, the trace).
// Capped, the first candidates in id order are listed, then offered in victim order.
class Candidates {
 public:
  Candidates(Session& s, VictimPool& pool, CandidateCache& cache, JobId job,
             const DisruptiveSpec& spec)
      : s_(s), pool_(pool), cache_(cache), job_(job), spec_(spec) {
    if (spec.max_victim_jobs >= 0) {
      capped_.emplace(SortVictims(s, List()));
      offer_ = VictimOffer{&capped_->by_queue, capped_->leaves, {}, pool.Scratch()};
      return;
    }
    offer_ = pool.Offer(
        [&](QueueId q) { return !spec.candidate_queue || spec.candidate_queue(s, job, q); },
        [&s, &spec, job](JobId j) { return IsCandidate(s, job, j, spec); });
    if (!spec.solver.skip_useless_victims) return;
    if (const auto* helpful = pool.HelpfulLists(s, job)) {
      search_offer_ = offer_;
      search_offer_->by_queue = helpful;
      search_offer_->helpful_only = true;
    }
  }

  // Every candidate, in victim order per leaf queue.
  const VictimOffer& Offer() const { return offer_; }
  // The same for the search, which may leave out candidates it would pass over.
  const VictimOffer& SearchOffer() const { return search_offer_ ? *search_offer_ : offer_; }
  bool None() {
    if (listed_) return list_.empty();
    return !pool_.Any(offer_);
  }
  // In id order, as the session stands now.
  const std::vector<JobId>& List() {
    if (listed_) return list_;
    listed_ = true;
    if (const std::vector<JobId>* known = cache_.Find(s_, job_)) {
      list_ = *known;
    } else {
      // Uncapped, the offer holds every candidate (DisruptiveSpec::candidate_queue).
      list_ = capped() ? ListCandidates(s_, pool_, job_, spec_) : pool_.Accepted(offer_);
      cache_.Keep(s_, job_, list_);
    }
    return list_;
  }

 private:
  bool capped() const { return spec_.max_victim_jobs >= 0; }

  Session& s_;
  const VictimPool& pool_;
  CandidateCache& cache_;
  JobId job_;
  const DisruptiveSpec& spec_;
  bool listed_ = false;
  std::vector<JobId> list_;
  std::optional<VictimsByQueue> capped_;  // the capped list in victim order
  VictimOffer offer_;
  std::optional<VictimOffer> search_offer_;
};

// The candidates' evictable GPUs for an unsolved job's reason. Every job of a class asks over
// the same running jobs (consolidation: all of them), so each job's sum is kept while nothing is
// committed (a failed search rolls every move back).
class EvictableGpus {
 public:
  int64_t Of(const Session& s, const std::vector<JobId>& jobs) {
    if (commits_ != s.CommitCount()) {
      milli_.clear();
      commits_ = s.CommitCount();
    }
    int64_t total = 0;
    for (JobId j : jobs) {
      auto [it, added] = milli_.try_emplace(j, 0);
      if (added) it->second = EvictableMilliGpus(s, j);
      total += it->second;
    }
    return total;
  }

 private:
  uint64_t commits_ = 0;
  std::unordered_map<JobId, int64_t> milli_;  // by job, summed since the last commit
};

// Adds why the action could not help this job to the job's pending reasons.
void Explain(Session& s, JobId job, const std::vector<Reason>& why) { s.AddJobReasons(job, why); }

// The same, and the verdict kept for jobs of its shape and for the next cycle.
void Decide(Session& s, JobId job, ActionVerdict verdict) {
  Explain(s, job, verdict.reasons);
  s.memo().Decided(s, job, std::move(verdict));
}

// The search ran and found no scenario that fits the job.
DisruptionReason Unsolved(const Session& s, const DisruptiveSpec& spec,
                          const std::vector<JobId>& candidates, const SolveResult& result,
                          EvictableGpus& gpus) {
  return DisruptionReason{
      .action = spec.action,
      .outcome = result.gave_up ? DisruptionOutcome::kGaveUp : DisruptionOutcome::kNoFit,
      .candidate_jobs = static_cast<int>(candidates.size()),
      .candidate_milli_gpu = gpus.Of(s, candidates),
      .scenarios_tried = result.scenarios_tried,
      .scenarios_pruned = result.scenarios_pruned,
      .search_work = result.work,
      .bound = result.gave_up ? result.bound : ""};
}

using Bound = SolverConfig::Bound;

Bound Named(int64_t limit, const std::string& field, const std::string& value) {
  return {limit, field + "=" + value};
}

std::string Millis(int64_t ms) { return std::to_string(ms) + "ms"; }

// The smaller of two bounds (-1: none).
Bound Tighter(const Bound& a, const Bound& b) {
  if (a.limit < 0) return b;
  if (b.limit < 0) return a;
  return b.limit < a.limit ? b : a;
}

// The search bounds of one action in one cycle: the work budget per job and per action (always
// on unless configured off), and the opt-in time budgets (spec.args max-search-time-per-job,
// spec.scenarioSearchBudgets). The clock is read only when a time budget is set.
class SearchBudget {
 public:
  SearchBudget(const Session& s, const std::string& action)
      : s_(s), time_(s.config().search_time), action_time_(time_.Action(action)) {
    const SchedulerConfig& c = s.config();
    if (c.max_search_work_per_job > 0) {
      job_work_ = Named(c.max_search_work_per_job, "spec.args.max-search-work-per-job",
                        std::to_string(c.max_search_work_per_job));
    }
    if (c.max_search_work_per_action > 0) {
      action_work_ = Named(c.max_search_work_per_action, "spec.args.max-search-work-per-action",
                           std::to_string(c.max_search_work_per_action));
    }
    if (c.max_search_millis_per_job > 0) {
      args_time_ = Named(c.max_search_millis_per_job, "spec.args.max-search-time-per-job",
                         Millis(c.max_search_millis_per_job));
    }
    if (action_time_.millis > 0) action_deadline_ = s.MonotonicMillis() + action_time_.millis;
  }

  // The work bound a job's search runs under now (Tighter of the per-job bound and what is left
  // of the action's), as limit and name, without building the other bounds.
  std::pair<int64_t, std::string_view> WorkBound() const {
    if (action_work_.limit < 0) return {job_work_.limit, job_work_.name};
    const int64_t left = std::max<int64_t>(0, action_work_.limit - spent_);
    if (job_work_.limit >= 0 && job_work_.limit <= left) return {job_work_.limit, job_work_.name};
    return {left, action_work_.name};
  }

  // The bounds of the next job's search.
  void Apply(SolverConfig& solver) const {
    const auto [limit, name] = WorkBound();
    solver.max_work = {limit, std::string(name)};
    solver.max_millis = Tighter(args_time_, KaiJobTime());
    solver.node_local_millis = Generator("NodeLocalGreedy");
    solver.accumulated_millis = Generator("MultiNodeGang");
  }

  void Spent(const SolveResult& result) { spent_ += result.work; }
  // A search not run again (its verdict kept or shared) counts the work it took.
  void Spent(int64_t work) { spent_ += work; }
  const Bound& JobBound() const { return job_work_; }
  int64_t ActionLimit() const { return action_work_.limit; }

  // The search stopped on the action's own budget (time or work).
  bool ActionBoundStopped(const SolveResult& result) const {
    if (!result.gave_up) return false;
    return (!action_time_.field.empty() && result.bound.starts_with(action_time_.field)) ||
           (action_work_.limit >= 0 && result.bound == action_work_.name);
  }

 private:
  // KAI's job deadline: what is left of the action's budget, capped by maxJobSearchDuration, and
  // at least minJobSearchDuration.
  Bound KaiJobTime() const {
    Bound job;
    if (time_.job_millis > 0) {
      job = Named(time_.job_millis, "spec.scenarioSearchBudgets.maxJobSearchDuration",
                  Millis(time_.job_millis));
    }
    if (action_deadline_ >= 0) {
      const int64_t left = std::max<int64_t>(0, action_deadline_ - s_.MonotonicMillis());
      job = Tighter(job, Named(left, action_time_.field, Millis(action_time_.millis)));
    }
    if (job.limit >= 0 && time_.min_job_millis > job.limit) {
      job = Named(time_.min_job_millis, "spec.scenarioSearchBudgets.minJobSearchDuration",
                  Millis(time_.min_job_millis));
    }
    return job;
  }

  Bound Generator(const std::string& name) const {
    const SearchTimeBudgets::Limit g = time_.Generator(name);
    if (g.millis <= 0) return {};
    return Named(g.millis, g.field, Millis(g.millis));
  }

  const Session& s_;
  const SearchTimeBudgets& time_;
  const SearchTimeBudgets::Limit action_time_;
  Bound job_work_, action_work_, args_time_;
  int64_t action_deadline_ = -1;
  int64_t spent_ = 0;  // work units the action's searches spent so far
};

// Every job of the queue keeps its verdict from the last cycle (framework/verdict_memo.h): none
// is decided, so their order does not matter.
bool KeepAll(Session& s, const JobQueue& queue, const SearchBudget& budget) {
  const std::vector<JobId> jobs = queue.Jobs();
  const Bound& job = budget.JobBound();
  if (jobs.empty() || !s.memo().KeepsAll(s, jobs, job.limit, job.name, budget.ActionLimit())) {
    return false;
  }
  for (JobId j : jobs) s.memo().Take(s, j, VerdictMemo::Reasons::kAppend, job.limit, job.name);
  return true;
}

// The search's counts (framework/session_metrics.h), on the action running.
void RecordSearch(Session& s, const DisruptiveSpec& spec, SolveResult& result, bool action_bound) {
  ActionMetrics* m = s.metrics().current();
  if (!m) return;
  m->scenarios_simulated += result.scenarios_tried;
  m->scenarios_filtered += result.scenarios_pruned;
  if (result.solved) {
    ++m->podgroups_scheduled;
    if (spec.action == "preempt") ++m->preemption_attempts;
  }
  const std::string_view outcome = result.solved    ? "solved"
                                   : result.gave_up ? "deadline_exhausted"
                                                    : "generators_exhausted";
  m->searches.push_back({outcome, action_bound, std::move(result.passes)});
}

// The jobs a committed solution changed: the preemptor and the victims' jobs, each once.
std::vector<JobId> TouchedJobs(const Session& s, JobId preemptor, const SolveResult& result) {
  std::vector<JobId> jobs = {preemptor};
  for (const std::vector<PodId>* pods : {&result.evicted, &result.moved}) {
    for (PodId p : *pods) jobs.push_back(s.snap().pods[p].job);
  }
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  return jobs;
}

}  // namespace

void RunDisruptive(Session& s, const DisruptiveSpec& spec) {
  JobQueueOptions options = spec.queue_options;
  options.max_depth = s.config().QueueDepth(spec.action);  // spec.queueDepthPerAction
  JobQueue queue(s, options);
  VictimPool pool(s);
  SearchBudget budget(s, spec.action);
  if (KeepAll(s, queue, budget)) return;
  CandidateCache candidate_cache;
  EvictableGpus gpus;
  while (!queue.Empty()) {
    const JobId job = queue.Pop();
    if (job == kNone) break;
    const auto [work_limit, work_bound] = budget.WorkBound();
    if (const ActionVerdict* kept =
            s.memo().Take(s, job, VerdictMemo::Reasons::kAppend, work_limit, work_bound)) {
      budget.Spent(kept->work);
      continue;
    }
    s.memo().Tried(s);
    TraceSink* const trace = s.config().trace;
    SolverConfig solver = spec.solver;
    solver.max_scenarios = s.config().max_scenarios_per_job;
    solver.restart_split_gangs = s.config().restart_partly_moved_gangs;
    budget.Apply(solver);
    if (!spec.eligible(s, job)) {
      if (trace)
        trace->Line(spec.action + ": " + std::string(s.snap().jobs[job].name) + " not eligible");
      Decide(s, job,
             {.reasons = {DisruptionReason{.action = spec.action,
                                           .outcome = DisruptionOutcome::kNotEligible,
                                           .rule = spec.not_eligible}}});
      continue;
    }
    Candidates candidates(s, pool, candidate_cache, job, spec);
    if (trace) {
      trace->Line(spec.action + ": " + std::string(s.snap().jobs[job].name) + " candidates " +
                  std::to_string(candidates.List().size()));
    }
    if (candidates.None()) {
      Decide(s, job,
             {.reasons = {DisruptionReason{.action = spec.action,
                                           .outcome = DisruptionOutcome::kNoCandidates,
                                           .rule = spec.rule}}});
      continue;
    }
    std::optional<QueueUseBook> book;
    if (spec.record_queue_use) book.emplace(s, job, candidates.Offer().leaves);
    Statement stmt(s);
    if (ActionMetrics* m = s.metrics().current()) ++m->podgroups_considered;
    SolveResult result = SolveJob(s, stmt, job, candidates.SearchOffer(), solver);
    budget.Spent(result);
    RecordSearch(s, spec, result, budget.ActionBoundStopped(result));
    if (trace) {
      trace->Line("  solved=" + std::to_string(result.solved ? 1 : 0) +
                  " tried=" + std::to_string(result.scenarios_tried) + " pruned=" +
                  std::to_string(result.scenarios_pruned) + " work=" + std::to_string(result.work) +
                  (result.gave_up ? " bound=" + result.bound : ""));
    }
    if (!result.solved) {  // the search rolled every scenario back: the candidates are as they were
      const std::vector<JobId>& listed = candidates.List();
      ActionVerdict verdict{.reasons = {Unsolved(s, spec, listed, result, gpus)},
                            .searched = true,
                            .work = result.work,
                            .bound_limit = solver.max_work.limit,
                            .bound_name = solver.max_work.name,
                            .gave_up = result.gave_up};
      if (result.scenarios_tried > 0) SetSharing(s, job, listed, verdict);
      Decide(s, job, std::move(verdict));
      continue;
    }
    ExplainEvictions(s, job, result, spec.action, spec.rule, book ? &*book : nullptr);
    stmt.Commit();
    for (JobId j : TouchedJobs(s, job, result)) pool.Touched(j);
  }
}

}  // namespace kai::actions
