#include "kai/core/plugins/proportion/proportion.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "kai/core/framework/job_tasks.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai::plugins::proportion {
namespace {

using kai::proportion::DivideResource;
using kai::proportion::DivisionParams;
using kai::proportion::DivisionQueue;

// Only cpu, memory and gpu take part in queue accounting; MIG instances count as their GPUs.
Resources QueueView(const Resources& r) {
  Resources out;
  out.milli_cpu = r.milli_cpu;
  out.memory = r.memory;
  out.milli_gpu = r.milli_gpu + MigMilliGpus(r);
  return out;
}

template <class F>
void ForQueueAndAncestors(Snapshot& snap, QueueId q, F f) {
  for (; q != kNone; q = snap.queues[q].parent) f(snap.queues[q]);
}

// Queue accounting has cpu, memory and gpu only (QueueResources never sets anything else).
void AddCore(Resources& to, const Resources& r) {
  to.milli_cpu += r.milli_cpu;
  to.memory += r.memory;
  to.milli_gpu += r.milli_gpu;
}

// Adds every queue's totals to its parent's, children before parents.
void RollUp(Snapshot& snap, QueueId id) {
  SnapQueue& q = snap.queues[id];
  for (QueueId c : q.children) {
    RollUp(snap, c);
    const SnapQueue& child = snap.queues[c];
    AddCore(q.allocated, child.allocated);
    AddCore(q.allocated_non_preemptible, child.allocated_non_preemptible);
    AddCore(q.requested, child.requested);
  }
}

// Each queue's allocated, non-preemptible and requested resources: its jobs' pods, summed into
// the job's queue first and then up the tree (one pass over the pods, one over the queues).
void AccumulateUsage(Snapshot& snap) {
  for (auto& q : snap.queues) {
    q.allocated = q.allocated_non_preemptible = q.requested = Resources{};
  }
  for (const SnapJob& job : snap.jobs) {
    if (job.queue == kNone) continue;
    SnapQueue& q = snap.queues[job.queue];
    for (PodId p : job.pods) {
      const SnapPod& pod = snap.pods[p];
      if (IsAllocated(pod.status)) {
        const Resources r = AcceptedQueueResources(pod);
        AddCore(q.allocated, r);
        AddCore(q.requested, r);
        if (ChargedNonPreemptible(job, pod)) AddCore(q.allocated_non_preemptible, r);
      } else if (pod.status == PodStatus::kPending) {
        AddCore(q.requested, QueueResources(pod));
      }
    }
  }
  for (QueueId root : snap.root_queues) RollUp(snap, root);
}

int64_t FloorUnit(CoreResource r) { return r == CoreResource::kGpu ? kMilliPerUnit : 1; }

void DivideLevel(Snapshot& snap, const std::vector<QueueId>& level, const Resources& total,
                 double k_value) {
  if (level.empty()) return;
  for (size_t ri = 0; ri < kQueueResources.size(); ++ri) {
    const CoreResource r = kQueueResources[ri];
    std::vector<DivisionQueue> input;
    input.reserve(level.size());
    for (QueueId id : level) {
      const SnapQueue& q = snap.queues[id];
      const QueueQuota& quota = q.Quota(r);
      input.push_back(DivisionQueue{quota.quota, quota.limit, quota.weight_milli, q.priority,
                                    q.requested.Get(r), q.usage[ri], q.creation, q.name});
    }
    const auto shares = DivideResource(input, DivisionParams{total.Get(r), FloorUnit(r), k_value});
    for (size_t i = 0; i < level.size(); ++i)
      snap.queues[level[i]].fair_share.Mutable(r) = shares[i];
  }
  for (QueueId id : level) {
    const SnapQueue& q = snap.queues[id];
    DivideLevel(snap, q.children, q.fair_share, k_value);
  }
}

// A queue's numbers that KAI's queue order reads besides its allocation, in kQueueResources
// order. Fair shares are set at session open and stay fixed for the session, so these are read
// once per session instead of once per comparison.
struct OrderLimits {
  Amounts share{};  // AllocatableShare; -1 unlimited
  // The dominant share's denominator: the share, or the capacity when the share is unlimited.
  Amounts denominator{};
  Amounts deserved{};  // quota; -1 unlimited
  Amounts fair{};
};

OrderLimits LimitsOf(const Snapshot& snap, const SnapQueue& q) {
  OrderLimits l;
  for (size_t i = 0; i < kQueueResources.size(); ++i) {
    const CoreResource r = kQueueResources[i];
    l.share[i] = AllocatableShare(q, r);
    l.denominator[i] = l.share[i] < 0 ? snap.fair_share_capacity.Get(r) : l.share[i];
    l.deserved[i] = q.Quota(r).quota;
    l.fair[i] = q.fair_share.Get(r);
  }
  return l;
}

// KAI keeps GPUs in devices; ratios against a zero share multiply the value by 1000 in those units.
double KaiUnits(size_t i, int64_t v) {
  return kQueueResources[i] == CoreResource::kGpu ? static_cast<double>(v) / kMilliPerUnit
                                                  : static_cast<double>(v);
}

// One side of a queue-order comparison: the queue's limits, its allocation and the request of
// the job it would serve next (both in kQueueResources order).
struct OrderSide {
  const SnapQueue& queue;
  const OrderLimits& limits;
  Amounts allocated;
  Amounts request;
  // Victim order only: the victims counted as gone in the dominant share with the request
  // (KAI's calculateDominantResourceShareWithJob); every other rule reads the allocation as is.
  Amounts victims{};

