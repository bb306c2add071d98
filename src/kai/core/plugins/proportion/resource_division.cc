#include "kai/core/plugins/proportion/resource_division.h"

// Behaviour reference: KAI pkg/scheduler/plugins/proportion/resource_division/resource_division.go
// (with resource_share/resource_share.go for the requestable share and proportion.go for kValue).
//
// Two implementations of the same algorithm live here.
//
// DivideResource (what the proportion plugin uses) replays KAI's float64 computation, so that
// its DECISIONS are KAI's. Every amount is converted to KAI's units, amount / floor_unit (GPU
// devices = milli / 1000.0, CPU millicores, memory bytes); weights are weight_milli / 1000.0.
// Then, in double and in the Go code's operation order: the deserved phase (remaining amount
// decremented per queue), W over unsatisfied queues, w' = weight / W, P = max(0, w' + k(w' - U)),
// P' = P / sum(P), share = frozen round amount * P', "requested <= share" or floor(share) and
// remainder = share - floor, the remaining amount decremented per grant, the "== 0" and "<= 0"
// loop exits, remainders compared as doubles, and top-up of min(1, left). Only the result is
// converted back: each queue's final float64 fair share becomes integer units with
// llround(value * floor_unit) when it is within 1e-9 KAI units of a whole unit (always, short of
// ~10^7 GPU devices, where doubles get that coarse), else it is floored. Like KAI, this version
// does not clamp grants: beyond 2^53 units (about 9 PB of memory in bytes) float64 spacing
// exceeds one unit and, as in KAI, the shares may add up to a few spacings more than the total.
// P is computed without a fused multiply-add, as Go does on amd64 (Go may fuse on arm64); our
// x86-64 baseline build has no FMA for the compiler to contract into. Checked against an
// independent float64 transliteration of resource_division.go (queues visited in our canonical
// order) on 40,000 random levels: identical results.
//
// DivideResourceExact (src/kai/testing/exact_division.cc, test support outside the library)
// computes the same algorithm exactly (kept for property tests and to document KAI's float
// effects): over-quota shares are the rationals amount * weight / W in
// integer units (128-bit), so it is exact whenever KAI's P' reduces to plain weights (kValue 0,
// or no weighted queue of the bucket has usage). Time-based buckets compute P in double as KAI
// does, with the share measured in floor units; every grant is clamped to what is left. The
// mode is chosen once per bucket, so the remainders compared in top-up are always of one kind.
//
// Where the two decide differently. On random levels they agree except in about one level in
// 2,000 to 4,000, and every difference is one of these kinds; DivideResource decides as KAI,
// DivideResourceExact as exact math:
//  1. Boundary shares. KAI computes P = w' + k*w', divides by the float sum of P and multiplies
//     by the round amount; exactly, the share is amount*weight/W. The two differ only when the
//     exact share is a whole number of floor units, or equals a queue's remaining request, and
//     KAI's product lands just below it. Example: 15 GPUs over quota, weights 4:4:7, kValue 2,
//     and the w7 queue needs 7: exactly it is satisfied with 7; KAI computes 6.999..., floors
//     it to 6, and the GPU goes to the next bucket.
//  2. Equal remainders. Exact ties go to the creation/name tie-break. Example: 3 GPUs, weights
//     1:1:7, remainders 1/3, 1/3 and 7/3 - 2 = 1/3, so exactly the oldest queue wins. In KAI the
//     last one is 0.3333333333333335 against 0.3333333333333333, so the w7 queue wins.
//  3. Decimal amounts. KAI holds GPUs as float64 devices: with 22 GPUs, after 4 + 0.1 deserved
//     and 17 granted over quota, 0.8999999999999986 is left. Split 1:1, a queue needing 0.45
//     fails "need <= share" (0.4499999999999993) and the whole 0.9 goes to top-up, where the
//     older queue takes it; exactly, the queue is satisfied with 0.45 and the other gets 0.45.
// Remaining difference from KAI, in both functions:
//  4. Go map order. KAI sums W, P and the deserved amounts and visits the queues of a round in
//     Go map order, which is random per run, so in boundary cases of kinds 1-3 (and in
//     time-based buckets) KAI's own result can change from run to run (the model showed 2:1
//     and 3:1 splits over map orders). We use one canonical order, creation_rank then name,
//     so our result is one of KAI's possible results, always the same one.
// Inputs outside KAI's domain are sanitised. A negative deserved or limit means unlimited (KAI
// clamps memory to -1 the same way). A negative request, weight or total becomes 0. A negative or
// NaN usage becomes 0, and a NaN or non-positive kValue becomes 0 (proportion.go does this for
// kValue).

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "kai/core/plugins/proportion/division_state.h"

