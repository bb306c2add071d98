// `kai numa-exporter`: the node agent that writes each pod's observed NUMA placement (KAI's NUMA
// placement exporter, cmd/numa-placement-exporter) from the kubelet's pod-resources API and sysfs.
#include <CLI/CLI.hpp>

#include <cstdlib>

#include "kai/cmd/command.h"
#include "kai/cmd/common.h"
#include "kai/cmd/flags.h"
#include "kai/core/util/time.h"
#include "kai/daemons/numaexporter/exporter.h"

namespace kai::cmd {
namespace {

class NumaExporterCommand final : public DaemonCommand {
 public:
  NumaExporterCommand() : DaemonCommand("numa-exporter") {}

  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "numa-exporter",
        "write each pod's observed NUMA placement (kai.scheduler/numa-placement-observed) from "
        "the kubelet's pod-resources API and sysfs: one a node (KAI's NUMA placement exporter)");
    AddClientFlags(c, o_.kubeconfig, o_.context);
    c->add_option("--qps", o_.qps, "API requests a second, on average (default 50, as KAI's)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--burst", o_.burst, "API requests at once above --qps (default 100, as KAI's)")
        ->check(CLI::PositiveNumber);
    c->add_option("--node-name", o_.node_name,
                  "the node this exporter runs on (default: $NODE_NAME)");
    c->add_option("--podresources-socket", o_.podresources_socket,
                  "the kubelet's pod-resources gRPC socket (default "
                  "/var/lib/kubelet/pod-resources/kubelet.sock)");
    c->add_option("--sysfs-root", o_.sysfs_root,
                  "the sysfs mount the CPUs' NUMA nodes are read from (default /sys)");
    c->add_option("--poll-interval", poll_,
                  "how often the pods' placements are read and changed ones written (default 1s)");
    c->add_option("--drift-resync-interval", drift_,
                  "how often the node's pods are listed and annotations that drifted written "
                  "again (default 1m; 0: never)");
    c->add_option("--podresources-timeout", timeout_,
                  "the deadline of one pod-resources call (default 10s)");
    AddServerFlags(c, o_.metrics_address, o_.health_address);
    log_.Add(c, 0, false);
    return c;
  }

  std::optional<std::string> Apply() override {
    if (auto e = ParseDurationFlag("--poll-interval", poll_, o_.poll_interval)) return e;
    if (auto e = ParseDrift()) return e;
    if (auto e = ParseDurationFlag("--podresources-timeout", timeout_, o_.podresources_timeout)) {
      return e;
    }
    if (o_.poll_interval.count() <= 0) return "--poll-interval must be positive";
    if (o_.podresources_timeout.count() <= 0) return "--podresources-timeout must be positive";
    if (o_.node_name.empty()) {
      const char* env = std::getenv("NODE_NAME");
      if (env != nullptr) o_.node_name = env;
    }
    if (o_.node_name.empty()) {
      return "the node name is required: set --node-name or the NODE_NAME environment variable";
    }
    return std::nullopt;
  }
  int RunComponent(DaemonLog& log) override {
    return numaexporterd::RunNumaExporter(o_, log.stream());
  }

 private:
  // --drift-resync-interval: a duration, or 0 (no drift pass).
  std::optional<std::string> ParseDrift() {
    if (drift_.empty()) return std::nullopt;
    const std::optional<int64_t> ms = ParseGoDurationMillis(drift_);
    if (!ms || *ms < 0) {
      return "--drift-resync-interval: expected a duration such as 1m or 0, got \"" + drift_ + "\"";
    }
    o_.drift_resync_interval = std::chrono::milliseconds(*ms);
    return std::nullopt;
  }

  numaexporterd::NumaExporterOptions o_;
  std::string poll_, drift_, timeout_;
};

}  // namespace

std::unique_ptr<Command> MakeNumaExporterCommand() {
  return std::make_unique<NumaExporterCommand>();
}

}  // namespace kai::cmd
