// `kai controllers`: PodGroup and Queue statuses and the queue metrics (KAI's controllers).
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/daemons/controllers/controllers.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class ControllersCommand final : public DaemonCommand {
 public:
  ControllersCommand() : DaemonCommand("controllers") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "controllers",
        "keep PodGroup and Queue statuses and the queue metrics (KAI's controllers)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--metrics-bind-address,--metrics-listen-address", o_.metrics_address,
                  "HOST:PORT for /metrics (default :8080; \"\": off)");
    c->add_option("--health-probe-bind-address", o_.health_address,
                  "HOST:PORT for /healthz, /readyz (default :8081; \"\": off)");
    c->add_option("--max-concurrent-reconciles", o_.workers,
                  "PodGroups and Queues reconciled at once (default 2)")
        ->check(CLI::PositiveNumber);
    c->add_option("--resync-period", resync_period_,
                  "how often every status is recomputed (default 10h)");
    c->add_option("--metrics-namespace", o_.metrics_namespace, "metric name prefix (default kai)");
    c->add_flag(
        "--create-defaults", o_.create_defaults,
        "create the default queue tree and SchedulingShard when absent (never changes them)");
    leader_.Add(c, {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                    &o_.lease_duration, &o_.renew_deadline, &o_.retry_period});
    AddKaiOnlyFlags(c);
    log_.Add(c, 0, false, "--log-level");
    return c;
  }

  std::optional<std::string> Apply() override {
    if (auto e = ParseDurationFlag("--resync-period", resync_period_, o_.resync_period)) return e;
    return leader_.Apply();
  }
  int RunComponent(DaemonLog& log) override {
    return controllersd::RunControllers(o_, log.stream());
  }

 private:
  // KAI's queue and pod group controllers' flags kai takes only for compatibility.
  void AddKaiOnlyFlags(CLI::App* c) {
    const std::string webhooks = "kai admission serves the Queue and PodGroup webhooks";
    kai_.Inert(c, "enable-webhook", webhooks, true);
    kai_.Inert(c, "enable-podgroup-webhook", webhooks, true);
    const std::string quota =
        "kai admission serves the Queue webhook: its "
        "--limit-descendents-over-subscription";
    kai_.Inert(c, "enable-quota-validation", quota, true);
    kai_.Inert(c, "limit-descendents-over-subscription", quota);
    kai_.Inert(c, "skip-controller-name-validation",
               "controller-runtime's check of unique controller names; kai has none to check",
               true);
    kai_.Inert(c, "scheduler-name", "kai's controllers do not filter PodGroups by schedulerName");
    const std::string labels = "kai's queue metrics carry no labels taken from the Queues";
    kai_.OnlyValue(c, "queue-label-to-metric-label", "", labels);
    kai_.OnlyValue(c, "queue-label-to-default-metric-value", "", labels);
  }

  controllersd::ControllersOptions o_;
  std::string resync_period_;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeControllersCommand() { return std::make_unique<ControllersCommand>(); }

}  // namespace kai::cmd
