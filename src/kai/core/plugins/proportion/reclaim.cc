// The proportion plugin's reclaim rules (kai-semantics.md §3.7; KAI proportion/reclaimable):
//  - CanReclaim: the reclaimer's leaf queue stays within its fair share after taking the job
//    (and, for non-preemptible jobs, within deserved quota);
//  - victim filter: compare the two queues at the level where their ancestry splits. A reclaimer
//    within deserved quota may take from a queue over deserved in a resource it asks for (or under
//    deserved in none of them); otherwise only from a queue above its allocatable share;
//  - validator: every eviction unit must leave its queue above its allocatable share
//    (MaintainFairShare) or, for a reclaimer within deserved quota, above deserved
//    (GuaranteeDeservedQuota); and after the move no reclaiming queue may end more saturated than
//    a sibling it took from (saturation multiplier m);
//  - kai only, for preempt: a scenario may not grow the preemptor's queue above its fair share
//    while another queue's pending job may reclaim (docs/deviations.md).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "kai/core/framework/job_tasks.h"
#include "kai/core/plugins/proportion/proportion.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai::plugins::proportion {
namespace {

// A set of the resources of Amounts (bit r: resource r).
using Involved = uint8_t;

// The resources an amount takes some of.
Involved InvolvedIn(const Amounts& a) {
  Involved out = 0;
  for (size_t r = 0; r < kNumQueueResources; ++r) {
    if (a[r] > 0) out |= static_cast<Involved>(1u << r);
  }
  return out;
}

struct Frozen {
  std::vector<Amounts> allocated;
  std::vector<Amounts> allocated_np;
};

// What the reclaim precheck reads of a scenario's victims: their leaf queues in order of first
// appearance and, per resource, the largest sum of one job's victims' requests (the most one
// eviction unit can take). A solution's growing scenario (Scenario::extends_previous) is read
// incrementally: only the victims appended since the previous read.
struct VictimSummary {
  JobId preemptor = kNone;
  size_t read = 0;  // victims read so far
  std::vector<QueueId> leaves;
  Amounts largest{};
  std::vector<Amounts> per_job;  // sums of the victims read, per job
  std::vector<JobId> jobs;       // the jobs with victims read (their per_job entries are set)
  std::vector<bool> listed;      // per job: in `jobs`

  void Reset() {
    for (JobId j : jobs) {
      per_job[j] = {};
      listed[j] = false;
    }
    jobs.clear();
    leaves.clear();
    largest = {};
    read = 0;
    preemptor = kNone;
  }

  void Read(const Snapshot& snap, JobId reclaimer, const std::vector<PodId>& victims) {
    if (reclaimer != preemptor || victims.size() < read) Reset();
    preemptor = reclaimer;
    per_job.resize(snap.jobs.size());
    listed.resize(snap.jobs.size(), false);
    for (; read < victims.size(); ++read) {
      const SnapPod& pod = snap.pods[victims[read]];
      const QueueId leaf = snap.jobs[pod.job].queue;
      if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) leaves.push_back(leaf);
      if (!listed[pod.job]) {
        listed[pod.job] = true;
        jobs.push_back(pod.job);
      }
      Amounts& job = per_job[pod.job];
      const Amounts a = AmountsOf(pod.request);
      for (size_t r = 0; r < kNumQueueResources; ++r) {
        job[r] += a[r];
        largest[r] = std::max(largest[r], job[r]);
      }
    }
  }
};

struct ReclaimState {
  double multiplier = 1.0;
  bool priority_in_quota = false;  // queuePriorityInQuotaReclaim
  Frozen frozen;
  // The reclaimer's request while its victims are filtered (cleared when a solution starts).
  JobId cached_job = kNone;
  Amounts cached_request{};
  // The victim filter's verdicts for cached_job per victim leaf queue (-1: not known), which is
  // all the filter reads of a victim: valid while the session's state (the queues' allocations)
  // is as it was at verdict_version.
  std::vector<int8_t> verdicts;
  uint64_t verdict_version = 0;
  // Preempt: whether a job of another queue may reclaim (cleared when a solution starts).
  std::optional<bool> other_can_reclaim;
  // The precheck's reading of the growing scenario (reset when a solution starts), and scratch
  // for other scenarios.
  VictimSummary growing;
  VictimSummary scratch;
};

// queuePriorityInQuotaReclaim: a strictly higher-priority queue that stays within its own deserved
// quota may take in-quota preemptible resources of a lower-priority sibling.
bool PriorityInQuota(const ReclaimState& st, const SnapQueue& reclaimer, const Amounts& allocated,
                     const Amounts& request, const SnapQueue& victim);