namespace kai::proportion {
namespace division {
namespace {

// A total order over everything that can influence a queue's result, so that the queues' input
// order can never matter (float sums, tie-breaks among otherwise equal queues).
auto CanonicalKey(const QueueState& q) {
  const DivisionQueue& in = *q.input;
  return std::make_tuple(in.creation_rank, in.name, in.priority, q.weight, q.usage, q.deserved,
                         q.requestable, in.request, in.limit, q.index);
}

// ---------------------------------------------------------------------------------------------
// Step 0: sanitise the inputs.

QueueState MakeState(const DivisionQueue& q, size_t index) {
  QueueState s;
  s.index = index;
  s.input = &q;
  s.deserved = q.deserved < 0 ? -1 : q.deserved;
  s.weight = std::max<int64_t>(q.weight_milli, 0);
  s.usage = (std::isnan(q.usage) || q.usage < 0) ? 0.0 : q.usage;
  const int64_t request = std::max<int64_t>(q.request, 0);
  // KAI GetRequestableShare: the request, capped by MaxAllowed unless that is unlimited (-1).
  s.requestable = q.limit < 0 ? request : std::min(request, q.limit);
  return s;
}

}  // namespace

bool CanonicalLess(const QueueState* x, const QueueState* y) {
  return CanonicalKey(*x) < CanonicalKey(*y);
}

std::vector<QueueState> MakeStates(std::span<const DivisionQueue> queues) {
  std::vector<QueueState> states;
  states.reserve(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) states.push_back(MakeState(queues[i], i));
  return states;
}

}  // namespace division

namespace {

using division::CanonicalLess;
using division::MakeStates;
using division::QueueState;

// =============================================================================================
// KAI replay (DivideResource): the Go code's float64 arithmetic, in KAI's units.

namespace replay {

constexpr double kUnlimited = -1.0;  // KAI commonconstants.UnlimitedResourceQuantity

// One queue's ResourceShare as KAI holds it (float64, KAI units), plus its sanitised input.
struct KaiQueue {
  const QueueState* state = nullptr;  // canonical order and the caller's index
  double deserved = kUnlimited;
  double max_allowed = kUnlimited;
  double request = 0.0;
  double weight = 0.0;  // OverQuotaWeight
  double usage = 0.0;
  double fair_share = 0.0;
};

// The queues of one priority and their remainingRequested records (parallel vectors).
struct KaiBucket {
  std::vector<KaiQueue*> queues;  // canonical order
  std::vector<std::optional<double>> remainders;
};

// Integer units -> KAI units: GPU milli / 1000.0 = devices, CPU millicores and bytes as they are.
double ToKaiUnits(int64_t amount, int64_t floor_unit) {
  return static_cast<double>(amount) / static_cast<double>(floor_unit);
}

// KAI units -> integer units. KAI's values are sums of amounts that are whole integer units, so
// a value is normally within float noise of one: that one is taken (llround). A value more than
// 1e-9 KAI units away from any (possible only at magnitudes where the spacing of doubles is
// that coarse, ~10^7 GPU devices) is floored, so that we never hold more than KAI does.
int64_t FromKaiUnits(double value, int64_t floor_unit) {
  if (!(value > 0.0)) return 0;
  const double unit = static_cast<double>(floor_unit);
  const double scaled = value * unit;
  if (scaled >= 0x1p63) return std::numeric_limits<int64_t>::max();
  const int64_t nearest = std::llround(scaled);
  if (std::fabs(value - static_cast<double>(nearest) / unit) <= 1e-9) return nearest;
  return static_cast<int64_t>(std::floor(scaled));
}

KaiQueue MakeKaiQueue(const QueueState& s, int64_t floor_unit) {
  const DivisionQueue& in = *s.input;
  KaiQueue q;
  q.state = &s;
  q.deserved = s.deserved < 0 ? kUnlimited : ToKaiUnits(s.deserved, floor_unit);
  q.max_allowed = in.limit < 0 ? kUnlimited : ToKaiUnits(in.limit, floor_unit);
  q.request = ToKaiUnits(std::max<int64_t>(in.request, 0), floor_unit);
  q.weight = static_cast<double>(s.weight) / 1000.0;
  q.usage = s.usage;
  return q;
}

// ResourceShare.GetRequestableShare.
double RequestableShare(const KaiQueue& q) {
  return q.max_allowed == kUnlimited ? q.request : std::min(q.max_allowed, q.request);
}

// isQueueSatisfied.
bool IsSatisfied(const KaiQueue& q) {
  if (q.request <= q.fair_share) return true;
  return q.max_allowed != kUnlimited && q.max_allowed <= q.fair_share;
}

// getRemainingRequested.
double RemainingRequested(const KaiQueue& q) {
  const double requested = RequestableShare(q);
  return requested < q.fair_share ? 0.0 : requested - q.fair_share;
}

// setDeservedResource. Returns the remaining amount (may be <= 0).
double SetDeserved(std::vector<KaiQueue*>& queues, double total) {
  double remaining = total;
  for (KaiQueue* q : queues) {
    const double deserved = q->deserved == kUnlimited ? total : q->deserved;
    const double amount = std::min(deserved, RequestableShare(*q));
    q->fair_share += amount;
    remaining -= amount;
  }
  return remaining;
}

// getQueuesByPriority: buckets by priority, highest first, each in canonical order.
std::vector<KaiBucket> MakeKaiBuckets(const std::vector<KaiQueue*>& canonical) {
  std::vector<KaiQueue*> ordered = canonical;
  std::stable_sort(ordered.begin(), ordered.end(), [](const KaiQueue* a, const KaiQueue* b) {
    return a->state->input->priority > b->state->input->priority;
  });
  std::vector<KaiBucket> buckets;
  int32_t priority = 0;
  for (KaiQueue* q : ordered) {
    if (buckets.empty() || priority != q->state->input->priority) {
      buckets.emplace_back();
      priority = q->state->input->priority;
    }
    buckets.back().queues.push_back(q);
  }
  for (KaiBucket& b : buckets) b.remainders.assign(b.queues.size(), std::nullopt);
  return buckets;
}

// calcShareWeights: P = max(0, w' + k(w' - U)) with w' = weight / W over unsatisfied queues.
// Returns the per-queue P (0 for satisfied queues) and their sum; the sum is 0 when W is 0.
double ShareWeights(const KaiBucket& bucket, double k_value, std::vector<double>& weights) {
  weights.assign(bucket.queues.size(), 0.0);
  double total_weights = 0.0;  // getTotalWeightsForUnsatisfied
  for (const KaiQueue* q : bucket.queues) {
    if (RemainingRequested(*q) > 0) total_weights += q->weight;
  }
  if (total_weights == 0) return 0.0;
  double sum = 0.0;
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    const KaiQueue& q = *bucket.queues[i];
    if (IsSatisfied(q)) continue;
    const double normalized = q.weight / total_weights;
    const double product = k_value * (normalized - q.usage);
    weights[i] = std::max(0.0, normalized + product);
    sum += weights[i];
  }
  return sum;
}

// getResourceToGiveInCurrentRound.
double ResourceToGive(double fair_share, double requested, std::optional<double>& record) {
  if (requested <= fair_share) {
    record.reset();
    return requested;
  }
  double to_give = 0.0;
  const double round_fair_share = std::floor(fair_share);
  if (round_fair_share > 0) to_give = round_fair_share;
  if (fair_share - to_give > 0) record = fair_share - to_give;
  return to_give;
}

// divideUpToFairShare. Returns the remaining amount.
double DivideUpToFairShare(double amount, double k_value, KaiBucket& bucket) {
  std::vector<double> weights;
  while (true) {
    bool another_round = false;
    const double round_amount = amount;
    const double weights_sum = ShareWeights(bucket, k_value, weights);
    if (weights_sum == 0) break;
    for (size_t i = 0; i < bucket.queues.size(); ++i) {
      if (amount == 0) break;
      KaiQueue& q = *bucket.queues[i];
      if (IsSatisfied(q)) continue;
      const double requested = RemainingRequested(q);
      if (q.weight == 0) continue;
      const double normalized = weights[i] / weights_sum;
      const double fair_share = round_amount * normalized;
      const double to_give = ResourceToGive(fair_share, requested, bucket.remainders[i]);
      if (to_give == 0) continue;
      q.fair_share += to_give;
      amount -= to_give;
      another_round = another_round || requested < fair_share;
    }
    if (!another_round || amount == 0) break;
  }
  return amount;
}

// divideRemainingResource for one bucket: largest remainder first; ties: older, then name.
double DivideRemaining(double amount, KaiBucket& bucket) {
  std::vector<size_t> order;
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    if (bucket.remainders[i]) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (*bucket.remainders[a] != *bucket.remainders[b]) {
      return *bucket.remainders[a] > *bucket.remainders[b];
    }
    return CanonicalLess(bucket.queues[a]->state, bucket.queues[b]->state);
  });
  for (size_t i : order) {
    if (amount == 0) break;
    const double to_give = std::min(1.0, amount);
    bucket.queues[i]->fair_share += to_give;
    amount -= to_give;
  }
  return amount;
}

