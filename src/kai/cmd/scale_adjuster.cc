// `kai scale-adjuster`: whole-GPU scaling pods for unschedulable GPU-fraction pods, so that
// cluster autoscalers add nodes (KAI's node scale adjuster).
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/scaleadjuster/calculator.h"
#include "kai/daemons/scaleadjuster/controller.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class ScaleAdjusterCommand final : public DaemonCommand {
 public:
  ScaleAdjusterCommand() : DaemonCommand("scale-adjuster") {}

  CLI::App* Add(CLI::App& app) override {
    auto& a = o_.adjuster;
    CLI::App* c = app.add_subcommand(
        "scale-adjuster",
        "keep whole-GPU scaling pods for unschedulable GPU-fraction pods, so that cluster "
        "autoscalers add nodes (KAI's node scale adjuster)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--scaling-pod-image", a.image, "the scaling pods' image");
    c->add_option("--scale-adjust-namespace", a.ns, "the scaling pods' namespace");
    c->add_option("--scheduler-name", a.scheduler_name, "pods of this scheduler are adjusted for");
    c->add_option("--scaling-pod-app-label", a.app_label, "the scaling pods' app label");
    c->add_option("--scaling-pod-service-account", a.service_account,
                  "the ServiceAccount the scaling pods run as");
    c->add_option("--gpu-memory-to-fraction-ratio", memory_ratio_,
                  "the GPU share a gpu-memory pod counts as (default 0.1)");
    c->add_option("--cool-down-seconds", a.cool_down_seconds,
                  "no scaling pod is created this long after one was deleted (default 60)")
        ->check(CLI::NonNegativeNumber);
    leader_.Add(c, {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                    &o_.lease_duration, &o_.renew_deadline, &o_.retry_period});
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    log_.Add(c, 0, false);
    return c;
  }

  std::optional<std::string> Apply() override {
    auto ratio = scaleadjuster::ParseFractionCenti(memory_ratio_, "--gpu-memory-to-fraction-ratio");
    if (!ratio.ok()) return ratio.error().message;
    o_.adjuster.memory_fraction_centi = *ratio;
    return leader_.Apply();
  }
  int RunComponent(DaemonLog& log) override {
    return scaleadjusterd::RunScaleAdjuster(o_, log.stream());
  }

 private:
  scaleadjusterd::ScaleAdjusterOptions o_;
  std::string memory_ratio_ = "0.1";
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeScaleAdjusterCommand() {
  return std::make_unique<ScaleAdjusterCommand>();
}

}  // namespace kai::cmd
