#pragma once
// `kai whatif`: the driver (files, flags, progress bar) over libkai's what-if loop
// (src/kai/core/whatif/, docs/whatif.md).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kai::cmd {

struct WhatIfArgs {
  std::vector<std::string> files;
  std::string workload;
  std::string until = "7d";
  uint64_t seed = 1;
  std::vector<std::string> variants;  // NAME=FILE
  std::string report_dir;
  std::string output = "table";
  std::string start;   // RFC 3339; "" = the latest creationTimestamp in the cluster
  std::string period;  // "" = the shard's schedulePeriod, else 1s
  std::string recheck = "60s";
  int buckets = 200;
  bool verify_kept_verdicts = false;
  bool full_evaluation = false;
  bool progress = true;
};

CLI::App* AddWhatIfCommand(CLI::App& app, WhatIfArgs& a);
int RunWhatIfCommand(const WhatIfArgs& a);

}  // namespace kai::cmd
