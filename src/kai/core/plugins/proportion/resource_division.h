#pragma once
// Fair-share division of ONE resource among the sibling queues of ONE level of the queue tree
// (KAI: pkg/scheduler/plugins/proportion/resource_division/resource_division.go). Pure and
// deterministic: amounts are integers in the caller's units, and the result does not depend on
// the order of the input queues.
//
// Outline (kai-semantics.md §3.2):
//   1. every queue gets min(deserved, requestable) regardless of priority;
//   2. the rest is split over quota, bucket by bucket (higher priority first), in rounds in
//      proportion to the (time-based) over-quota weights; partial shares are floored to whole
//      floor_units and their fractional remainders are remembered;
//   3. whatever is still left goes, one floor_unit each, to the remembered remainders
//      (largest first), bucket by bucket.
// A queue's fair share is then the total its children divide (the caller recurses).
//
// Two implementations (resource_division.cc explains where they differ):
//   DivideResource       replays KAI's float64 arithmetic, so its decisions are KAI's (the one
//                        the scheduler uses);
//   DivideResourceExact  computes the same algorithm in exact integer/rational arithmetic
//                        (reference for property tests and for documenting KAI's float effects;
//                        test support: src/kai/testing/exact_division.h).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace kai::proportion {

struct DivisionQueue {
  int64_t deserved = 0;       // quota in resource units; negative (-1) = unlimited (whole total)
  int64_t limit = -1;         // max allowed in resource units; negative (-1) = none; 0 = cap of 0
  int64_t weight_milli = 0;   // overQuotaWeight * 1000; 0 (or negative) = no over-quota share
  int32_t priority = 100;     // over-quota buckets: higher first
  int64_t request = 0;        // requested resources (units); negative is treated as 0
  double usage = 0.0;         // time-based fair-share usage in [0,1]; 0 when not used
  int64_t creation_rank = 0;  // older queue = smaller rank (top-up tie-break)
  std::string_view name;      // final top-up tie-break; KAI compares the queue UID, which is the
                              // queue's metadata.name (queue_info.go), never its displayName
};

struct DivisionParams {
  int64_t total = 0;       // amount available at this level (units); negative is treated as 0
  int64_t floor_unit = 1;  // KAI's scheduler unit: over-quota shares are floored to it and top-up
                           // hands out one of it per queue. 1000 for GPUs held in milli-GPU units
                           // (KAI floors whole devices), 1 for CPU millicores / memory bytes.
  double k_value = 1.0;    // time-based fair-share kValue (<= 0 => 0)
};

// Returns the fair share of every queue, in the order of `queues`, deciding as KAI's float64
// code does: amounts are converted to KAI's units (amount / floor_unit: GPU devices, CPU
// millicores, memory bytes), divided in double in the Go code's operation order, and each
// final share is converted back to integer units (see resource_division.cc).
// Preconditions: the sum of all positive weight_milli fits in int64_t; floor_unit <= 2^40.
std::vector<int64_t> DivideResource(std::span<const DivisionQueue> queues,
                                    const DivisionParams& params);

}  // namespace kai::proportion
