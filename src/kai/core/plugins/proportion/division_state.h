#pragma once
// Internal to the fair-share division: what DivideResource (resource_division.cc) and its exact
// reference DivideResourceExact (src/kai/testing/exact_division.cc) share. The sanitised input
// queue and the canonical order both visit the queues in.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kai/core/plugins/proportion/resource_division.h"

namespace kai::proportion::division {

// One queue as the algorithm sees it: sanitised inputs plus the fair share built so far.
struct QueueState {
  size_t index = 0;  // position in the caller's span
  const DivisionQueue* input = nullptr;
  int64_t deserved = -1;  // -1 = unlimited
  int64_t weight = 0;
  double usage = 0.0;
  int64_t requestable = 0;
  int64_t fair_share = 0;
};

// Step 0: the queues with their inputs sanitised, in the caller's order.
std::vector<QueueState> MakeStates(std::span<const DivisionQueue> queues);

// A total order over everything that can influence a queue's result, so that the queues' input
// order can never matter (float sums, tie-breaks among otherwise equal queues).
bool CanonicalLess(const QueueState* x, const QueueState* y);

}  // namespace kai::proportion::division