// divideOverQuotaResource.
void DivideOverQuota(double amount, double k_value, std::vector<KaiBucket>& buckets) {
  for (KaiBucket& bucket : buckets) amount = DivideUpToFairShare(amount, k_value, bucket);
  for (KaiBucket& bucket : buckets) {
    if (amount <= 0) break;
    amount = DivideRemaining(amount, bucket);
  }
}

}  // namespace replay

}  // namespace

std::vector<int64_t> DivideResource(std::span<const DivisionQueue> queues,
                                    const DivisionParams& params) {
  const int64_t floor_unit = std::max<int64_t>(params.floor_unit, 1);
  const double total = replay::ToKaiUnits(std::max<int64_t>(params.total, 0), floor_unit);
  const double k_value = (std::isnan(params.k_value) || params.k_value <= 0) ? 0.0 : params.k_value;

  const std::vector<QueueState> states = MakeStates(queues);
  std::vector<replay::KaiQueue> kai_queues;
  kai_queues.reserve(states.size());
  for (const QueueState& s : states) kai_queues.push_back(replay::MakeKaiQueue(s, floor_unit));
  // KAI iterates Go maps; we use the canonical order everywhere (see the notes at the top).
  std::vector<replay::KaiQueue*> canonical;
  for (replay::KaiQueue& q : kai_queues) canonical.push_back(&q);
  std::sort(canonical.begin(), canonical.end(),
            [](const replay::KaiQueue* a, const replay::KaiQueue* b) {
              return CanonicalLess(a->state, b->state);
            });

  const double remaining = replay::SetDeserved(canonical, total);
  if (remaining > 0) {
    std::vector<replay::KaiBucket> buckets = replay::MakeKaiBuckets(canonical);
    replay::DivideOverQuota(remaining, k_value, buckets);
  }

  std::vector<int64_t> result;
  result.reserve(kai_queues.size());
  for (const replay::KaiQueue& q : kai_queues) {
    result.push_back(replay::FromKaiUnits(q.fair_share, floor_unit));
  }
  return result;
}

}  // namespace kai::proportion
