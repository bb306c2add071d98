// `kai scheduler`: schedules a live cluster (KAI's scheduler).
#include <CLI/CLI.hpp>

#include <deque>
#include <iostream>
#include <vector>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/framework/config.h"
#include "kai/daemons/scheduler/scheduler.h"
#include "kai/kube/runtime/manager.h"

namespace kai::cmd {
namespace {

class SchedulerCommand final : public DaemonCommand {
 public:
  SchedulerCommand() : DaemonCommand("scheduler") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c =
        app.add_subcommand("scheduler", "schedule a Kubernetes cluster (KAI's scheduler)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    AddRateFlags(c, o_.qps, o_.burst);
    c->add_option("--scheduler-name", o_.scheduler_name, "schedule pods with this schedulerName");
    c->add_option("--shard", o_.shard, "SchedulingShard to read config and node pool from");
    c->add_option("--node-pool-label-key,--nodepool-label-key", o_.node_pool_key,
                  "the node-pool label");
    c->add_option("--partition-label-value", o_.partition_label_value,
                  "the node pool to schedule (default: the shard's partitionLabelValue)");
    c->add_option("--schedule-period", period_, "cycle period, e.g. 1s (the shard's wins)");
    c->add_flag("--once", o_.once, "sync, run one cycle, write its decisions, print it and exit");
    c->add_flag("--dry-run", o_.dry_run, "sync, run one cycle, print it; write nothing");
    c->add_option("-o,--output", o_.output, "table, yaml or json (--once, --dry-run)")
        ->check(CLI::IsMember({"table", "yaml", "json"}));
    c->add_option("--now", now_, "a fixed clock for every cycle, RFC 3339 (tests)");
    c->add_option("--max-in-flight", o_.max_in_flight, "concurrent API writes (default 32)");
    c->add_option("--status-write-deferral", status_deferral_,
                  "how long status writes and events may wait behind a burst of binds "
                  "(default 10s; 0s: only while a cycle's writes run)");
    c->add_flag("--update-pod-eviction-condition,!--no-update-pod-eviction-condition",
                o_.update_pod_eviction_condition,
                "set the DisruptionTarget condition before deleting an evicted pod (default on; "
                "--update-pod-eviction-condition=false turns it off)");
    leader_.Add(c, {&o_.leader_elect, &o_.leader_elect_namespace, &o_.leader_elect_id, &o_.identity,
                    &o_.lease_duration, &o_.renew_deadline, &o_.retry_period});
    c->add_option("--namespace", o_.leader_elect_namespace,
                  "KAI's name for --leader-elect-namespace");
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    c->add_option("--listen-address", o_.metrics_address, "KAI's name for --metrics-bind-address");
    c->add_option("--metrics-namespace", o_.metrics_namespace, "metric name prefix (default kai)");
    c->add_option(
        "--snapshot-bind-address", o_.snapshot_address,
        "HOST:PORT for /debug/snapshot (default 127.0.0.1:8083, loopback only; \"\": off)");
    c->add_option("--plugin-server-port", plugin_server_port_,
                  "KAI's name: serve /debug/snapshot on 127.0.0.1:PORT")
        ->check(CLI::Range(1, 65535));
    c->add_option("--usage-dir", o_.usage_dir,
                  "record each queue's usage here for time-based fair share (usageDBConfig)");
    c->add_option("--usage-prometheus-url", o_.usage_prometheus_url,
                  "read the usage history from this Prometheus instead (as KAI)");
    c->add_option("--usage-save-interval", usage_save_interval_,
                  "how often the usage history is saved (default 60s, and on shutdown)");
    c->add_option("--unserved-recheck-period", unserved_recheck_,
                  "how often an optional API the cluster does not serve (DRA, "
                  "NodeResourceTopology) is looked for again (default 60s)");
    c->add_option("--max-cycles", o_.max_cycles, "stop after this many cycles (0: run on)");
    c->add_flag("--verify-snapshot-cache", o_.verify_snapshot_cache,
                "check every cycle that the incremental snapshot equals a full build");
    AddArgFlags(c);
    AddKaiOnlyFlags(c);
    log_.Add(c, 3, true);
    return c;
  }

  int RunComponent(DaemonLog& log) override {
    o_.trace = log.trace();
    return scheduler::RunScheduler(o_, std::cout, log.stream());
  }

 private:
  // KAI's scheduler flags that are scheduler arguments of the shard's spec.args in kai.
  void AddArgFlags(CLI::App* c) {
    const auto arg = [&](const std::string& name, const std::string& help, bool boolean) {
      std::string& value = arg_values_.emplace_back();
      const std::string flag = "--" + name;
      arg_options_.push_back(boolean ? c->add_flag(flag, value, help)
                                     : c->add_option(flag, value, help));
    };
    arg("max-consolidation-preemptees", "as the shard's spec.args (which win)", false);
    arg("default-staleness-grace-period", "as the shard's spec.args (which win)", false);
    arg("full-hierarchy-fairness", "as the shard's spec.args (which win)", true);
    arg("allow-consolidating-reclaim", "as the shard's spec.args (which win)", true);
  }

