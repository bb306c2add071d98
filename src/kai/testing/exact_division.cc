// DivideResourceExact: the fair-share division in exact arithmetic, the reference that
// resource_division_test.cc checks DivideResource (KAI's float64 replay) against. Test support,
// not part of the library: the scheduler uses DivideResource only (resource_division.cc explains
// where the two decide differently).
#include "kai/testing/exact_division.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <optional>
#include <utility>

#include "kai/core/plugins/proportion/division_state.h"

namespace kai::proportion {
namespace {

using division::CanonicalLess;
using division::MakeStates;
using division::QueueState;
using Int128 = __int128;

// Fractional part of a floored share, as a fraction of one floor unit, in (0, 1).
// Exact buckets keep num/den; `value` is the double form (the only form in time-based buckets).
struct Remainder {
  Int128 num = 0;
  Int128 den = 1;
  double value = 0.0;
  bool exact = false;
};

// The queues of one priority with the remainders recorded for them (parallel vectors).
struct Bucket {
  int32_t priority = 0;
  bool exact = true;
  std::vector<QueueState*> queues;  // canonical order
  std::vector<std::optional<Remainder>> remainders;
};

// One queue's share of a round: exactly num/den units (exact buckets) or `in_units` floor units.
struct RoundShare {
  bool participates = false;
  Int128 num = 0;
  Int128 den = 1;
  double in_units = 0.0;
};

struct Context {
  int64_t floor_unit = 1;
  double k_value = 0.0;
};

// ---------------------------------------------------------------------------------------------
// Small helpers.

// KAI getRemainingRequested: requestable - fairShare, never negative.
int64_t RemainingRequest(const QueueState& q) {
  return q.requestable > q.fair_share ? q.requestable - q.fair_share : 0;
}

// KAI isQueueSatisfied (request <= fs, or limit set and <= fs) is true exactly when the remaining
// request is 0, since requestable = min(request, limit): one predicate serves both KAI checks.
bool IsUnsatisfied(const QueueState& q) { return RemainingRequest(q) > 0; }

std::strong_ordering Compare128(Int128 a, Int128 b) {
  if (a < b) return std::strong_ordering::less;
  if (a > b) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

// Compares a/b with c/d (a, c >= 0; b, d > 0) without overflow, by continued fractions.
std::strong_ordering CompareFractions(Int128 a, Int128 b, Int128 c, Int128 d) {
  bool flipped = false;
  while (true) {
    const Int128 qa = a / b;
    const Int128 qc = c / d;
    if (qa != qc || (a % b == 0 && c % d == 0)) {
      const auto order = Compare128(qa, qc);
      return flipped ? 0 <=> order : order;
    }
    a -= qa * b;
    c -= qc * d;
    if (a == 0 || c == 0) {
      const auto order = a == 0 ? std::strong_ordering::less : std::strong_ordering::greater;
      return flipped ? 0 <=> order : order;
    }
    // a/b < c/d  <=>  b/a > d/c.
    std::swap(a, b);
    std::swap(c, d);
    flipped = !flipped;
  }
}

std::strong_ordering CompareRemainders(const Remainder& x, const Remainder& y) {
  if (x.exact && y.exact) return CompareFractions(x.num, x.den, y.num, y.den);
  if (x.value < y.value) return std::strong_ordering::less;
  if (x.value > y.value) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

// ---------------------------------------------------------------------------------------------
// Step 1 (KAI setDeservedResource): every queue, whatever its priority, gets
// min(deserved, requestable), with an unlimited deserved standing for the whole total. Returns
// what is left; siblings may oversubscribe their parent, and then nothing is left.

int64_t AssignDeserved(std::vector<QueueState>& states, int64_t total) {
  Int128 handed_out = 0;
  for (QueueState& q : states) {
    const int64_t deserved = q.deserved < 0 ? total : q.deserved;
    q.fair_share = std::min(deserved, q.requestable);
    handed_out += q.fair_share;
  }
  return handed_out >= total ? 0 : static_cast<int64_t>(total - handed_out);
}

// ---------------------------------------------------------------------------------------------
// Step 2 preparation (KAI getQueuesByPriority): buckets by priority, highest first.

// Exact mode is valid when KAI's P' reduces to weight/W: either kValue is 0 (P = w'), or no
// weighted queue has usage (P = (1+k)w'). Weight-0 queues have P = 0 whatever their usage.
bool BucketIsExact(const Bucket& bucket, double k_value) {
  if (k_value == 0.0) return true;
  return std::none_of(bucket.queues.begin(), bucket.queues.end(),
                      [](const QueueState* q) { return q->weight > 0 && q->usage != 0.0; });
}

std::vector<Bucket> MakeBuckets(std::vector<QueueState>& states, double k_value) {
  std::vector<QueueState*> ordered;
  for (QueueState& q : states) ordered.push_back(&q);
  std::sort(ordered.begin(), ordered.end(), [](const QueueState* a, const QueueState* b) {
    if (a->input->priority != b->input->priority) return a->input->priority > b->input->priority;
    return CanonicalLess(a, b);
  });
  std::vector<Bucket> buckets;
  for (QueueState* q : ordered) {
    if (buckets.empty() || buckets.back().priority != q->input->priority) {
      buckets.emplace_back();
      buckets.back().priority = q->input->priority;
    }
    buckets.back().queues.push_back(q);
  }
  for (Bucket& b : buckets) {
    b.exact = BucketIsExact(b, k_value);
    b.remainders.assign(b.queues.size(), std::nullopt);
  }
  return buckets;
}

// ---------------------------------------------------------------------------------------------
// Step 2, one round: each queue's share of the amount frozen at the start of the round.

// KAI getTotalWeightsForUnsatisfied: W = sum of weights of queues with a remaining request.
Int128 UnsatisfiedWeight(const Bucket& bucket) {
  Int128 total = 0;
  for (const QueueState* q : bucket.queues) {
    if (IsUnsatisfied(*q)) total += q->weight;
  }
  return total;
}

// Exact: share = round_amount * weight / W (P' = weight/W when usage plays no part).
std::optional<std::vector<RoundShare>> ExactRoundShares(const Bucket& bucket,
                                                        int64_t round_amount) {
  const Int128 total_weight = UnsatisfiedWeight(bucket);
  if (total_weight == 0) return std::nullopt;  // KAI: shareWeightsSum == 0 ends the bucket
  std::vector<RoundShare> shares(bucket.queues.size());
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    const QueueState& q = *bucket.queues[i];
    if (!IsUnsatisfied(q) || q.weight == 0) continue;  // KAI skips satisfied and weight-0 queues
    shares[i] = RoundShare{.participates = true,
                           .num = static_cast<Int128>(round_amount) * q.weight,
                           .den = total_weight};
  }
  return shares;
}

// KAI calcShareWeights: w' = weight/W, P = max(0, w' + k(w' - U)).
double TimeBasedWeight(const QueueState& q, Int128 total_weight, double k_value) {
  const double normalized = static_cast<double>(q.weight) / static_cast<double>(total_weight);
  return std::max(0.0, normalized + k_value * (normalized - q.usage));
}

// Time-based: share = round_amount * P / sum(P), in floor units, computed in double as KAI does.
std::optional<std::vector<RoundShare>> TimeBasedRoundShares(const Bucket& bucket,
                                                            int64_t round_amount,
                                                            const Context& ctx) {
  const Int128 total_weight = UnsatisfiedWeight(bucket);
  if (total_weight == 0) return std::nullopt;
  std::vector<double> weights(bucket.queues.size(), 0.0);
  double weight_sum = 0.0;  // summed in canonical order
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    if (!IsUnsatisfied(*bucket.queues[i])) continue;
    weights[i] = TimeBasedWeight(*bucket.queues[i], total_weight, ctx.k_value);
    weight_sum += weights[i];
  }
  if (weight_sum == 0.0) return std::nullopt;
  const double amount_in_units =
      static_cast<double>(round_amount) / static_cast<double>(ctx.floor_unit);
  std::vector<RoundShare> shares(bucket.queues.size());
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    const QueueState& q = *bucket.queues[i];
    if (!IsUnsatisfied(q) || q.weight == 0) continue;
    shares[i] =
        RoundShare{.participates = true, .in_units = amount_in_units * (weights[i] / weight_sum)};
  }
  return shares;
}

// ---------------------------------------------------------------------------------------------
// Step 2, giving one queue its round share (KAI getResourceToGiveInCurrentRound).

struct Grant {
  int64_t amount = 0;
  bool below_share = false;  // the queue's whole remaining request was strictly below its share
};

// A queue whose remaining request fits in its share takes all of it (and its remainder record is
// dropped). Otherwise it takes its share floored to whole floor units, and a non-zero fractional
// part replaces its record; an integral share leaves an older record in place.
Grant GrantExact(const QueueState& q, const RoundShare& share, int64_t floor_unit,
                 std::optional<Remainder>& record) {
  const int64_t remaining_request = RemainingRequest(q);
  const Int128 request_scaled = static_cast<Int128>(remaining_request) * share.den;
  if (request_scaled <= share.num) {
    record.reset();
    return Grant{.amount = remaining_request, .below_share = request_scaled < share.num};
  }
  const Int128 unit_den = share.den * floor_unit;
  const Int128 whole_units = share.num / unit_den;
  const Int128 rest = share.num - whole_units * unit_den;
  if (rest > 0) {
    record = Remainder{.num = rest,
                       .den = unit_den,
                       .value = static_cast<double>(rest) / static_cast<double>(unit_den),
                       .exact = true};
  }
  return Grant{.amount = static_cast<int64_t>(whole_units * floor_unit)};
}

Grant GrantTimeBased(const QueueState& q, const RoundShare& share, int64_t floor_unit,
                     std::optional<Remainder>& record) {
  const int64_t remaining_request = RemainingRequest(q);
  const double request_in_units =
      static_cast<double>(remaining_request) / static_cast<double>(floor_unit);
  if (request_in_units <= share.in_units) {
    record.reset();
    return Grant{.amount = remaining_request, .below_share = request_in_units < share.in_units};
  }
  const double whole_units = std::floor(share.in_units);
  const double rest = share.in_units - whole_units;
  if (rest > 0) record = Remainder{.value = rest, .exact = false};
  return Grant{.amount = static_cast<int64_t>(whole_units) * floor_unit};
}

// ---------------------------------------------------------------------------------------------
// Step 2, the rounds of one bucket (KAI divideUpToFairShare).

struct RoundResult {
  int64_t given = 0;
  bool another_round = false;
};

// The order of queues inside a round does not matter: every share is computed from the frozen
// round amount and weights, every grant is at most its share, so the grants never exceed the
// round amount (KAI's "no more resources" break can only skip queues whose share is 0).
RoundResult RunRound(Bucket& bucket, const std::vector<RoundShare>& shares, int64_t left,
                     const Context& ctx) {
  RoundResult result;
  for (size_t i = 0; i < bucket.queues.size() && left > 0; ++i) {
    if (!shares[i].participates) continue;
    QueueState& q = *bucket.queues[i];
    Grant grant = bucket.exact ? GrantExact(q, shares[i], ctx.floor_unit, bucket.remainders[i])
                               : GrantTimeBased(q, shares[i], ctx.floor_unit, bucket.remainders[i]);
    grant.amount = std::min(grant.amount, left);  // only float noise could need this
    if (grant.amount == 0) continue;
    q.fair_share += grant.amount;
    left -= grant.amount;
    result.given += grant.amount;
    result.another_round = result.another_round || grant.below_share;
  }
  return result;
}

// A new round runs only while something is left and some queue took its whole remaining request
// that was strictly below its share (that surplus is then re-divided); the bucket also stops
// when no unsatisfied queue has weight. Returns what is left for the next bucket.
int64_t DivideBucket(Bucket& bucket, int64_t amount, const Context& ctx) {
  while (amount > 0) {
    const auto shares =
        bucket.exact ? ExactRoundShares(bucket, amount) : TimeBasedRoundShares(bucket, amount, ctx);
    if (!shares) break;
    const RoundResult round = RunRound(bucket, *shares, amount, ctx);
    amount -= round.given;
    if (!round.another_round) break;
  }
  return amount;
}

// ---------------------------------------------------------------------------------------------
// Step 3 (KAI divideRemainingResource): top-up from the recorded remainders.

// Largest remainder first; ties: older queue, then name (KAI: creation timestamp, then UID).
std::vector<size_t> TopUpOrder(const Bucket& bucket) {
  std::vector<size_t> order;
  for (size_t i = 0; i < bucket.queues.size(); ++i) {
    if (bucket.remainders[i]) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto by_remainder = CompareRemainders(*bucket.remainders[a], *bucket.remainders[b]);
    if (by_remainder != 0) return by_remainder > 0;
    return CanonicalLess(bucket.queues[a], bucket.queues[b]);
  });
  return order;
}

