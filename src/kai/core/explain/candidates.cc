// Candidate changes from the first cycle's typed reasons (never from their text): each reason
// kind names what would lift it, and its fields give the amount or the object involved.
#include "kai/core/explain/candidates.h"

#include <algorithm>
#include <map>
#include <set>

#include "kai/core/plugins/predicates/predicates.h"

namespace kai::explain_detail {

Candidate Ladder(std::vector<Change> rungs, bool monotone) {
  auto shared = std::make_shared<std::vector<Change>>(std::move(rungs));
  return Candidate{.rungs = shared->size(),
                   .rung = [shared](size_t i) { return (*shared)[i]; },
                   .monotone = monotone};
}

namespace {

constexpr int kMaxAmountRungs = 32;  // amounts searched in at most this many steps
constexpr int kMaxWaitRungs = 64;
constexpr size_t kMaxTaintSets = 3;

// The granularity of amounts searched for a resource: 1 GPU, 1 CPU, 1 GiB.
int64_t Granularity(const std::string& resource) {
  if (resource == "memory") return int64_t{1} << 30;
  return 1000;
}

// Rungs step, 2*step, ... up to `most` (rounded up to the granularity), at most kMaxAmountRungs.
Candidate AmountLadder(const Change& base, int64_t most) {
  const int64_t unit = Granularity(base.resource);
  int64_t step = unit;
  const int64_t units = (most + unit - 1) / unit;
  if (units > kMaxAmountRungs) step = unit * ((units + kMaxAmountRungs - 1) / kMaxAmountRungs);
  std::vector<Change> rungs;
  for (int64_t a = step; a < most + step; a += step) {
    rungs.push_back(base);
    rungs.back().amount = a;
  }
  return Ladder(std::move(rungs), true);
}

// The limit or non-preemptible quota a capacity reason names, raised by exactly what it lacks:
// any less and the same check (requested > what the cap leaves) fails again.
Candidate ExactRaise(const Baseline& b, const QueueCapReason& r, ChangeKind kind) {
  return Ladder({Change{.kind = kind,
                        .workload = b.edited,
                        .queue = r.queue,
                        .resource = r.resource,
                        .amount = r.requested - r.available}},
                true);
}

// Pods of the workload (objects), for the pod-level candidates.
std::vector<const PodObject*> PodObjects(const Baseline& b) {
  std::vector<const PodObject*> out;
  for (PodId p : b.pods) out.push_back(b.session.snap().pods[p].obj);
  return out;
}

void SelectorCandidates(const Baseline& b, std::vector<Candidate>& out) {
  std::set<std::string> keys;
  for (const PodObject* p : PodObjects(b)) {
    for (const auto& [k, v] : p->node_selector) keys.insert(k.str());
  }
  for (const std::string& key : keys) {
    out.push_back(Ladder(
        {Change{.kind = ChangeKind::kRemoveNodeSelector, .workload = b.edited, .key = key}}, true));
  }
}

// The taints a node has that the pod does not tolerate (all of them, in the node's order).
std::vector<Taint> UntoleratedTaints(const PodObject& pod, const NodeObject& node) {
  std::vector<Toleration> tolerations(pod.tolerations.begin(), pod.tolerations.end());
  std::vector<Taint> out;
  while (const Taint* t = plugins::UntoleratedTaint(tolerations, node)) {
    out.push_back(*t);
    tolerations.push_back({t->key, "Equal", t->value, t->effect});
  }
  return out;
}

// The sets of taints that keep the pod off nodes it would otherwise match; smallest sets, then
// those that open the most nodes, first.
void TaintCandidates(const Baseline& b, std::vector<Candidate>& out) {
  const PodObject& pod = *PodObjects(b).front();
  std::map<std::vector<std::string>, std::pair<std::vector<Taint>, int>> sets;
  for (const SnapNode& n : b.session.snap().nodes) {
    if (!n.obj || !plugins::MatchesNodeSelector(pod.node_selector, *n.obj)) continue;
    std::vector<Taint> taints = UntoleratedTaints(pod, *n.obj);
    if (taints.empty()) continue;
    std::vector<std::string> key;
    for (const Taint& t : taints) key.push_back(t.key + "=" + t.value + ":" + t.effect);
    std::sort(key.begin(), key.end());
    auto& entry = sets[key];
    entry.first = std::move(taints);
    ++entry.second;
  }
  std::vector<std::pair<std::vector<Taint>, int>> order;
  for (auto& [k, v] : sets) order.push_back(std::move(v));
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return std::make_pair(x.first.size(), -x.second) < std::make_pair(y.first.size(), -y.second);
  });
  for (size_t i = 0; i < order.size() && i < kMaxTaintSets; ++i) {
    out.push_back(Ladder(
        {Change{
            .kind = ChangeKind::kTolerateTaints, .workload = b.edited, .taints = order[i].first}},
        true));
  }
}