int Depth(const Snapshot& snap, QueueId q) {
  int d = 0;
  for (; q != kNone; q = snap.queues[q].parent) ++d;
  return d;
}

QueueId Ancestor(const Snapshot& snap, QueueId q, int levels_up) {
  for (; levels_up > 0; --levels_up) q = snap.queues[q].parent;
  return q;
}

// The reclaimer's and the victim's queues at the first level where their paths from the roots
// differ; when one path is a prefix of the other, the last shared queue on both sides. Walks up
// the tree without allocating (it runs for every reclaimer x victim job pair).
std::pair<QueueId, QueueId> Leveled(const Snapshot& snap, QueueId reclaimer, QueueId victim) {
  if (reclaimer == kNone || victim == kNone) return {kNone, kNone};
  const int da = Depth(snap, reclaimer), db = Depth(snap, victim);
  const int common = std::min(da, db);
  QueueId a = Ancestor(snap, reclaimer, da - common);
  QueueId b = Ancestor(snap, victim, db - common);
  while (a != b && snap.queues[a].parent != snap.queues[b].parent) {
    a = snap.queues[a].parent;
    b = snap.queues[b].parent;
  }
  return {a, b};
}

int64_t Deserved(const SnapQueue& q, size_t i) { return q.Quota(kQueueResources[i]).quota; }

bool AllocatedPlusWithinDeserved(const SnapQueue& q, const Amounts& allocated, const Amounts& req) {
  for (size_t i = 0; i < kNumQueueResources; ++i) {
    const int64_t d = Deserved(q, i);
    if (d >= 0 && allocated[i] + req[i] > d) return false;
  }
  return true;
}

// remaining > allocatable share in at least one resource.
bool AboveAllocatableShare(const SnapQueue& q, const Amounts& remaining) {
  for (size_t i = 0; i < kNumQueueResources; ++i) {
    const int64_t share = AllocatableShare(q, kQueueResources[i]);
    if (share >= 0 && remaining[i] > share) return true;
  }
  return false;
}

bool AboveDeserved(const SnapQueue& q, const Amounts& remaining) {
  for (size_t i = 0; i < kNumQueueResources; ++i) {
    const int64_t d = Deserved(q, i);
    if (d >= 0 && remaining[i] > d) return true;
  }
  return false;
}

bool PriorityInQuota(const ReclaimState& st, const SnapQueue& reclaimer, const Amounts& allocated,
                     const Amounts& request, const SnapQueue& victim) {
  return st.priority_in_quota && reclaimer.priority > victim.priority &&
         AllocatedPlusWithinDeserved(reclaimer, allocated, request);
}

bool DeservedReclaimCandidate(const SnapQueue& victim, const Amounts& req) {
  bool under = false;
  for (size_t i = 0; i < kNumQueueResources; ++i) {
    if (req[i] <= 0) continue;
    const int64_t d = Deserved(victim, i);
    if (d < 0) continue;
    const int64_t alloc = AmountsOf(victim.allocated)[i];
    if (alloc > d) return true;
    if (alloc < d) under = true;
  }
  return !under;
}

double Saturation(int64_t allocated, int64_t fair_share) {
  if (fair_share == 0) return allocated > 0 ? std::numeric_limits<double>::infinity() : 0;
  return static_cast<double>(allocated) / static_cast<double>(fair_share);
}

class Validator {
 public:
  Validator(const Session& s, const ReclaimState& st, const Scenario& sc)
      : s_(s), snap_(s.snap()), st_(st), sc_(sc) {}

  bool Run() {
    reclaimer_queue_ = snap_.jobs[sc_.preemptor].queue;
    request_ = AmountsOf(sc_.preemptor_request);
    if (!TakeFromVictims()) {
      Trace("  validator: strategy rejected");
      return false;
    }
    const bool ok = ReclaimersWithinBounds();
    if (!ok) Trace("  validator: saturation rejected");
    return ok;
  }