  bool OverFairShare() const {
    for (size_t i = 0; i < kNumQueueResources; ++i) {
      if (!(limits.fair[i] < allocated[i])) return false;
    }
    return true;
  }
  bool WithinDeserved() const {
    for (size_t i = 0; i < kNumQueueResources; ++i) {
      if (limits.deserved[i] >= 0 && allocated[i] + request[i] > limits.deserved[i]) return false;
    }
    return true;
  }
  bool UsesZeroShare() const {
    for (size_t i = 0; i < kNumQueueResources; ++i) {
      if (limits.share[i] == 0 && allocated[i] + request[i] > 0) return true;
    }
    return false;
  }
  // The largest used / allocatable share over the resources, with or without the request.
  double DominantShare(bool with_request) const {
    double share = 0;
    for (size_t i = 0; i < kNumQueueResources; ++i) {
      const int64_t used = allocated[i] + (with_request ? request[i] - victims[i] : 0);
      const int64_t d = limits.denominator[i];
      const double s =
          d == 0 ? KaiUnits(i, used) * 1000 : static_cast<double>(used) / static_cast<double>(d);
      share = std::max(share, s);
    }
    return share;
  }
};

// Element by element: std::array's == compiled to a memcmp call here, 11 % of a deep backlog's
// cycle when the queue order asked it at every comparison.
bool SameAmounts(const Amounts& a, const Amounts& b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

// What KAI's queue order reads of one side, computed once: a side is compared with many others
// while a job queue scans its queues, and its queue's state stays the same between scans.
struct OrderFacts {
  const OrderLimits* limits = nullptr;
  int32_t priority = 0;
  bool under_fair_share = false, within_deserved = false, no_zero_share = false;
  double dominant_with_request = 0, dominant = 0;

  static OrderFacts Of(const OrderSide& side) {
    return {.limits = &side.limits,
            .priority = side.queue.priority,
            .under_fair_share = !side.OverFairShare(),
            .within_deserved = side.WithinDeserved(),
            .no_zero_share = !side.UsesZeroShare(),
            .dominant_with_request = side.DominantShare(true),
            .dominant = side.DominantShare(false)};
  }
};

// -1: a's allocatable share is <= b's everywhere and < somewhere; +1 the reverse; else 0.
int CompareAllocatableShares(const OrderLimits& a, const OrderLimits& b) {
  bool a_le = true, a_lt = false, b_le = true, b_lt = false;
  for (size_t i = 0; i < kNumQueueResources; ++i) {
    const int64_t x = a.share[i], y = b.share[i];
    a_le &= x <= y;
    a_lt |= x < y;
    b_le &= y <= x;
    b_lt |= y < x;
  }
  if (a_le && a_lt) return -1;
  if (b_le && b_lt) return 1;
  return 0;
}

int Prefer(bool a, bool b) { return a == b ? 0 : (a ? -1 : 1); }

int CompareDouble(double a, double b) { return a == b ? 0 : (a < b ? -1 : 1); }

// KAI's queue order (queue_order.go), first decisive rule wins.
int CompareQueues(const OrderFacts& a, const OrderFacts& b) {
  if (int c = Prefer(a.under_fair_share, b.under_fair_share)) return c;
  if (int c = Prefer(a.within_deserved, b.within_deserved)) return c;
  if (a.priority != b.priority) return a.priority > b.priority ? -1 : 1;
  if (int c = Prefer(a.no_zero_share, b.no_zero_share)) return c;
  if (int c = CompareDouble(a.dominant_with_request, b.dominant_with_request)) return c;
  if (int c = CompareDouble(a.dominant, b.dominant)) return c;
  if (int c = CompareAllocatableShares(*a.limits, *b.limits)) return c;
  return 0;  // the session breaks ties by creation time, then name
}

class ProportionPlugin : public Plugin {
 public:
  ProportionPlugin(double k_value, double multiplier, bool priority_in_quota)
      : k_value_(k_value), multiplier_(multiplier), priority_in_quota_(priority_in_quota) {}

  void OnSessionOpen(Session& s) override {
    ComputeQueueShares(s.snap(), k_value_);
    limits_.clear();
    for (const SnapQueue& q : s.snap().queues) limits_.push_back(LimitsOf(s.snap(), q));
    next_steps_.assign(s.snap().jobs.size(), NextStep{});
    // The order reads a job only through its next-step request (the key), and queue accounting,
    // which changes only when pods move.
    facts_.assign(s.snap().queues.size(), QueueFacts{});
    s.AddQueueOrder(
        [this](const Session& ss, QueueId qa, JobId ja, QueueId qb, JobId jb) {
          const OrderFacts a = Facts(ss, qa, ja);  // a copy: qa may be qb
          return CompareQueues(a, Facts(ss, qb, jb));
        },
        [this](const Session& ss, JobId j) {
          const Resources& r = NextStepRequest(ss, j);
          return QueueJobKey{r.milli_cpu, r.memory, r.milli_gpu};
        });
    s.AddVictimQueueOrder([this](const Session& ss, QueueId qa, const Resources& va, QueueId qb,
                                 const Resources& vb) {
      return CompareQueues(OrderFacts::Of(VictimSide(ss, qa, va)),
                           OrderFacts::Of(VictimSide(ss, qb, vb)));
    });
    s.SetJobCapacity([](const Session& ss, JobId j, const JobRequest& request) {
      const SnapJob& job = ss.snap().jobs[j];
      auto reason = CheckQueueCapacity(ss.snap(), job.queue, request.all, request.protected_part);
      auto* floor = reason ? reason->As<NonPreemptibleOverQuotaReason>() : nullptr;
      if (floor && job.semi_preemptible) {
        floor->subject = "protected pods (up to minMember per PodSet) of semi-preemptible job";
      }
      return reason;
    });
    s.AddPredicate(CheckCapacityOnNode);
    RegisterReclaimHooks(s, multiplier_, priority_in_quota_);
    s.AddAllocateHandler([](Session& ss, PodId p) { Account(ss, p, +1); });
    s.AddDeallocateHandler([](Session& ss, PodId p) { Account(ss, p, -1); });
  }

 private:
  // A job's next-step request in the queue view, valid while the job's version is unchanged.
  struct NextStep {
    uint64_t version = 0;  // 0: not computed (session versions start at 1)
    Resources request;
  };

  // KAI sizes the job with virtually evicted pods counted as pending (isRealAllocation=false).
  const Resources& NextStepRequest(const Session& s, JobId j) {
    NextStep& step = next_steps_[j];
    if (step.version != s.JobVersion(j)) {
      step.request = QueueView(TasksToAllocateRequest(s, j, false));
      step.version = s.JobVersion(j);
    }
    return step.request;
  }

  // The order's facts of the queue serving the job next. The queue order reads a job only through
  // its next-step request and the queue only through its subtree's state (Session::QueueVersion),
  // so each queue keeps the facts of the last request it was asked with.
  const OrderFacts& Facts(const Session& s, QueueId q, JobId j) {
    const Amounts request = AmountsOf(NextStepRequest(s, j));
    QueueFacts& known = facts_[q];
    if (!known.valid || known.version != s.QueueVersion(q) ||
        !SameAmounts(known.request, request)) {
      const SnapQueue& queue = s.snap().queues[q];
      known = {.valid = true,
               .version = s.QueueVersion(q),
               .request = request,
               .facts = OrderFacts::Of(
                   OrderSide{queue, limits_[q], AmountsOf(queue.allocated), request})};
    }
    return known.facts;
  }

  // In victim mode KAI's queue order has no pending job: the request is empty.
  OrderSide VictimSide(const Session& s, QueueId q, const Resources& victims) {
    const SnapQueue& queue = s.snap().queues[q];
    return OrderSide{queue, limits_[q], AmountsOf(queue.allocated), Amounts{}, AmountsOf(victims)};
  }

  static void Account(Session& s, PodId p, int sign) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.job == kNone) return;
    const SnapJob& job = s.snap().jobs[pod.job];
    const Resources r = AcceptedQueueResources(pod);
    const bool charged = ChargedNonPreemptible(job, pod);
    ForQueueAndAncestors(s.snap(), job.queue, [&](SnapQueue& q) {
      if (sign > 0) {
        q.allocated += r;
        if (charged) q.allocated_non_preemptible += r;
      } else {
        q.allocated -= r;
        if (charged) q.allocated_non_preemptible -= r;
      }
    });
  }

