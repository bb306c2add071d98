// `kai podgrouper`: gives the kai scheduler's pods their PodGroups from their workloads.
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/daemons/podgrouper/controller.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class PodGrouperCommand final : public DaemonCommand {
 public:
  PodGrouperCommand() : DaemonCommand("podgrouper") {}

  CLI::App* Add(CLI::App& app) override {
    auto& g = o_.grouper;
    CLI::App* c = app.add_subcommand(
        "podgrouper", "give the kai scheduler's pods their PodGroups from their workloads (KAI's)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--scheduler-name", g.scheduler_name, "pods of this scheduler are grouped");
    c->add_option("--queue-label-key", g.queue_label_key, "the label naming a workload's queue");
    c->add_option("--nodepool-label-key", g.node_pool_label_key, "the node-pool label");
    c->add_flag("--search-legacy-pg,!--no-search-legacy-pg", g.search_for_legacy_pod_groups,
                "keep PodGroups named the legacy way (default on)");
    c->add_flag("--knative-gang-schedule,!--no-knative-gang-schedule", g.knative_gang_schedule,
                "one PodGroup per Knative revision (default on)");
    c->add_flag("--generic-karta-fallback,!--no-generic-karta-fallback", g.generic_karta_fallback,
                "group a kind kai has no grouper for by its Karta (default on)");
    c->add_flag("--pod-group-per-deployment,!--no-pod-group-per-deployment",
                g.pod_group_per_deployment,
                "one PodGroup per Deployment, as KAI v0.18 (default on; off: one per pod)");
    c->add_option("--default-priorities-configmap-name", g.default_priorities_configmap_name,
                  "ConfigMap of per-kind default priority classes");
    c->add_option("--default-priorities-configmap-namespace",
                  g.default_priorities_configmap_namespace, "its namespace");
    c->add_option("--max-concurrent,--max-concurrent-reconciles", o_.max_concurrent,
                  "pods grouped at once (default 4)")
        ->check(CLI::PositiveNumber);
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    auto& l = o_.leader;
    leader_.Add(c, {&o_.leader_elect, &l.ns, &l.name, &l.identity, &l.lease_duration,
                    &l.renew_deadline, &l.retry_period});
    kai_.OnlyValue(c, "pod-label-selector", "",
                   "kai groups every pod of its scheduler; no selector narrows them");
    kai_.OnlyValue(c, "namespace-label-selector", "",
                   "kai groups every pod of its scheduler; no selector narrows them");
    log_.Add(c, 0, false);
    return c;
  }

  std::optional<std::string> Apply() override { return leader_.Apply(); }
  int RunComponent(DaemonLog& log) override { return podgrouperd::RunPodGrouper(o_, log.stream()); }

 private:
  podgrouperd::PodGrouperOptions o_;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakePodGrouperCommand() { return std::make_unique<PodGrouperCommand>(); }

}  // namespace kai::cmd