// Buckets high to low; each recorded queue gets min(one floor unit, left) once. This is not
// capped by the queue's remaining request or limit, so a fair share can exceed requestable.
int64_t TopUp(std::vector<Bucket>& buckets, int64_t left, int64_t floor_unit) {
  for (Bucket& bucket : buckets) {
    for (size_t i : TopUpOrder(bucket)) {
      if (left <= 0) return 0;
      const int64_t grant = std::min(floor_unit, left);
      bucket.queues[i]->fair_share += grant;
      left -= grant;
    }
  }
  return left;
}

}  // namespace

std::vector<int64_t> DivideResourceExact(std::span<const DivisionQueue> queues,
                                         const DivisionParams& params) {
  const int64_t total = std::max<int64_t>(params.total, 0);
  const Context ctx{
      .floor_unit = std::max<int64_t>(params.floor_unit, 1),
      .k_value = (std::isnan(params.k_value) || params.k_value <= 0) ? 0.0 : params.k_value};

  std::vector<QueueState> states = MakeStates(queues);
  int64_t left = AssignDeserved(states, total);
  if (left > 0) {
    std::vector<Bucket> buckets = MakeBuckets(states, ctx.k_value);
    for (Bucket& bucket : buckets) left = DivideBucket(bucket, left, ctx);
    TopUp(buckets, left, ctx.floor_unit);
  }

  std::vector<int64_t> result;
  result.reserve(states.size());
  for (const QueueState& q : states) result.push_back(q.fair_share);
  return result;
}

}  // namespace kai::proportion