  // Before simulation: whatever the victims' fate, the evicted ones request at least
  // `min_evicted` (nothing else frees room for the reclaimer). When every victim sits under one
  // victim-level queue, the strategy is checked, before the last unit taken from that queue, on
  // at most allocated - min_evicted + (the largest unit) remaining; staying above a share only
  // gets harder as more is taken, so if the strategy refuses that bound it refuses every outcome.
  bool Possible(const Amounts& min_evicted, ReclaimState& state) {
    reclaimer_queue_ = snap_.jobs[sc_.preemptor].queue;
    request_ = AmountsOf(sc_.preemptor_request);
    if (reclaimer_queue_ == kNone) return true;
    if (std::none_of(min_evicted.begin(), min_evicted.end(), [](int64_t v) { return v > 0; })) {
      return true;  // the scenario may evict nothing at all
    }
    VictimSummary& victims = sc_.extends_previous ? state.growing : state.scratch;
    if (!sc_.extends_previous) victims.Reset();
    victims.Read(snap_, sc_.preemptor, *sc_.victims);
    std::optional<std::pair<QueueId, QueueId>> levels;
    for (QueueId leaf : victims.leaves) {
      const auto level = Leveled(snap_, reclaimer_queue_, leaf);
      if (level.first == kNone || level.second == kNone) return true;
      if (levels && *levels != level) return true;
      levels = level;
    }
    if (!levels) return true;
    Amounts bound = Allocated(levels->second);
    for (size_t r = 0; r < kNumQueueResources; ++r) bound[r] += victims.largest[r] - min_evicted[r];
    return FitsStrategy(levels->first, levels->second, bound);
  }

 private:
  Amounts Allocated(QueueId q) const { return st_.frozen.allocated[q]; }
  void Trace(std::string_view line) const {
    if (s_.config().trace) s_.config().trace->Line(line);
  }

