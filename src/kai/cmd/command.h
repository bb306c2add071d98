#pragma once
// A `kai` command: it declares its subcommand and flags, then runs once the command line is
// parsed. main.cc holds the table of them; each lives in its own file.
#include <memory>

namespace CLI {
class App;
}

namespace kai::cmd {

class Command {
 public:
  virtual ~Command() = default;
  // Declares the subcommand and its flags on `app`; the command keeps the values they set.
  virtual CLI::App* Add(CLI::App& app) = 0;
  // The process's exit status: 0, kExitBadInput (2) for bad input, 1 for a failure while running.
  virtual int Run() = 0;
};

using CommandMaker = std::unique_ptr<Command> (*)();

std::unique_ptr<Command> MakeSimulateCommand();
std::unique_ptr<Command> MakeQueuesCommand();
std::unique_ptr<Command> MakeExplainCommand();
std::unique_ptr<Command> MakeWhatIfCommand();
std::unique_ptr<Command> MakeCheckUpdateCommand();
std::unique_ptr<Command> MakeSchedulerCommand();
std::unique_ptr<Command> MakeBinderCommand();
std::unique_ptr<Command> MakeResourceReservationCommand();
std::unique_ptr<Command> MakeAdmissionCommand();
std::unique_ptr<Command> MakePodGrouperCommand();
std::unique_ptr<Command> MakeControllersCommand();
std::unique_ptr<Command> MakeScaleAdjusterCommand();
std::unique_ptr<Command> MakeNumaExporterCommand();
std::unique_ptr<Command> MakeOperatorCommand();
std::unique_ptr<Command> MakeInstallCommand();
std::unique_ptr<Command> MakeRunCommand();

}  // namespace kai::cmd
