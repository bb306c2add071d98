// `kai resource-reservation`: the GPU reservation pod's program.
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/daemons/reservation/reservation.h"

namespace kai::cmd {
namespace {

class ResourceReservationCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "resource-reservation",
        "the GPU reservation pod's program: annotate this pod with its GPU's UUID, then hold it");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_flag("--print", o_.print,
                "only print the GPUs NVML sees (index, UUID, name, memory); no API server");
    log_.Add(c, 0, false);
    return c;
  }

  int Run() override {
    auto log = DaemonLog::Open(log_, "resource-reservation");
    if (!log.ok()) return Fail(log.error().message);
    StopOnSignals(&reservation::RequestStop);
    return reservation::RunResourceReservation(o_, std::cout, (*log)->stream());
  }

 private:
  LogFlags log_;
  reservation::ProgramOptions o_;
};

}  // namespace

std::unique_ptr<Command> MakeResourceReservationCommand() {
  return std::make_unique<ResourceReservationCommand>();
}

}  // namespace kai::cmd
