// kai: one multi-call binary. Each command is a kai::cmd::Command in its own file; this is their
// table. Exceptions and exit codes end here, at the process edge.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"

#ifndef KAI_VERSION
#define KAI_VERSION "unknown"
#endif

namespace {

using kai::cmd::CommandMaker;

// In the order `kai --help` lists them: the offline tools, then the cluster's components.
constexpr CommandMaker kCommands[] = {
    &kai::cmd::MakeSimulateCommand,     &kai::cmd::MakeQueuesCommand,
    &kai::cmd::MakeExplainCommand,      &kai::cmd::MakeWhatIfCommand,
    &kai::cmd::MakeCheckUpdateCommand,  &kai::cmd::MakeSchedulerCommand,
    &kai::cmd::MakeBinderCommand,       &kai::cmd::MakeResourceReservationCommand,
    &kai::cmd::MakeAdmissionCommand,    &kai::cmd::MakePodGrouperCommand,
    &kai::cmd::MakeControllersCommand,  &kai::cmd::MakeScaleAdjusterCommand,
    &kai::cmd::MakeNumaExporterCommand, &kai::cmd::MakeOperatorCommand,
    &kai::cmd::MakeInstallCommand,      &kai::cmd::MakeRunCommand,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kai: a KAI-compatible batch scheduler for GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kai " KAI_VERSION " (KAI Scheduler's API as of v0.18)");
  std::vector<std::pair<std::unique_ptr<kai::cmd::Command>, CLI::App*>> commands;
  for (CommandMaker make : kCommands) {
    auto command = make();
    CLI::App* sub = command->Add(app);
    commands.emplace_back(std::move(command), sub);
  }
  try {
    std::vector<std::string> args = kai::cmd::SplitEmptyValues(app, argc, argv);
    std::vector<const char*> split_argv{argv[0]};
    for (const std::string& a : args) split_argv.push_back(a.c_str());
    app.parse(static_cast<int>(split_argv.size()), split_argv.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kai::cmd::kExitBadInput;
  }
  if (!kai::cmd::StartFipsMode()) return 1;  // before anything sets up TLS
  try {
    for (auto& [command, sub] : commands) {
      if (*sub) return command->Run();
    }
  } catch (const std::exception& e) {
    std::cerr << "kai: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
