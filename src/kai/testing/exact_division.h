#pragma once
// Test support: the exact-arithmetic reference of the fair-share division (exact_division.cc).
#include <cstdint>
#include <span>
#include <vector>

#include "kai/core/plugins/proportion/resource_division.h"

namespace kai::proportion {

// DivideResource's algorithm in exact arithmetic (time-based buckets excepted, which use double
// as KAI does). Differs from DivideResource only where KAI's float64 rounding decides
// differently. Same preconditions.
std::vector<int64_t> DivideResourceExact(std::span<const DivisionQueue> queues,
                                         const DivisionParams& params);

}  // namespace kai::proportion