  // Eviction units of the scenario per victim leaf queue (ascending): in each PodSet of a victim
  // job, the victims beyond the PodSet's minimum alone, the job's other victims (its core) as one.
  // A queue's units come job by job (ascending), a job's PodSets ascending, its core last.
  std::vector<std::pair<QueueId, std::vector<Amounts>>> UnitsByQueue() const {
    const std::vector<PodId>& victims = *sc_.victims;
    // The victims grouped by job, then PodSet, each group in scenario order.
    std::vector<size_t> order(victims.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto group = [&](size_t i) {
      const SnapPod& pod = snap_.pods[victims[i]];
      return std::pair<JobId, SubGroupIndex>(pod.job, pod.sub_group);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return group(a) < group(b); });
    std::vector<std::pair<QueueId, Amounts>> units;  // in the order described above
    const bool ignore_moved = s_.config().allow_consolidating_reclaim;
    for (size_t at = 0; at < order.size();) {
      const JobId job = group(order[at]).first;
      Amounts core{};
      bool has_core = false;
      for (; at < order.size() && group(order[at]).first == job;) {
        const SubGroupIndex set = group(order[at]).second;
        const size_t min =
            static_cast<size_t>(std::max(0, snap_.jobs[job].sub_groups[set].min_member));
        for (size_t i = 0; at < order.size() && group(order[at]) == std::pair(job, set);
             ++at, ++i) {
          const SnapPod& pod = snap_.pods[victims[order[at]]];
          if (ignore_moved && IsActiveAllocated(pod.status)) continue;
          const Amounts a = AmountsOf(AcceptedQueueResources(pod));
          if (i >= min) {
            units.push_back({snap_.jobs[job].queue, a});
          } else {
            for (size_t r = 0; r < kNumQueueResources; ++r) core[r] += a[r];
            has_core = true;
          }
        }
      }
      if (has_core) units.push_back({snap_.jobs[job].queue, core});
    }
    std::stable_sort(units.begin(), units.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<QueueId, std::vector<Amounts>>> out;
    for (const auto& [queue, amounts] : units) {
      if (out.empty() || out.back().first != queue) out.push_back({queue, {}});
      out.back().second.push_back(amounts);
    }
    return out;
  }

  bool TakeFromVictims() {
    for (const auto& [victim_leaf, units] : UnitsByQueue()) {
      const auto [reclaimer_level, victim_level] = Leveled(snap_, reclaimer_queue_, victim_leaf);
      Involved involved = 0;
      for (const Amounts& u : units) involved |= InvolvedIn(u);
      for (const Amounts& u : units) {
        Amounts& remaining = Remaining(victim_level);
        if (!FitsStrategy(reclaimer_level, victim_level, remaining)) return false;
        for (QueueId q = victim_leaf; q != kNone; q = snap_.queues[q].parent) {
          Amounts& rem = Remaining(q);
          for (size_t r = 0; r < kNumQueueResources; ++r) rem[r] -= u[r];
          involved_[q] |= involved;
        }
      }
    }
    return true;
  }

  Amounts& Remaining(QueueId q) {
    auto it = remaining_.find(q);
    if (it == remaining_.end()) it = remaining_.emplace(q, Allocated(q)).first;
    return it->second;
  }

  bool FitsStrategy(QueueId reclaimer_level, QueueId victim_level, const Amounts& remaining) const {
    const SnapQueue& victim = snap_.queues[victim_level];
    if (AboveAllocatableShare(victim, remaining)) return true;  // MaintainFairShare
    const SnapQueue& reclaimer = snap_.queues[reclaimer_level];
    if (PriorityInQuota(st_, reclaimer, Allocated(reclaimer_level), request_, victim)) return true;
    return AllocatedPlusWithinDeserved(reclaimer, Allocated(reclaimer_level), request_) &&
           AboveDeserved(victim, remaining);  // GuaranteeDeservedQuota
  }

  bool ReclaimersWithinBounds() {
    const Involved reclaimer_involved = InvolvedIn(request_);
    const SnapJob& preemptor = snap_.jobs[sc_.preemptor];
    // A semi-preemptible preemptor charges only the pods that join its floors.
    const bool protected_part = !preemptor.preemptible &&
                                (!preemptor.semi_preemptible || !sc_.preemptor_protected.IsZero());
    const Amounts np_request =
        preemptor.semi_preemptible ? AmountsOf(sc_.preemptor_protected) : request_;
    for (QueueId q = reclaimer_queue_; q != kNone; q = snap_.queues[q].parent) {
      Amounts mine = remaining_.count(q) ? remaining_[q] : Allocated(q);
      for (size_t r = 0; r < kNumQueueResources; ++r) mine[r] += request_[r];
      if (remaining_.count(q)) remaining_[q] = mine;
      for (const auto& [sib, sib_remaining] : remaining_) {
        if (sib == q || snap_.queues[sib].parent != snap_.queues[q].parent) continue;
        const Involved involved = involved_[sib] | reclaimer_involved;
        if (!SaturationLower(involved, q, mine, sib, sib_remaining)) return false;
      }
      if (protected_part &&
          !AllocatedPlusWithinDeserved(snap_.queues[q], st_.frozen.allocated_np[q], np_request)) {
        return false;
      }
    }
    return true;
  }

  bool SaturationLower(Involved involved, QueueId q, const Amounts& mine, QueueId sib,
                       const Amounts& sib_remaining) const {
    const Amounts fs_q = AmountsOf(snap_.queues[q].fair_share);
    const Amounts fs_s = AmountsOf(snap_.queues[sib].fair_share);
    for (size_t r = 0; r < kNumQueueResources; ++r) {
      if (!(involved & (1u << r))) continue;
      const double rq = Saturation(mine[r], fs_q[r]);
      const double rs = Saturation(sib_remaining[r], fs_s[r]);
      if (rq > 1 && fs_s[r] > 0 && rq * st_.multiplier >= rs) return false;
    }
    return true;
  }

  const Session& s_;
  const Snapshot& snap_;
  const ReclaimState& st_;
  const Scenario& sc_;
  QueueId reclaimer_queue_ = kNone;
  Amounts request_{};
  std::map<QueueId, Amounts> remaining_;
  std::map<QueueId, Involved> involved_;
};

bool CanReclaim(const Session& s, JobId j) {
  const Snapshot& snap = s.snap();
  const SnapJob& job = snap.jobs[j];
  if (job.queue == kNone) return false;
  const SnapQueue& q = snap.queues[job.queue];
  const Amounts req = AmountsOf(TasksToAllocateRequest(s, j));
  const Amounts alloc = AmountsOf(q.allocated), fs = AmountsOf(q.fair_share);
  for (size_t r = 0; r < kNumQueueResources; ++r) {
    if (alloc[r] + req[r] > fs[r]) return false;
  }
  if (job.preemptible) return true;
  if (!job.semi_preemptible)
    return AllocatedPlusWithinDeserved(q, AmountsOf(q.allocated_non_preemptible), req);
  const Resources protected_part = s.SumRequests(ProtectedTasks(snap, job, TasksToAllocate(s, j)));
  return protected_part.IsZero() ||
         AllocatedPlusWithinDeserved(q, AmountsOf(q.allocated_non_preemptible),
                                     AmountsOf(protected_part));
}

bool VictimQueueFilter(const Session& s, ReclaimState& st, JobId reclaimer, QueueId victim_queue) {
  const Snapshot& snap = s.snap();
  const auto [rl, vl] = Leveled(snap, snap.jobs[reclaimer].queue, victim_queue);
  if (rl == kNone || vl == kNone) return true;
  const Amounts req = st.cached_request;
  const SnapQueue& rq = snap.queues[rl];
  const SnapQueue& vq = snap.queues[vl];
  if (PriorityInQuota(st, rq, AmountsOf(rq.allocated), req, vq)) return true;
  if (!AllocatedPlusWithinDeserved(rq, AmountsOf(rq.allocated), req)) {
    return AboveAllocatableShare(vq, AmountsOf(vq.allocated));
  }
  return DeservedReclaimCandidate(vq, req);
}

// The verdict depends on the victim's queue only: one per queue while the state is unchanged.
bool VictimFilter(const Session& s, ReclaimState& st, JobId reclaimer, QueueId q) {
  if (st.cached_job != reclaimer) {
    st.cached_job = reclaimer;
    st.cached_request = AmountsOf(TasksToAllocateRequest(s, reclaimer));
    st.verdicts.clear();
  }
  if (st.verdict_version != s.StateVersion()) {
    st.verdict_version = s.StateVersion();
    st.verdicts.clear();
  }
  if (q == kNone) return VictimQueueFilter(s, st, reclaimer, q);
  st.verdicts.resize(s.snap().queues.size(), -1);
  int8_t& verdict = st.verdicts[q];
  if (verdict < 0) verdict = VictimQueueFilter(s, st, reclaimer, q) ? 1 : 0;
  return verdict == 1;
}

// A pending job of a queue other than `q` may reclaim now (CanReclaim: its queue stays within its
// fair share with the job). Preempt never changes other queues, so one answer serves a solution.
bool OtherQueueCanReclaim(const Session& s, QueueId q) {
  const Snapshot& snap = s.snap();
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    const SnapJob& job = snap.jobs[j];
    if (job.queue == kNone || job.queue == q) continue;
    const bool pending = std::any_of(job.pods.begin(), job.pods.end(), [&](PodId p) {
      return snap.pods[p].status == PodStatus::kPending;
    });
    if (pending && CanReclaim(s, j)) return true;
  }
  return false;
}

