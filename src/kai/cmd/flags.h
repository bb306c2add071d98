#pragma once
// Flag groups several commands share, declared once: the manifests (-f), the API client, the
// metrics and health servers, leader election and logging.
#include <CLI/CLI.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kai/core/util/result.h"
#include "kai/kube/serve/log.h"

namespace kai::cmd {

// The arguments after argv[0], each `--name=` of an option that takes a value split into
// `--name` and "". CLI11 reads `--name=` as the bare option and takes the next argument as its
// value (`--metrics-bind-address= --health-probe-bind-address=` set the metrics address to
// "--health-probe-bind-address="), while Kubernetes manifests write `--name=` for an empty
// value. Options are looked up in the command named first, then in `app`; a flag's `--name=`
// and anything unknown are left as they are, for CLI11 to judge.
std::vector<std::string> SplitEmptyValues(const CLI::App& app, int argc, const char* const* argv);

// -f/--filename: a manifest file or directory, one per use (`-f a.yaml -f dir/`), as kubectl's;
// a value after the first is a positional argument of the command, not another file.
CLI::Option* AddFilesOption(CLI::App* c, std::vector<std::string>& files,
                            const std::string& what = "manifest file or directory");

// --kubeconfig, --context and --fips-mode (AddFipsModeFlag): every command that talks to an API
// server takes them.
void AddClientFlags(CLI::App* c, std::string& kubeconfig, std::string& context,
                    const std::string& kubeconfig_help =
                        "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");

// --fips-mode: the process's TLS through OpenSSL's FIPS provider only (docs/fips.md). One
// process-wide switch, read by main.cc before the command runs (FipsModeRequested).
void AddFipsModeFlag(CLI::App* c);
bool FipsModeRequested();

// --metrics-bind-address and --health-probe-bind-address.
void AddServerFlags(CLI::App* c, std::string& metrics, std::string& health,
                    const std::string& metrics_help = "HOST:PORT for /metrics (\"\": off)",
                    const std::string& health_help = "HOST:PORT for /healthz, /readyz (\"\": off)");

// --qps and --burst: the API client's rate limit (client-go's rest.Config QPS and Burst). kai's
// default is no limit (qps 0); the burst is KAI's 300.
void AddRateFlags(CLI::App* c, double& qps, int& burst);

// KAI's flags that kai takes without an effect, or only with one value. A flag added with Inert
// is accepted with any value and warned about at start, naming it and why it does nothing in kai;
// one added with OnlyValue is accepted with `value` (its KAI default, what kai does anyway) and
// refused with any other, the reason in the error.
class KaiOnlyFlags {
 public:
  // A flag with a value (`--name V`, `--name=V`), or a boolean one (`--name`, `--name=false`).
  void Inert(CLI::App* c, const std::string& name, const std::string& reason, bool boolean = false);
  void OnlyValue(CLI::App* c, const std::string& name, const std::string& value,
                 const std::string& reason, bool boolean = false);
  // After parsing: the first flag given with a value kai refuses, as an error naming it.
  std::optional<std::string> Check() const;
  // One line per inert flag given: "warning: --NAME has no effect in kai: REASON".
  std::vector<std::string> Warnings() const;
  // The warnings, each on its own line of `log` (a daemon's log stream).
  void Warn(std::ostream& log) const;

 private:
  struct Entry {
    CLI::Option* option;
    std::string name, reason;
    std::optional<std::string> only;  // the value accepted; none: any (inert)
    const std::string* value;
  };
  const std::string& Add(CLI::App* c, const std::string& name, bool boolean, std::string help);
  std::vector<Entry> entries_;
  std::deque<std::string> values_;
};

// A duration flag (Go syntax: 1s, 1m30s) into `out`; "" leaves `out` as it is. The error names
// the flag.
std::optional<std::string> ParseDurationFlag(const std::string& flag, const std::string& text,
                                             std::chrono::milliseconds& out);
// The same, and a bare whole number counts as seconds (KAI's integer-seconds flags).
std::optional<std::string> ParseSecondsOrDurationFlag(const std::string& flag,
                                                      const std::string& text,
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
  // `verbosity_alias`: another name for --v (KAI's pod group controller: --log-level).
  void Add(CLI::App* c, int verbosity, bool capital_levels,
           const std::string& verbosity_alias = "");
  // The logger's options; an error names the flag.
  Result<serve::LogOptions> Options() const;
  // controller-runtime's flags kai takes without an effect (--zap-stacktrace-level,
  // --zap-time-encoding), warned about at start.
  const KaiOnlyFlags& inert() const { return inert_; }

 private:
  int verbosity_ = 0;
  bool capital_levels_ = false;
  bool json_ = false;
  bool zap_devel_ = true;
  std::string zap_encoder_;
  std::string zap_log_level_;
  KaiOnlyFlags inert_;
};

}  // namespace kai::cmd
