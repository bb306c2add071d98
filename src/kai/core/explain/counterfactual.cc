#include "kai/core/explain/counterfactual.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "kai/core/explain/candidates.h"

namespace kai {

std::string ExplainTarget::Name() const {
  return std::string(pod_group ? "podgroup " : "pod ") + ns + "/" + name;
}

namespace {

using explain_detail::Baseline;
using explain_detail::Candidate;

// The pods the outcome is judged on: the target pod, or every pod of the target PodGroup.
WorkloadRef JudgedRef(const ExplainTarget& t) {
  return t.pod_group ? WorkloadRef{t.ns, t.name, ""} : WorkloadRef{t.ns, "", t.name};
}

std::string StatusSummary(const Snapshot& snap, const std::vector<PodId>& pods) {
  if (pods.size() == 1) return std::string(PodStatusName(snap.pods[pods[0]].status));
  std::map<std::string_view, int> counts;
  for (PodId p : pods) ++counts[PodStatusName(snap.pods[p].status)];
  std::string out;
  for (const auto& [status, n] : counts) {
    out += (out.empty() ? "" : ", ") + std::string(status) + " " + std::to_string(n);
  }
  return out;
}

void RecordEviction(const Session& s, PodId p, TargetOutcome& o) {
  const EvictionVerdict& v = s.Eviction(p);
  if (v.empty() || o.evicted) return;
  o.evicted = true;
  o.eviction = v;
  if (v.preemptor != kNone) {
    const SnapJob& job = s.snap().jobs[v.preemptor];
    o.beneficiary = std::string(job.ns) + "/" + std::string(job.name);
  }
}

TargetOutcome OutcomeOf(const Session& s, const std::vector<PodId>& pods, bool whole_group) {
  const Snapshot& snap = s.snap();
  TargetOutcome o;
  o.status = StatusSummary(snap, pods);
  o.required = 1;
  const JobId job = snap.pods[pods.front()].job;
  if (whole_group && job != kNone) o.required = std::max(1, snap.jobs[job].MinAvailable());
  for (PodId p : pods) {
    o.scheduled += IsActiveAllocated(snap.pods[p].status);
    RecordEviction(s, p, o);
  }
  o.runs = o.scheduled >= o.required;
  if (job != kNone && !o.runs) o.reasons = s.JobReasons(job);
  if (job == kNone && !o.runs) {
    o.reasons.push_back(NodesReason{.detail =
                                        "not part of a PodGroup of kai's (no pod-group-name "
                                        "annotation, or its PodGroup or SubGroup is missing)"});
  }
  return o;
}

std::vector<PodId> AsPodIds(const std::vector<size_t>& v) {
  return std::vector<PodId>(v.begin(), v.end());
}

// Runs cycles on changed copies of the world, within a budget.
class Trials {
 public:
  Trials(const ClusterState& world, const SchedulerConfig& config, const ExplainOptions& options,
         WorkloadRef judged, bool whole_group)
      : world_(world),
        config_(config),
        options_(options),
        judged_(std::move(judged)),
        whole_group_(whole_group) {}

  // One cycle on the world as it is; the session stays open for reading.
  Result<std::unique_ptr<Session>> First() {
    ++cycles_;
    return sim::RunSession(sim::BuildSimSnapshot(world_, options_.simulate), config_,
                           options_.simulate.monotonic_millis);
  }

  // The outcome of one cycle with `change` applied.
  Result<TargetOutcome> With(const Change& change) {
    ++cycles_;
    ClusterState copy = world_;
    sim::SimulateOptions options = options_.simulate;
    if (Status st = ApplyChange(change, copy, options.now); !st.ok()) return st.error();
    const std::vector<size_t> pods = WorkloadPods(copy, judged_);
    if (pods.empty()) return Error{"the change removes the workload itself"};
    auto session =
        sim::RunSession(sim::BuildSimSnapshot(copy, options), config_, options.monotonic_millis);
    if (!session.ok()) return session.error();
    return OutcomeOf(**session, AsPodIds(pods), whole_group_);
  }

  bool Spent() const { return cycles_ >= options_.max_cycles; }
  int cycles() const { return cycles_; }