  // KAI's IsTaskAllocationOnNodeOverCapacity: a gpu-memory pod charges its queue memory over
  // the memory of a device of the node it is tried on (ceil to 0.01 GPU, times its devices), not
  // the largest device memory the job-level check assumes, so it may fit the limit or the
  // non-preemptible quota on one node and not on another. Any other pod's request is the same on
  // every node, and the job-level check (every task of the job, before any is placed) has passed
  // it already.
  static NodeVerdict CheckCapacityOnNode(const Session& s, PodId p, NodeId n) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.share.kind != GpuShareKind::kMemory || pod.job == kNone) return {};
    const SnapJob& job = s.snap().jobs[pod.job];
    Resources request;
    request.milli_cpu = pod.request.milli_cpu;
    request.memory = pod.request.memory;
    request.milli_gpu = SharedPortionOn(s.snap().nodes[n], pod.share) * pod.share.devices;
    const bool charged = !ProtectedTasks(s.snap(), job, {p}).empty();
    const auto reason =
        CheckQueueCapacity(s.snap(), job.queue, request, charged ? request : Resources{});
    if (!reason) return {};
    const bool limit = reason->kind() == ReasonKind::kOverLimit;
    const QueueCapReason& cap = *reason->QueueCap();
    return {limit ? FitCode::kOverQueueLimit : FitCode::kNonPreemptibleOverQuota,
            {},
            "queue " + cap.queue + ": " + FormatResourceAmount(cap.resource, cap.requested) + " " +
                cap.resource + " asked on the node, " + (limit ? "limit" : "quota") + " leaves " +
                FormatResourceAmount(cap.resource, cap.available)};
  }

  double k_value_;
  double multiplier_;
  bool priority_in_quota_;
  std::vector<NextStep> next_steps_;  // per job
  std::vector<OrderLimits> limits_;   // per queue
  struct QueueFacts {
    bool valid = false;
    uint64_t version = 0;  // Session::QueueVersion the facts were computed at
    Amounts request{};
    OrderFacts facts;
  };
  std::vector<QueueFacts> facts_;  // per queue: the facts of the last side asked
};

