#pragma once
// Flag groups several commands share, declared once: the manifests (-f), the API client, the
// metrics and health servers, leader election and logging.
#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kai/serve/log.h"
#include "kai/util/result.h"

namespace kai::cmd {

// -f/--filename: a manifest file or directory, one per use (`-f a.yaml -f dir/`), as kubectl's;
// a value after the first is a positional argument of the command, not another file.
CLI::Option* AddFilesOption(CLI::App* c, std::vector<std::string>& files,
                            const std::string& what = "manifest file or directory");

// --kubeconfig and --context.
void AddClientFlags(CLI::App* c, std::string& kubeconfig, std::string& context,
                    const std::string& kubeconfig_help =
                        "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");

// --metrics-bind-address and --health-probe-bind-address.
void AddServerFlags(CLI::App* c, std::string& metrics, std::string& health,
                    const std::string& metrics_help = "HOST:PORT for /metrics (\"\": off)",
                    const std::string& health_help = "HOST:PORT for /healthz, /readyz (\"\": off)");

// A duration flag (Go syntax: 1s, 1m30s) into `out`; "" leaves `out` as it is. The error names
// the flag.
std::optional<std::string> ParseDurationFlag(const std::string& flag, const std::string& text,
                                             std::chrono::milliseconds& out);

// Where a component keeps its leader-election settings. A null namespace or id: the command has
// no such flag (`kai run` names each component's Lease itself).
struct LeaderTargets {
  bool* elect = nullptr;
  std::string* ns = nullptr;
  std::string* id = nullptr;
  std::string* identity = nullptr;
  std::chrono::milliseconds* lease_duration = nullptr;
  std::chrono::milliseconds* renew_deadline = nullptr;
  std::chrono::milliseconds* retry_period = nullptr;
};

// The --leader-elect* flags: Add declares them, Apply (after parsing) sets the durations and
// checks that the renew deadline is shorter than the lease.
class LeaderFlags {
 public:
  void Add(CLI::App* c, const LeaderTargets& targets,
           const std::string& elect_help = "elect a leader on a Lease; only the leader writes");
  std::optional<std::string> Apply() const;

 private:
  LeaderTargets targets_;
  std::string lease_duration_, renew_deadline_, retry_period_;
};

// Logging: KAI's scheduler flags (--v, --log-json) and controller-runtime's that KAI's other
// components take (--zap-devel, --zap-encoder, --zap-log-level). Every daemon takes both sets,
// so a Deployment written for any KAI component runs.
class LogFlags {
 public:
  // `verbosity`: the --v default (KAI's scheduler: 3); `capital_levels`: JSON levels as KAI's
  // scheduler writes them ("INFO") rather than zap's ("info").
  void Add(CLI::App* c, int verbosity, bool capital_levels);
  // The logger's options; an error names the flag.
  Result<serve::LogOptions> Options() const;

 private:
  int verbosity_ = 0;
  bool capital_levels_ = false;
  bool json_ = false;
  bool zap_devel_ = true;
  std::string zap_encoder_;
  std::string zap_log_level_;
};

}  // namespace kai::cmd
