#pragma once
#include <ostream>
#include <vector>

#include "kai/sim/simulator.h"

namespace kai::sim {

// One JSON object {"cycles": [...]} (the contract of ../shared/scenarios/check.py).
void WriteJson(const std::vector<CycleReport>& cycles, std::ostream& out);
// The same as YAML.
void WriteYaml(const std::vector<CycleReport>& cycles, std::ostream& out);
// A kubectl-style summary for people.
void WriteTable(const std::vector<CycleReport>& cycles, std::ostream& out);

}  // namespace kai::sim