const TopologyConstraintSpec* ConstraintOf(const SnapJob& job, const std::string& sub_group) {
  if (sub_group.empty())
    return job.obj->topology_constraint ? &*job.obj->topology_constraint : nullptr;
  for (const SubGroupSpec& sg : job.obj->sub_groups) {
    if (sg.name == sub_group && sg.topology_constraint) return &*sg.topology_constraint;
  }
  return nullptr;
}

// The required level moved up one level at a time, then dropped.
std::optional<Candidate> TopologyCandidate(const Baseline& b, const TopologyReason& r) {
  if (b.job == kNone) return std::nullopt;
  const TopologyConstraintSpec* spec = ConstraintOf(b.session.snap().jobs[b.job], r.sub_group);
  if (!spec || spec->required_level.empty()) return std::nullopt;
  const TopologyObject* topo = nullptr;
  for (const TopologyObject& t : b.world.topologies) {
    if (t.meta.name == spec->topology.str()) topo = &t;
  }
  if (!topo) return std::nullopt;
  const std::string required = spec->required_level.str();
  auto at = std::find_if(topo->levels.begin(), topo->levels.end(), [&](const TopologyLevel& l) {
    return l.node_label == required || l.alias == required;
  });
  if (at == topo->levels.end()) return std::nullopt;
  std::vector<Change> rungs;
  const Change base{.kind = ChangeKind::kRelaxTopology,
                    .workload = b.edited,
                    .sub_group = r.sub_group,
                    .from_level = required};
  for (auto l = at; l != topo->levels.begin();) {
    --l;
    rungs.push_back(base);
    rungs.back().to_level = l->alias.empty() ? l->node_label : l->alias;
  }
  rungs.push_back(base);
  return Ladder(std::move(rungs), true);
}

// The GPU quota of the workload's queue raised until its queue is within quota with the
// workload's pods (its fair share then covers them, so reclaim may take room for it).
std::optional<Candidate> QuotaCandidate(const Baseline& b) {
  if (b.job == kNone) return std::nullopt;
  const Snapshot& snap = b.session.snap();
  const SnapQueue& q = snap.queues[snap.jobs[b.job].queue];
  if (q.gpu.quota < 0) return std::nullopt;
  int64_t pending = 0;
  for (PodId p : b.pods) {
    if (!IsActiveAllocated(snap.pods[p].status)) pending += snap.pods[p].request.milli_gpu;
  }
  const int64_t most = q.allocated.milli_gpu + pending - q.gpu.quota;
  if (pending == 0 || most <= 0) return std::nullopt;
  return AmountLadder(Change{.kind = ChangeKind::kRaiseQuota,
                             .workload = b.edited,
                             .queue = std::string(q.name),
                             .resource = "nvidia.com/gpu"},
                      most);
}

// Every min runtime that may apply to a job of `queue`: the values set on it and its ancestors,
// and the plugin's defaults.
std::set<int64_t> MinRuntimes(const Baseline& b, QueueId queue) {
  const Snapshot& snap = b.session.snap();
  std::set<int64_t> out = b.config.DefaultMinRuntimes();
  for (QueueId q = queue; q != kNone; q = snap.queues[q].parent) {
    if (const auto& v = snap.queues[q].obj->preempt_min_runtime) out.insert(*v);
    if (const auto& v = snap.queues[q].obj->reclaim_min_runtime) out.insert(*v);
  }
  return out;
}

std::string JobName(const SnapJob& j) { return std::string(j.ns) + "/" + std::string(j.name); }

// Times at which something that holds the workload back ends: running jobs' min runtimes, the
// workload's own preemption delay.
std::map<UnixSeconds, std::string> WaitTimes(const Baseline& b) {
  const Snapshot& snap = b.session.snap();
  std::map<UnixSeconds, std::string> out;
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    const SnapJob& job = snap.jobs[j];
    if (j == b.job || !job.last_start || job.active_allocated == 0 || job.queue == kNone) continue;
    for (int64_t v : MinRuntimes(b, job.queue)) {
      const UnixSeconds t = *job.last_start + v;
      if (t > snap.now) out.try_emplace(t, "the min runtime of job " + JobName(job) + " ends");
    }
  }
  if (b.job != kNone) {
    const std::optional<UnixSeconds> end = snap.jobs[b.job].PreemptionDelayEnd();
    if (end && *end > snap.now) out[*end] = "its preemption delay ends";
  }
  return out;
}

std::optional<Candidate> WaitCandidate(const Baseline& b) {
  std::vector<Change> rungs;
  for (const auto& [t, what] : WaitTimes(b)) {
    if (static_cast<int>(rungs.size()) == kMaxWaitRungs) break;
    rungs.push_back(
        Change{.kind = ChangeKind::kWait, .workload = b.edited, .at = t, .waiting_for = what});
  }
  if (rungs.empty()) return std::nullopt;
  return Ladder(std::move(rungs), true);
}

