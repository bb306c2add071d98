// `kai run`: every component in one process (scheduler, binder, podgrouper, controllers,
// scale-adjuster, admission), each with its own Lease.
#include <CLI/CLI.hpp>

#include <iostream>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/cmd/run/all.h"
#include "kai/cmd/run/run.h"
#include "kai/kube/runtime/leader.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class RunCommand final : public DaemonCommand {
 public:
  RunCommand() : DaemonCommand("run") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "run",
        "every component (scheduler, binder, podgrouper, controllers, scale-adjuster, admission) "
        "in one process");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--components", components_,
                  "comma-separated components to run (default: all; admission with a certificate)");
    c->add_option("--scheduler-name", o_.scheduler.scheduler_name, "the pods' schedulerName");
    c->add_option("--shard", o_.scheduler.shard, "SchedulingShard of the scheduler");
    leader_.Add(c,
                {&o_.leader_elect, nullptr, nullptr, &lease_.identity, &lease_.lease_duration,
                 &lease_.renew_deadline, &lease_.retry_period},
                "every component elects a leader on its Lease");
    AddServerFlags(
        c, o_.metrics_address, o_.health_address,
        "HOST:PORT of the scheduler's /metrics; the next components take the next ports",
        "HOST:PORT of the scheduler's /healthz; the next components take the next ports");
    c->add_option("--tls-cert-file", o_.admission.cert_file, "the admission server's certificate");
    c->add_option("--tls-key-file", o_.admission.key_file, "its private key");
    c->add_option(
        "--snapshot-bind-address", o_.scheduler.snapshot_address,
        "HOST:PORT of the scheduler's /debug/snapshot (default 127.0.0.1:8083; \"\": off)");
    c->add_option("--admission-bind-address", o_.admission.address,
                  "HOST:PORT the webhooks are served on (default 0.0.0.0:9443)");
    c->add_option("--resource-reservation-pod-image", o_.binder.reservation.image,
                  "the GPU reservation pods' image");
    c->add_flag("--fake-gpu-nodes", o_.binder.reservation.fake_gpu_nodes,
                "reservation pods only sleep (test clusters)");
    c->add_flag("--update-pod-eviction-condition,!--no-update-pod-eviction-condition",
                o_.scheduler.update_pod_eviction_condition,
                "DisruptionTarget on evicted pods before their delete (default on)");
    c->add_flag("--create-defaults", o_.controllers.create_defaults,
                "the controllers create the default queue tree and SchedulingShard when absent");
    log_.Add(c, 3, false);
    return c;
  }

  std::optional<std::string> Apply() override {
    if (auto e = leader_.Apply()) return e;
    o_.components = SplitCommas(components_);
    SameLease(o_.scheduler);
    SameLease(o_.binder);
    SameLease(o_.controllers);
    SameLease(o_.scale_adjuster);
    SameLease(o_.podgrouper.leader);
    o_.podgrouper.grouper.scheduler_name = o_.scheduler.scheduler_name;
    o_.admission.admission.scheduler_name = o_.scheduler.scheduler_name;
    o_.admission.admission.gpu_sharing_enabled = true;
    return std::nullopt;
  }
  int RunComponent(DaemonLog& log) override {
    o_.scheduler.trace = log.trace();
    return run::RunAll(o_, log.stream());
  }

 private:
  // Every component's lease timing and identity, as the flags set them.
  template <typename Options>
  void SameLease(Options& c) const {
    c.identity = lease_.identity;
    c.lease_duration = lease_.lease_duration;
    c.renew_deadline = lease_.renew_deadline;
    c.retry_period = lease_.retry_period;
  }

  run::AllOptions o_;
  std::string components_;
  runtime::LeaderOptions lease_;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace kai::cmd
