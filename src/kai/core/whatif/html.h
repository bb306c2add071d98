#pragma once
// kai whatif --report: one self-contained HTML page (inline SVG and CSS, no script, nothing
// fetched) with the summary table and charts: cluster GPU utilisation over time, each queue's
// allocation against its fair share over time, and each queue's wait-time distribution, every
// variant side by side.
#include <string>
#include <vector>

#include "kai/core/whatif/metrics.h"

namespace kai::whatif {

std::string HtmlReport(const std::vector<VariantSummary>& variants);

}  // namespace kai::whatif
