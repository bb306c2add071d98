// `kai operator`: keeps every other component deployed as the Config (kai-config) and the
// SchedulingShards say (KAI's operator).
#include <CLI/CLI.hpp>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/daemons/operator/operator.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class OperatorCommand final : public DaemonCommand {
 public:
  OperatorCommand() : DaemonCommand("operator") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "operator",
        "deploy and keep every kai component as the Config kai-config and the SchedulingShards "
        "say (KAI's operator)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--config-name", o_.config_name, "the Config to follow (default kai-config)");
    c->add_option("--image", o_.image,
                  "every component's image unless the Config names one (default kai:latest)");
    c->add_option("--image-pull-secret", o_.image_pull_secret,
                  "a pull Secret every Deployment names (KAI's flag)");
    c->add_option("--resync-period", resync_, "a pass at least this often (default 10s)");
    c->add_flag("--once", o_.once, "one pass, then exit: 0 when every object was applied");
    leader_.Add(c, {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                    &o_.lease_duration, &o_.renew_deadline, &o_.retry_period});
    c->add_option("--namespace", o_.leader_elect_namespace,
                  "KAI's name for --leader-elect-namespace");
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    log_.Add(c, 0, false);
    return c;
  }

  std::optional<std::string> Apply() override {
    if (!resync_.empty()) {
      if (auto e = ParseDurationFlag("--resync-period", resync_, o_.resync_period)) return e;
    }
    return leader_.Apply();
  }
  int RunComponent(DaemonLog& log) override { return operatord::RunOperator(o_, log.stream()); }

 private:
  operatord::OperatorOptions o_;
  std::string resync_;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeOperatorCommand() { return std::make_unique<OperatorCommand>(); }

}  // namespace kai::cmd
