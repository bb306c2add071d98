#pragma once
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/sim/simulator.h"

namespace kai::sim {

// One JSON object {"cycles": [...]} (the contract of ../shared/scenarios/check.py).
// With `now`, the document also carries {"now": RFC 3339} (kai scheduler --once).
void WriteJson(const std::vector<CycleReport>& cycles, std::ostream& out,
               std::string_view now = "");
// The same as YAML.
void WriteYaml(const std::vector<CycleReport>& cycles, std::ostream& out);
// Reasons as the JSON array the outputs give them (every field).
std::string ReasonsJson(const std::vector<Reason>& reasons);
// A kubectl-style summary for people.
void WriteTable(const std::vector<CycleReport>& cycles, std::ostream& out);

}  // namespace kai::sim
