// kai: one multi-call binary. Exceptions and exit codes live here, at the process edge.
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "kai/framework/config.h"
#include "kai/k8s/decode.h"
#include "kai/sim/output.h"
#include "kai/sim/simulator.h"
#include "kai/util/time.h"

namespace {

constexpr int kExitBadInput = 2;

struct SimulateArgs {
  std::vector<std::string> files;
  std::string now;
  std::string actions;
  int cycles = 1;
  std::string no_recreate;
  std::string output = "table";
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int Fail(const std::string& message) {
  std::cerr << "kai: " << message << "\n";
  return kExitBadInput;
}

int RunSimulate(const SimulateArgs& a) {
  kai::sim::SimulateOptions options;
  if (a.now.empty()) {
    options.now = static_cast<kai::UnixSeconds>(std::time(nullptr));
  } else if (auto t = kai::ParseRfc3339(a.now)) {
    options.now = *t;
  } else {
    return Fail("--now: expected an RFC 3339 time such as 2025-01-01T12:00:00Z, got \"" + a.now + "\"");
  }
  if (a.cycles < 1) return Fail("--cycles: must be at least 1");
  options.cycles = a.cycles;
  for (const auto& pg : SplitCommas(a.no_recreate)) options.no_recreate.insert(pg);
  auto world = kai::LoadManifests(a.files);
  if (!world.ok()) return Fail(world.error().message);
  for (const auto& w : world->warnings) std::cerr << "kai: warning: " << w << "\n";
  auto config = kai::ConfigFromShard(world->shard);
  if (!config.ok()) return Fail(config.error().message);
  if (!a.actions.empty()) {
    config = kai::WithActions(std::move(config.value()), SplitCommas(a.actions));
    if (!config.ok()) return Fail(config.error().message);
  }
  auto cycles = kai::sim::Simulate(std::move(world.value()), config.value(), options);
  if (!cycles.ok()) return Fail(cycles.error().message);
  if (a.output == "json") {
    kai::sim::WriteJson(cycles.value(), std::cout);
  } else if (a.output == "yaml") {
    kai::sim::WriteYaml(cycles.value(), std::cout);
  } else {
    kai::sim::WriteTable(cycles.value(), std::cout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kai: a KAI-compatible batch scheduler for GPU clusters"};
  app.require_subcommand(1);
  SimulateArgs sim;
  CLI::App* simulate =
      app.add_subcommand("simulate", "run scheduling cycles on manifests in an embedded cluster");
  simulate->add_option("-f,--filename", sim.files, "manifest file or directory (repeatable)")
      ->required();
  simulate->add_option("--now", sim.now, "the simulated clock, RFC 3339 (default: wall clock)");
  simulate->add_option("--actions", sim.actions,
                       "comma-separated actions to run (default: the shard's, else KAI's five)");
  simulate->add_option("--cycles", sim.cycles, "number of scheduling cycles");
  simulate->add_option("--no-recreate", sim.no_recreate,
                       "PodGroups whose evicted pods are not recreated (stay Releasing)");
  simulate->add_option("-o,--output", sim.output, "table, yaml or json")
      ->check(CLI::IsMember({"table", "yaml", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*simulate) return RunSimulate(sim);
  } catch (const std::exception& e) {
    std::cerr << "kai: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