// The first queue resource for which `request` would take `used` above the queue's `cap` (its
// limit or its quota; a negative cap is none): a reason of type R with what the cap leaves.
QueueStanding StandingOf(const SnapQueue& q) {
  return {.requested = QueueVector::Of(q.requested),
          .deserved = {q.cpu.quota, q.memory.quota, q.gpu.quota},
          .allocated = QueueVector::Of(q.allocated),
          .allocated_non_preemptible = QueueVector::Of(q.allocated_non_preemptible),
          .limits = {q.cpu.limit, q.memory.limit, q.gpu.limit}};
}

template <class R>
std::optional<Reason> OverCap(const SnapQueue& q, const Resources& request, const Resources& used,
                              int64_t QueueQuota::*cap) {
  for (CoreResource r : kQueueResources) {
    const int64_t bound = q.Quota(r).*cap;
    const int64_t need = request.Get(r);
    if (bound >= 0 && need != 0 && bound < used.Get(r) + need) {
      return R{{.queue = std::string(q.name),
                .resource = std::string(CoreResourceName(r)),
                .requested = need,
                .available = std::max<int64_t>(0, bound - used.Get(r)),
                .standing = StandingOf(q)}};
    }
  }
  return std::nullopt;
}

std::optional<Reason> OverLimit(const SnapQueue& q, const Resources& request) {
  return OverCap<OverLimitReason>(q, request, q.allocated, &QueueQuota::limit);
}

