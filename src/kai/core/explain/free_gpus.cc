// "Free N GPUs on these nodes": which running pods to stop so that the workload's pending pods
// find room. Greedy, one pod slot at a time: each step frees the cheapest next slot (fewest GPUs,
// then fewest pods, then node name) on a node the pod could use; the search over the steps
// (counterfactual.cc) keeps the shortest prefix that the verifying cycle schedules.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "kai/core/explain/candidates.h"
#include "kai/core/plugins/predicates/predicates.h"

namespace kai::explain_detail {
namespace {

constexpr CoreResource kSlotResources[] = {CoreResource::kCpu, CoreResource::kMemory,
                                           CoreResource::kGpu, CoreResource::kPods};

// How many pods asking `req` fit in `avail` (core resources only).
int64_t Slots(const Resources& avail, const Resources& req) {
  int64_t n = std::numeric_limits<int32_t>::max();
  for (CoreResource r : kSlotResources) {
    const int64_t need = req.Get(r);
    if (need > 0) n = std::min(n, std::max<int64_t>(0, avail.Get(r)) / need);
  }
  return n;
}

// The pod's own constraints allow the node, and the empty node could hold it.
bool CouldHost(const SnapNode& n, const PodObject& pod, const Resources& req) {
  if (!n.unusable_reason.empty() || !n.obj) return false;
  if (!plugins::MatchesNodeSelector(pod.node_selector, *n.obj)) return false;
  if (!pod.required_node_affinity.empty() &&
      !plugins::MatchesRequiredNodeAffinity(pod.required_node_affinity, *n.obj))
    return false;
  if (plugins::UntoleratedTaint(pod.tolerations, *n.obj)) return false;
  return Slots(n.allocatable, req) > 0;
}

bool OverQuota(const Snapshot& snap, JobId j) {
  if (j == kNone || snap.jobs[j].queue == kNone) return false;
  const SnapQueue& q = snap.queues[snap.jobs[j].queue];
  return q.gpu.quota >= 0 && q.allocated.milli_gpu > q.gpu.quota;
}

// Pods to stop first: of over-quota queues, preemptible, lower priority, then by name.
auto VictimOrder(const Snapshot& snap) {
  return [&snap](PodId a, PodId b) {
    const SnapPod& pa = snap.pods[a];
    const SnapPod& pb = snap.pods[b];
    const SnapJob& ja = snap.jobs[pa.job];
    const SnapJob& jb = snap.jobs[pb.job];
    auto key = [&](const SnapPod& p, const SnapJob& j) {
      return std::make_tuple(!OverQuota(snap, p.job), !j.preemptible, j.priority, p.ns, p.name);
    };
    return key(pa, ja) < key(pb, jb);
  };
}

struct NodePlan {
  NodeId node = kNone;
  Resources avail;
  std::vector<PodId> victims;  // in VictimOrder
  std::vector<bool> taken;
};

struct Step {
  size_t plan = 0;              // index into the plans
  std::vector<size_t> victims;  // indices into the plan's victims
  int64_t milli_gpu = 0;
  auto Cost() const { return std::make_pair(milli_gpu, victims.size()); }
};

// The pod holds a resource that `avail` lacks for `slots` pods of `req`.
bool HoldsShort(const Resources& avail, const Resources& req, int64_t slots,
                const Resources& held) {
  for (CoreResource r : kSlotResources) {
    if (req.Get(r) > 0 && held.Get(r) > 0 && avail.Get(r) < slots * req.Get(r)) return true;
  }
  return false;
}

std::optional<Step> NextSlot(const Snapshot& snap, const NodePlan& plan, size_t index,
                             const Resources& req) {
  Resources avail = plan.avail;
  const int64_t target = Slots(avail, req) + 1;
  Step step{.plan = index};
  for (size_t i = 0; i < plan.victims.size() && Slots(avail, req) < target; ++i) {
    const SnapPod& p = snap.pods[plan.victims[i]];
    if (plan.taken[i] || !HoldsShort(avail, req, target, p.request)) continue;
    avail += p.request;
    step.victims.push_back(i);
    step.milli_gpu += p.request.milli_gpu;
  }
  if (Slots(avail, req) < target) return std::nullopt;
  return step;
}

// Running pods of kai's other jobs on the node, in the order they would be stopped.
std::vector<PodId> Victims(const Baseline& b, const SnapNode& n) {
  const Snapshot& snap = b.session.snap();
  std::vector<PodId> out;
  for (PodId p : n.pods) {
    const SnapPod& pod = snap.pods[p];
    if (!IsAllocated(pod.status) || !pod.kai_scheduled || pod.job == kNone || pod.job == b.job)
      continue;
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), VictimOrder(snap));
  return out;
}

// The largest request among the workload's pods still pending.
std::optional<PodId> PendingTemplate(const Baseline& b) {
  const Snapshot& snap = b.session.snap();
  std::optional<PodId> best;
  for (PodId p : b.pods) {
    const SnapPod& pod = snap.pods[p];
    if (IsActiveAllocated(pod.status)) continue;
    auto size = [&](PodId q) {
      const Resources& r = snap.pods[q].request;
      return std::make_tuple(r.milli_gpu, r.milli_cpu, r.memory);
    };
    if (!best || size(p) > size(*best)) best = p;
  }
  return best;
}

// A topology reason's best domain (its level's node label and value): room is freed there.
using DomainLabel = std::optional<std::pair<std::string, std::string>>;

DomainLabel BestDomain(const Baseline& b) {
  for (const Reason& r : b.outcome.reasons) {
    const auto* t = r.As<TopologyReason>();
    if (t && !t->level.empty() && !t->domain.empty()) return std::make_pair(t->level, t->domain);
  }
  return std::nullopt;
}

bool InDomain(const NodeObject& n, const DomainLabel& d) {
  if (!d) return true;
  auto it = n.meta.labels.find(d->first);
  return it != n.meta.labels.end() && it->second == d->second;
}

std::vector<NodePlan> Plans(const Baseline& b, const SnapPod& pod, int64_t& free_slots) {
  std::vector<NodePlan> plans;
  const DomainLabel domain = BestDomain(b);
  for (const SnapNode& n : b.session.snap().nodes) {
    if (!CouldHost(n, *pod.obj, pod.request) || !InDomain(*n.obj, domain)) continue;
    NodePlan plan{.node = static_cast<NodeId>(&n - b.session.snap().nodes.data()), .avail = n.idle};
    plan.avail += n.releasing;
    free_slots += Slots(plan.avail, pod.request);
    plan.victims = Victims(b, n);
    plan.taken.assign(plan.victims.size(), false);
    plans.push_back(std::move(plan));
  }
  return plans;
}

// Up to `count` greedy steps, each the cheapest next slot over all nodes.
std::vector<Step> GreedySteps(const Baseline& b, std::vector<NodePlan>& plans, const Resources& req,
                              int64_t count) {
  const Snapshot& snap = b.session.snap();
  std::vector<std::optional<Step>> next;
  for (size_t i = 0; i < plans.size(); ++i) next.push_back(NextSlot(snap, plans[i], i, req));
  std::vector<Step> steps;
  while (static_cast<int64_t>(steps.size()) < count) {
    size_t best = next.size();
    for (size_t i = 0; i < next.size(); ++i) {
      if (!next[i]) continue;
      if (best == next.size() || next[i]->Cost() < next[best]->Cost()) best = i;
    }
    if (best == next.size()) break;
    NodePlan& plan = plans[best];
    for (size_t v : next[best]->victims) {
      plan.taken[v] = true;
      plan.avail += snap.pods[plan.victims[v]].request;
    }
    steps.push_back(std::move(*next[best]));
    next[best] = NextSlot(snap, plan, best, req);
  }
  return steps;
}

std::string JobName(const Snapshot& snap, JobId j) {
  return std::string(snap.jobs[j].ns) + "/" + std::string(snap.jobs[j].name);
}

// The greedy plan, shared by the rungs of the candidate.
struct FreePlan {
  const Baseline* b = nullptr;
  std::vector<NodePlan> plans;
  std::vector<Step> steps;
};

void AddFreedPod(const Snapshot& snap, const NodePlan& plan, PodId p, FreedJob& j, Change& c) {
  const SnapPod& pod = snap.pods[p];
  j.job = JobName(snap, pod.job);
  j.queue = std::string(snap.queues[snap.jobs[pod.job].queue].name);
  j.over_quota = OverQuota(snap, pod.job);
  j.milli_gpu += pod.request.milli_gpu;
  j.pods.push_back(std::string(pod.ns) + "/" + std::string(pod.name));
  j.nodes.push_back(std::string(snap.nodes[plan.node].name));
  c.nodes.push_back(j.nodes.back());
  c.amount += pod.request.milli_gpu;
}

void SortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The change that stops the pods of steps [0, n].
Change FreeChange(const FreePlan& f, size_t n) {
  const Snapshot& snap = f.b->session.snap();
  std::map<JobId, FreedJob> jobs;
  Change c{.kind = ChangeKind::kFreeGpus, .workload = f.b->edited};
  for (size_t s = 0; s <= n; ++s) {
    const NodePlan& plan = f.plans[f.steps[s].plan];
    for (size_t v : f.steps[s].victims) {
      AddFreedPod(snap, plan, plan.victims[v], jobs[snap.pods[plan.victims[v]].job], c);
    }
  }
  for (auto& [id, j] : jobs) {
    SortUnique(j.nodes);
    c.freed.push_back(std::move(j));
  }
  SortUnique(c.nodes);
  return c;
}

}  // namespace

std::optional<Candidate> FreeGpusCandidate(const Baseline& b) {
  const std::optional<PodId> tmpl = PendingTemplate(b);
  if (!tmpl || b.job == kNone) return std::nullopt;
  const SnapPod& pod = b.session.snap().pods[*tmpl];
  auto f = std::make_shared<FreePlan>();
  f->b = &b;
  int64_t free_slots = 0;
  f->plans = Plans(b, pod, free_slots);
  const int64_t missing = b.outcome.required - b.outcome.scheduled;
  const int64_t shortfall = std::max<int64_t>(1, missing - free_slots);
  // A few slots beyond the shortfall, in case the cycle gives part of the room to others.
  f->steps = GreedySteps(b, f->plans, pod.request, shortfall + std::min<int64_t>(shortfall, 8));
  if (f->steps.empty()) return std::nullopt;
  // Fewer slots than the shortfall cannot hold the missing pods: the search starts there.
  const size_t first = std::min(f->steps.size(), static_cast<size_t>(shortfall)) - 1;
  return Candidate{.rungs = f->steps.size(),
                   .rung = [f](size_t n) { return FreeChange(*f, n); },
                   .monotone = true,
                   .first = first};
}

}  // namespace kai::explain_detail