// kai only (docs/deviations.md): a preemption may not grow its queue, in a resource, to above the
// queue's fair share while a job of another queue may reclaim: reclaim would take that gain back
// next cycle, trading the preempted job for pods evicted at once, after which the victim's queue
// mates may reclaim in turn (a preempt/reclaim cycle). A preemption that swaps like for like,
// stays within the fair share, or takes what no other queue can claim, is KAI's.
bool PreemptorStaysWithinFairShare(const Session& s, ReclaimState& st, const Scenario& sc) {
  const QueueId q = s.snap().jobs[sc.preemptor].queue;
  if (q == kNone || st.frozen.allocated.size() <= static_cast<size_t>(q)) return true;
  const SnapQueue& queue = s.snap().queues[q];
  const Amounts now = AmountsOf(queue.allocated);
  const Amounts fair = AmountsOf(queue.fair_share);
  bool grows_above = false;
  for (size_t r = 0; r < now.size(); ++r) {
    grows_above = grows_above || (now[r] > st.frozen.allocated[q][r] && now[r] > fair[r]);
  }
  if (!grows_above) return true;
  if (!st.other_can_reclaim) st.other_can_reclaim = OtherQueueCanReclaim(s, q);
  return !*st.other_can_reclaim;
}

}  // namespace

void RegisterReclaimHooks(Session& s, double multiplier, bool priority_in_quota) {
  auto state = std::make_shared<ReclaimState>();
  state->multiplier = multiplier < 1 ? 1 : multiplier;
  state->priority_in_quota = priority_in_quota;
  s.SetCanReclaim(CanReclaim);
  s.AddVictimQueueFilter(DisruptionKind::kReclaim, [state](const Session& ss, JobId r, QueueId q) {
    return VictimFilter(ss, *state, r, q);
  });
  s.AddSolutionStart([state](Session& ss) {
    state->cached_job = kNone;
    state->verdicts.clear();
    state->other_can_reclaim.reset();
    state->growing.Reset();
    state->frozen.allocated.clear();
    state->frozen.allocated_np.clear();
    for (const SnapQueue& q : ss.snap().queues) {
      state->frozen.allocated.push_back(AmountsOf(q.allocated));
      state->frozen.allocated_np.push_back(AmountsOf(q.allocated_non_preemptible));
    }
  });
  s.AddScenarioValidator(DisruptionKind::kReclaim, [state](const Session& ss, const Scenario& sc) {
    return Validator(ss, *state, sc).Run();
  });
  s.AddScenarioValidator(DisruptionKind::kPreempt, [state](const Session& ss, const Scenario& sc) {
    return PreemptorStaysWithinFairShare(ss, *state, sc);
  });
  s.AddScenarioPrecheck(DisruptionKind::kReclaim,
                        [state](const Session& ss, const Scenario& sc, const Resources& min) {
                          return Validator(ss, *state, sc).Possible(AmountsOf(min), *state);
                        });
}

}  // namespace kai::plugins::proportion