bool NeedsRoom(const Reason& r) {
  switch (r.kind()) {
    case ReasonKind::kGang:
    case ReasonKind::kNoVictims:
    case ReasonKind::kPreemptionDelay:
    case ReasonKind::kTopology:
      return true;
    case ReasonKind::kNodes:
      return !IsStaticMismatch(r.As<NodesReason>()->code) &&
             r.As<NodesReason>()->code != FitCode::kFits;
    default:
      return false;
  }
}

void RoomCandidates(const Baseline& b, std::vector<Candidate>& out) {
  if (auto c = WaitCandidate(b)) out.push_back(std::move(*c));
  if (auto c = QuotaCandidate(b)) out.push_back(std::move(*c));
  if (auto c = FreeGpusCandidate(b)) out.push_back(std::move(*c));
}

}  // namespace

std::vector<Candidate> PendingCandidates(const Baseline& b) {
  std::vector<Candidate> out;
  std::set<FitCode> mismatches;
  bool room = false, capped = false;
  for (const Reason& r : b.outcome.reasons) {
    room = room || NeedsRoom(r);
    // Below its queue's limit or non-preemptible quota, no room elsewhere can serve the job.
    capped = capped || r.QueueCap() != nullptr;
    if (const auto* cap = r.As<OverLimitReason>()) {
      out.push_back(ExactRaise(b, *cap, ChangeKind::kRaiseLimit));
    }
    if (const auto* cap = r.As<NonPreemptibleOverQuotaReason>()) {
      out.push_back(ExactRaise(b, *cap, ChangeKind::kRaiseQuota));
    }
    if (const auto* t = r.As<TopologyReason>()) {
      if (auto c = TopologyCandidate(b, *t)) out.push_back(std::move(*c));
    }
    const auto* nodes = r.As<NodesReason>();
    if (nodes && IsStaticMismatch(nodes->code)) mismatches.insert(nodes->code);
  }
  if (mismatches.count(FitCode::kNodeSelectorMismatch)) SelectorCandidates(b, out);
  if (mismatches.count(FitCode::kNodeAffinityMismatch)) {
    out.push_back(
        Ladder({Change{.kind = ChangeKind::kRemoveNodeAffinity, .workload = b.edited}}, true));
  }
  if (mismatches.count(FitCode::kTaintNotTolerated)) TaintCandidates(b, out);
  if (room && !capped) RoomCandidates(b, out);
  return out;
}

namespace {

// A min runtime on the victim's queue, or on one above it (reclaim resolves it from the victim's
// side of the two queues' common ancestor), long enough to cover the job's runtime so far.
std::optional<Candidate> MinRuntimeProtection(const Baseline& b, const std::string& disruption) {
  const Snapshot& snap = b.session.snap();
  const SnapJob& job = snap.jobs[b.job];
  if (!job.last_start || job.queue == kNone) return std::nullopt;
  const int64_t runtime = snap.now - *job.last_start + 1;
  std::vector<Change> rungs;
  for (QueueId q = job.queue; q != kNone; q = snap.queues[q].parent) {
    rungs.push_back(Change{.kind = ChangeKind::kMinRuntime,
                           .workload = b.edited,
                           .queue = std::string(snap.queues[q].name),
                           .amount = std::max<int64_t>(runtime, 1),
                           .disruption = disruption});
  }
  return Ladder(std::move(rungs), false);
}

// The victim's queue's GPU quota raised until the GPUs its job holds are within it.
std::optional<Candidate> QuotaProtection(const Baseline& b) {
  const Snapshot& snap = b.session.snap();
  const SnapQueue& q = snap.queues[snap.jobs[b.job].queue];
  int64_t held = 0;
  for (PodId p : b.pods) held += snap.pods[p].request.milli_gpu;
  if (q.gpu.quota < 0 || held == 0) return std::nullopt;
  return AmountLadder(Change{.kind = ChangeKind::kRaiseQuota,
                             .workload = b.edited,
                             .queue = std::string(q.name),
                             .resource = "nvidia.com/gpu"},
                      held);
}

}  // namespace

std::vector<Candidate> ProtectionCandidates(const Baseline& b) {
  std::vector<Candidate> out;
  if (b.job == kNone) return out;
  const std::string& action = b.outcome.eviction.action;
  const SnapJob& job = b.session.snap().jobs[b.job];
  if (job.preemptible && !b.edited.pod_group.empty()) {
    out.push_back(
        Ladder({Change{.kind = ChangeKind::kNonPreemptible, .workload = b.edited}}, true));
  }
  if (action == "preempt" || action == "reclaim") {
    if (auto c = MinRuntimeProtection(b, action)) out.push_back(std::move(*c));
  }
  if (action == "reclaim") {
    if (auto c = QuotaProtection(b)) out.push_back(std::move(*c));
  }
  return out;
}

}  // namespace kai::explain_detail