// Non-preemptible pods may not take a queue above its quota.
std::optional<Reason> OverNonPreemptibleQuota(const SnapQueue& q, const Resources& request) {
  return OverCap<NonPreemptibleOverQuotaReason>(q, request, q.allocated_non_preemptible,
                                                &QueueQuota::quota);
}

}  // namespace

int64_t AllocatableShare(const SnapQueue& q, CoreResource r) {
  const QueueQuota& quota = q.Quota(r);
  if (quota.quota < 0) return quota.limit;
  int64_t share = std::max(quota.quota, q.fair_share.Get(r));
  if (quota.limit >= 0) share = std::min(share, quota.limit);
  return share;
}

Resources FairShareCapacity(const Snapshot& snap) {
  Resources total;
  for (const SnapNode& n : snap.nodes) {
    if (!n.unusable_reason.empty()) continue;
    total += QueueView(n.allocatable);
    for (PodId p : n.pods) {
      const SnapPod& pod = snap.pods[p];
      // Background pods' places are free: fair share divides them.
      if (!pod.kai_scheduled && !pod.kai_utility && !pod.background) {
        total -= QueueView(pod.request);
      }
    }
  }
  return total;
}

void ComputeQueueShares(Snapshot& snap, double k_value) {
  AccumulateUsage(snap);
  snap.fair_share_capacity = FairShareCapacity(snap);
  DivideLevel(snap, snap.root_queues, snap.fair_share_capacity, k_value);
}

std::optional<Reason> CheckQueueCapacity(const Snapshot& snap, QueueId leaf, bool preemptible,
                                         const Resources& request) {
  return CheckQueueCapacity(snap, leaf, request, preemptible ? Resources{} : request);
}

std::optional<Reason> CheckQueueCapacity(const Snapshot& snap, QueueId leaf,
                                         const Resources& pod_request,
                                         const Resources& pod_protected_request) {
  if (leaf == kNone) return std::nullopt;
  const Resources request = QueueView(pod_request);
  const Resources protected_request = QueueView(pod_protected_request);
  auto with_request = [&](std::optional<Reason> r) {
    QueueCapReason* cap = r->QueueCap();
    cap->job_requested = QueueVector::Of(request);
    cap->job_requested_non_preemptible = QueueVector::Of(protected_request);
    return r;
  };
  for (QueueId q = leaf; q != kNone; q = snap.queues[q].parent) {
    if (auto r = OverLimit(snap.queues[q], request)) return with_request(std::move(r));
  }
  if (protected_request.IsZero()) return std::nullopt;
  for (QueueId q = leaf; q != kNone; q = snap.queues[q].parent) {
    if (auto r = OverNonPreemptibleQuota(snap.queues[q], protected_request)) {
      return with_request(std::move(r));
    }
  }
  return std::nullopt;
}

}  // namespace kai::plugins::proportion

namespace kai::plugins {

namespace {

// Reads a numeric argument; `fallback` when absent.
Result<double> NumberArgument(const PluginArguments& args, const std::string& key,
                              double fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  double v = 0;
  const std::string& text = it->second;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    return Error{"argument " + key + ": expected a number, got \"" + text + "\""};
  }
  return v;
}

}  // namespace

Result<std::unique_ptr<Plugin>> MakeProportion(const PluginArguments& args) {
  auto k_value = NumberArgument(args, "kValue", 1.0);
  if (!k_value.ok()) return k_value.error();
  // KAI's code reads the misspelt key; the documented spelling is accepted too.
  auto multiplier = NumberArgument(args, "relcaimerSaturationMultiplier", 1.0);
  if (!multiplier.ok()) return multiplier.error();
  if (args.count("reclaimerUtilizationMultiplier")) {
    multiplier = NumberArgument(args, "reclaimerUtilizationMultiplier", 1.0);
    if (!multiplier.ok()) return multiplier.error();
  }
  bool priority_in_quota = false;
  if (auto it = args.find("queuePriorityInQuotaReclaim"); it != args.end()) {
    if (it->second != "true" && it->second != "false") {
      return Error{"argument queuePriorityInQuotaReclaim: expected true or false, got \"" +
                   it->second + "\""};
    }
    priority_in_quota = it->second == "true";
  }
  return std::unique_ptr<Plugin>(std::make_unique<proportion::ProportionPlugin>(
      std::max(0.0, *k_value), std::max(1.0, *multiplier), priority_in_quota));
}

}  // namespace kai::plugins
