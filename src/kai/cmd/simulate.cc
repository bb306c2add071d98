// `kai simulate -f FILE...`: scheduling cycles on manifests, in an embedded cluster.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/framework/config.h"
#include "kai/core/sim/output.h"
#include "kai/core/sim/simulator.h"
#include "kai/kube/io/manifest_files.h"

namespace kai::cmd {
namespace {

class SimulateCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c =
        app.add_subcommand("simulate", "run scheduling cycles on manifests in an embedded cluster");
    AddFilesOption(c, files_)->required();
    c->add_option("--now", now_, "the simulated clock, RFC 3339 (default: wall clock)");
    c->add_option("--actions", actions_,
                  "comma-separated actions to run (default: the shard's, else KAI's five)");
    c->add_option("--cycles", cycles_, "number of scheduling cycles");
    c->add_option("--no-recreate", no_recreate_,
                  "PodGroups whose evicted pods are not recreated (stay Releasing)");
    c->add_option("-o,--output", output_, "table, yaml or json")
        ->check(CLI::IsMember({"table", "yaml", "json"}));
    c->add_option("--usage", usage_file_,
                  "time-based fair share history (YAML: usageParams, capacity, allocations)");
    c->add_flag("--verify-snapshot-cache", verify_snapshot_cache_,
                "check every cycle that the incremental snapshot equals a full build "
                "(also KAI_VERIFY_SNAPSHOT_CACHE=1)");
    c->add_flag("--verify-kept-verdicts", verify_kept_verdicts_,
                "run every cycle also with every pending job decided again and fail on the first "
                "decision or reason that differs from the kept and shared verdicts "
                "(also KAI_VERIFY_KEPT_VERDICTS=1)");
    c->add_flag("--full-evaluation", full_evaluation_,
                "decide every pending job every cycle: no verdict kept from the last cycle or "
                "shared by jobs of the same shape");
    return c;
  }

  int Run() override {
    sim::SimulateOptions options;
    std::optional<usage::UsageStore> usage;
    if (auto err = ReadClockAndUsage(now_, usage_file_, options, usage)) return Fail(*err);
    if (cycles_ < 1) return Fail("--cycles: must be at least 1");
    options.cycles = cycles_;
    // The environment variable lets test harnesses that cannot add flags (the conformance
    // runner) turn the check on.
    const char* verify = std::getenv("KAI_VERIFY_SNAPSHOT_CACHE");
    options.verify_snapshot_cache =
        verify_snapshot_cache_ || (verify != nullptr && std::string_view(verify) == "1");
    const char* verify_kept = std::getenv("KAI_VERIFY_KEPT_VERDICTS");
    options.verify_kept_verdicts =
        verify_kept_verdicts_ || (verify_kept != nullptr && std::string_view(verify_kept) == "1");
    for (const auto& pg : SplitCommas(no_recreate_)) options.no_recreate.insert(pg);
    auto world = LoadManifests(files_);
    if (!world.ok()) return Fail(world.error().message);
    for (const auto& w : world->warnings) std::cerr << "kai: warning: " << w << "\n";
    auto config = ConfigFromShard(world->shard);
    if (!config.ok()) return Fail(config.error().message);
    if (!actions_.empty()) {
      config = WithActions(std::move(config.value()), SplitCommas(actions_));
      if (!config.ok()) return Fail(config.error().message);
    }
    config->trace = DebugTrace();
    if (full_evaluation_) config->keep_verdicts = false;
    auto cycles = sim::Simulate(std::move(world.value()), config.value(), options);
    if (!cycles.ok()) return Fail(cycles.error().message);
    if (output_ == "json") {
      sim::WriteJson(cycles.value(), std::cout);
    } else if (output_ == "yaml") {
      sim::WriteYaml(cycles.value(), std::cout);
    } else {
      sim::WriteTable(cycles.value(), std::cout);
    }
    return 0;
  }

 private:
  std::vector<std::string> files_;
  std::string now_, actions_, no_recreate_, output_ = "table", usage_file_;
  int cycles_ = 1;
  bool verify_snapshot_cache_ = false;
  bool verify_kept_verdicts_ = false;
  bool full_evaluation_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeSimulateCommand() { return std::make_unique<SimulateCommand>(); }

}  // namespace kai::cmd
