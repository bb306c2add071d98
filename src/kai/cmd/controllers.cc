// `kai controllers`: PodGroup and Queue statuses and the queue metrics (KAI's controllers).
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/controllersd/controllers.h"

namespace kai::cmd {
namespace {

class ControllersCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "controllers",
        "keep PodGroup and Queue statuses and the queue metrics (KAI's controllers)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddServerFlags(c, o_.metrics_address, o_.health_address,
                   "HOST:PORT for /metrics (default :8080; \"\": off)",
                   "HOST:PORT for /healthz, /readyz (default :8081; \"\": off)");
    c->add_option("--resync-period", resync_period_,
                  "how often every status is recomputed (default 10h)");
    c->add_option("--metrics-namespace", o_.metrics_namespace, "metric name prefix (default kai)");
    c->add_flag(
        "--create-defaults", o_.create_defaults,
        "create the default queue tree and SchedulingShard when absent (never changes them)");
    leader_.Add(c, {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                    &o_.lease_duration, &o_.renew_deadline, &o_.retry_period});
    log_.Add(c, 0, false);
    return c;
  }

  int Run() override {
    auto log = DaemonLog::Open(log_, "controllers");
    if (!log.ok()) return Fail(log.error().message);
    if (auto e = ParseDurationFlag("--resync-period", resync_period_, o_.resync_period)) {
      return Fail(*e);
    }
    if (auto e = leader_.Apply()) return Fail(*e);
    StopOnSignals(&controllersd::RequestControllersStop);
    return controllersd::RunControllers(o_, (*log)->stream());
  }

 private:
  LogFlags log_;
  controllersd::ControllersOptions o_;
  std::string resync_period_;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeControllersCommand() { return std::make_unique<ControllersCommand>(); }

}  // namespace kai::cmd
