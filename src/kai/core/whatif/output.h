#pragma once
// kai whatif's reports: a table for people, JSON for programs (docs/whatif.md lists its fields).
#include <ostream>
#include <string>
#include <vector>

#include "kai/core/whatif/metrics.h"

namespace kai::whatif {

// "0s", "45s", "12m", "1h5m", "2d3h": the two largest units, rounded down.
std::string FormatSpan(int64_t seconds);
// Milli-GPU x seconds as GPU-hours with one decimal.
std::string GpuHours(int64_t milli_gpu_seconds);

void WriteTable(const std::vector<VariantSummary>& variants, std::ostream& out);
void WriteJson(const std::vector<VariantSummary>& variants, std::ostream& out);

}  // namespace kai::whatif