  // The scheduler arguments given, each checked as the shard's would be.
  std::optional<std::string> ApplyArgFlags() {
    for (size_t i = 0; i < arg_options_.size(); ++i) {
      if (arg_options_[i]->count() == 0) continue;
      const std::string key = arg_options_[i]->get_name().substr(2);
      ShardObject one;
      one.args[key] = arg_values_[i];
      if (auto checked = CheckShard(one); !checked.ok()) {
        const std::string& m = checked.error().message;
        const std::string field = "spec.args." + key + ": ";
        const size_t at = m.find(field);
        return "--" + key + ": " + (at == std::string::npos ? m : m.substr(at + field.size()));
      }
      o_.args[key] = arg_values_[i];
    }
    return std::nullopt;
  }

  // KAI's scheduler flags kai takes only for compatibility.
  void AddKaiOnlyFlags(CLI::App* c) {
    const std::string go = "a profiler of Go's runtime";
    kai_.Inert(c, "scheduler-conf",
               "kai reads its actions, plugins and arguments from the SchedulingShard (--shard), "
               "which KAI's operator writes this file from");
    kai_.Inert(c, "version", "kai's scheduler prints no version at start (see kai --version)",
               true);
    kai_.Inert(c, "enable-profiler", go, true);
    kai_.Inert(c, "profiler-port", go);
    kai_.Inert(c, "pyroscope-address", go);
    kai_.Inert(c, "pyroscope-mutex-profiler-rate", go);
    kai_.Inert(c, "pyroscope-block-profiler-rate", go);
    kai_.Inert(c, "log-flush-frequency", "kai writes each log record as it comes");
    kai_.Inert(c, "detailed-fit-errors",
               "kai's unschedulable explanation is the same whatever this says", true);
    kai_.Inert(c, "use-scheduling-signatures",
               "a search shortcut of KAI's; kai's search has its own", true);
    kai_.Inert(c, "num-of-status-recording-workers",
               "kai's status writes share the writers of --max-in-flight");
    const std::string kinds = "kai does not tell CPU, GPU and MIG worker nodes apart by label";
    kai_.Inert(c, "cpu-worker-node-label-key", kinds);
    kai_.Inert(c, "gpu-worker-node-label-key", kinds);
    kai_.Inert(c, "mig-worker-node-label-key", kinds);
    kai_.OnlyValue(c, "resource-reservation-app-label", "kai-resource-reservation",
                   "kai knows the binder's reservation pods by this app label");
    kai_.OnlyValue(c, "queue-label-key", "kai.scheduler/queue",
                   "kai's scheduler reads a workload's queue from its PodGroup, whose label the "
                   "pod grouper's --queue-label-key names");
    kai_.OnlyValue(c, "restrict-node-scheduling", "false",
                   "kai schedules on every node of its node pool", true);
    kai_.OnlyValue(c, "schedule-csi-storage", "false",
                   "kai does not preempt or reclaim for CSI storage capacity", true);
    kai_.OnlyValue(c, "stuck-in-releasing-threshold", "2m", "kai's threshold is fixed at 2m");
  }

  std::deque<std::string> arg_values_;
  std::vector<CLI::Option*> arg_options_;
  // The flags that need more than a copy, into o_.
  std::optional<std::string> Apply() override {
    if (plugin_server_port_ != 0)
      o_.snapshot_address = "127.0.0.1:" + std::to_string(plugin_server_port_);
    if (!period_.empty()) {
      std::chrono::milliseconds p{0};
      if (auto e = ParseDurationFlag("--schedule-period", period_, p)) return e;
      o_.period = p;
    }
    if (auto e = leader_.Apply()) return e;
    if (auto e = ApplyArgFlags()) return e;
    if (status_deferral_ == "0" || status_deferral_ == "0s") {
      o_.status_write_deferral = std::chrono::milliseconds(0);
    } else if (auto e = ParseDurationFlag("--status-write-deferral", status_deferral_,
                                          o_.status_write_deferral)) {
      return e;
    }
    if (auto e = ParseDurationFlag("--usage-save-interval", usage_save_interval_,
                                   o_.usage_save_interval)) {
      return e;
    }
    if (auto e = ParseDurationFlag("--unserved-recheck-period", unserved_recheck_,
                                   o_.unserved_recheck)) {
      return e;
    }
    if (!now_.empty()) {
      UnixSeconds now = 0;
      if (!ParseNow(now_, now)) return "--now: expected an RFC 3339 time, got " + now_;
      o_.now = now;
    }
    return std::nullopt;
  }

  scheduler::SchedulerOptions o_;
  std::string period_, now_, status_deferral_, usage_save_interval_, unserved_recheck_;
  int plugin_server_port_ = 0;
  LeaderFlags leader_;
};

}  // namespace

std::unique_ptr<Command> MakeSchedulerCommand() { return std::make_unique<SchedulerCommand>(); }

}  // namespace kai::cmd