 private:
  const ClusterState& world_;
  const SchedulerConfig& config_;
  const ExplainOptions& options_;
  WorkloadRef judged_;
  bool whole_group_;
  int cycles_ = 0;
};

// What the search wants of the workload: to run, or (evicted) to be left alone.
enum class Goal : uint8_t { kRuns, kKept };

bool Met(const TargetOutcome& o, Goal goal) {
  return goal == Goal::kRuns ? o.runs : !o.evicted && o.runs;
}

struct Found {
  Change change;
  TargetOutcome after;
};

struct SearchResult {
  std::optional<Found> found;
  std::optional<Change> rejected;  // the largest rung tried, when none worked
  bool out_of_budget = false;
};

// One rung tried: the search result keeps it when it meets the goal.
Result<bool> Try(Trials& t, const Candidate& c, size_t i, Goal goal, SearchResult& r) {
  Change change = c.rung(i);
  auto o = t.With(change);
  if (!o.ok()) return o.error();
  if (!Met(*o, goal)) {
    if (!r.found) r.rejected = std::move(change);
    return false;
  }
  r.found = Found{std::move(change), std::move(*o)};
  return true;
}

// Bisection over a monotone ladder: the first plausible rung, then the largest (if it fails,
// none works), then the smallest rung between them that works.
Result<SearchResult> Bisect(Trials& t, const Candidate& c, Goal goal) {
  SearchResult r;
  size_t lo = std::min(c.first, c.rungs - 1), hi = c.rungs - 1;
  if (lo > 0 || lo == hi) {
    auto works = Try(t, c, lo, goal, r);
    if (!works.ok()) return works.error();
    if (*works || lo == hi) return r;
    ++lo;
  }
  if (t.Spent()) return SearchResult{.rejected = r.rejected, .out_of_budget = true};
  auto top = Try(t, c, hi, goal, r);
  if (!top.ok()) return top.error();
  if (!*top) return r;
  while (lo < hi && !t.Spent()) {  // rungs below lo fail; hi works
    const size_t mid = lo + (hi - lo) / 2;
    auto works = Try(t, c, mid, goal, r);
    if (!works.ok()) return works.error();
    if (*works) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  r.out_of_budget = lo < hi;
  return r;
}

// The first rung, in order, that works.
Result<SearchResult> InOrder(Trials& t, const Candidate& c, Goal goal) {
  SearchResult r;
  for (size_t i = 0; i < c.rungs; ++i) {
    if (t.Spent()) {
      r.out_of_budget = true;
      break;
    }
    auto works = Try(t, c, i, goal, r);
    if (!works.ok()) return works.error();
    if (*works) break;
  }
  return r;
}

Result<SearchResult> Search(Trials& t, const Candidate& c, Goal goal) {
  if (c.rungs == 0) return SearchResult{};
  if (t.Spent()) return SearchResult{.out_of_budget = true};
  return c.monotone ? Bisect(t, c, goal) : InOrder(t, c, goal);
}

bool SmallerChange(const Suggestion& a, const Suggestion& b) {
  const ChangeSize x = SizeOf(a.change), y = SizeOf(b.change);
  return std::tie(x.rank, x.size, x.size2, a.description) <
         std::tie(y.rank, y.size, y.size2, b.description);
}

Status Verify(Trials& t, const std::vector<Candidate>& candidates, Goal goal,
              const ClusterState& world, Explanation& out) {
  std::set<std::string> seen;
  for (const Candidate& c : candidates) {
    auto r = Search(t, c, goal);
    if (!r.ok()) return r.error();
    out.budget_exhausted = out.budget_exhausted || r->out_of_budget;
    if (r->rejected && !r->found) out.rejected.push_back(DescribeChange(*r->rejected, world));
    if (!r->found) continue;
    std::string description = DescribeChange(r->found->change, world);
    if (!seen.insert(description).second) continue;
    out.suggestions.push_back(Suggestion{std::move(r->found->change), std::move(description),
                                         std::move(r->found->after)});
  }
  std::sort(out.suggestions.begin(), out.suggestions.end(), SmallerChange);
  return Ok();
}

Result<std::vector<size_t>> TargetPods(const ClusterState& world, const ExplainTarget& target) {
  if (target.pod_group) {
    const bool exists = std::any_of(world.pod_groups.begin(), world.pod_groups.end(),
                                    [&](const PodGroupObject& pg) {
                                      return pg.meta.ns == target.ns && pg.meta.name == target.name;
                                    });
    if (!exists) return Error{target.Name() + ": no such PodGroup"};
  }
  std::vector<size_t> pods = WorkloadPods(world, JudgedRef(target));
  if (pods.empty()) {
    return Error{target.Name() +
                 (target.pod_group ? ": the PodGroup has no pods" : ": no such pod")};
  }
  return pods;
}

// The PodGroup whose pods the changes edit; a lone pod edits itself.
WorkloadRef EditedRef(const ClusterState& world, const ExplainTarget& target, size_t pod) {
  if (target.pod_group) return JudgedRef(target);
  const PodObject& p = world.pods[pod];
  if (p.pod_group.empty()) return JudgedRef(target);
  return WorkloadRef{target.ns, p.pod_group, ""};
}

void Describe(const Session& s, const Baseline& b, Explanation& out) {
  out.outcome = b.outcome;
  out.pod_group = b.edited.pod_group.empty() ? "" : b.edited.Name();
  if (b.job != kNone && s.snap().jobs[b.job].queue != kNone) {
    out.queue = std::string(s.snap().queues[s.snap().jobs[b.job].queue].name);
  } else if (b.job != kNone) {
    out.queue = s.snap().jobs[b.job].obj->queue.str();
  }
}

}  // namespace

Result<Explanation> ExplainWorkload(const ClusterState& world, const SchedulerConfig& config,
                                    const ExplainTarget& target, const ExplainOptions& options) {
  auto pods = TargetPods(world, target);
  if (!pods.ok()) return pods.error();
  Trials trials(world, config, options, JudgedRef(target), target.pod_group);
  auto first = trials.First();
  if (!first.ok()) return first.error();
  const Session& s = **first;
  const std::vector<PodId> ids = AsPodIds(*pods);
  Baseline b{world,
             config,
             s,
             EditedRef(world, target, pods->front()),
             s.snap().pods[ids[0]].job,
             ids,
             OutcomeOf(s, ids, target.pod_group)};
  Explanation out;
  out.target = target;
  Describe(s, b, out);
  if (b.outcome.evicted) {
    if (auto st = Verify(trials, ProtectionCandidates(b), Goal::kKept, world, out); !st.ok())
      return st.error();
  } else if (!b.outcome.runs) {
    if (auto st = Verify(trials, PendingCandidates(b), Goal::kRuns, world, out); !st.ok())
      return st.error();
  }
  out.cycles = trials.cycles();
  return out;
}

}  // namespace kai
