#include "kai/cmd/flags.h"

#include <algorithm>
#include <charconv>

#include "kai/util/time.h"

namespace kai::cmd {

CLI::Option* AddFilesOption(CLI::App* c, std::vector<std::string>& files, const std::string& what) {
  return c->add_option("-f,--filename", files, what + " (repeatable: one per -f)")
      ->allow_extra_args(false);
}

void AddClientFlags(CLI::App* c, std::string& kubeconfig, std::string& context,
                    const std::string& kubeconfig_help) {
  c->add_option("--kubeconfig", kubeconfig, kubeconfig_help);
  c->add_option("--context", context, "kubeconfig context (default: its current-context)");
}

void AddServerFlags(CLI::App* c, std::string& metrics, std::string& health,
                    const std::string& metrics_help, const std::string& health_help) {
  c->add_option("--metrics-bind-address", metrics, metrics_help);
  c->add_option("--health-probe-bind-address", health, health_help);
}

std::optional<std::string> ParseDurationFlag(const std::string& flag, const std::string& text,
                                             std::chrono::milliseconds& out) {
  if (text.empty()) return std::nullopt;
  auto ms = ParseGoDurationMillis(text);
  if (!ms || *ms <= 0)
    return flag + ": expected a positive duration such as 1s, got \"" + text + "\"";
  out = std::chrono::milliseconds(*ms);
  return std::nullopt;
}

void LeaderFlags::Add(CLI::App* c, const LeaderTargets& targets, const std::string& elect_help) {
  targets_ = targets;
  c->add_flag("--leader-elect", *targets.elect, elect_help);
  if (targets.ns) c->add_option("--leader-elect-namespace", *targets.ns, "the Lease's namespace");
  if (targets.id) {
    c->add_option("--leader-elect-id", *targets.id,
                  "the Lease's name (default " + *targets.id + ")");
  }
  c->add_option("--leader-elect-identity", *targets.identity,
                "this process's identity (default hostname_pid)");
  c->add_option("--leader-elect-lease-duration", lease_duration_, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", renew_deadline_, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", retry_period_, "e.g. 2s");
}

std::optional<std::string> LeaderFlags::Apply() const {
  const std::pair<const char*, std::pair<const std::string*, std::chrono::milliseconds*>> flags[] =
      {{"--leader-elect-lease-duration", {&lease_duration_, targets_.lease_duration}},
       {"--leader-elect-renew-deadline", {&renew_deadline_, targets_.renew_deadline}},
       {"--leader-elect-retry-period", {&retry_period_, targets_.retry_period}}};
  for (const auto& [flag, target] : flags) {
    if (auto e = ParseDurationFlag(flag, *target.first, *target.second)) return e;
  }
  if (*targets_.renew_deadline >= *targets_.lease_duration) {
    return "--leader-elect-renew-deadline: must be shorter than the lease duration";
  }
  return std::nullopt;
}

void LogFlags::Add(CLI::App* c, int verbosity, bool capital_levels) {
  verbosity_ = verbosity;
  capital_levels_ = capital_levels;
  c->add_option("--v", verbosity_, "log verbosity (default " + std::to_string(verbosity) + ")")
      ->check(CLI::Range(0, 10));
  c->add_flag("--log-json", json_, "log one JSON object a line (level, ts, logger, msg)");
  c->add_option("--zap-devel", zap_devel_,
                "controller-runtime's: false logs JSON unless --zap-encoder says otherwise")
      ->default_str("true");
  c->add_option("--zap-encoder", zap_encoder_, "controller-runtime's: json or console")
      ->check(CLI::IsMember({"json", "console"}));
  c->add_option("--zap-log-level", zap_log_level_,
                "controller-runtime's: debug, info, error, or a verbosity from 1");
}

Result<serve::LogOptions> LogFlags::Options() const {
  serve::LogOptions o;
  o.verbosity = verbosity_;
  o.capital_levels = capital_levels_;
  o.json = json_ || zap_encoder_ == "json" || (!zap_devel_ && zap_encoder_.empty());
  const std::string& level = zap_log_level_;
  int n = 0;
  const auto [end, ec] = std::from_chars(level.data(), level.data() + level.size(), n);
  if (level.empty() || level == "info") return o;
  if (level == "debug") {
    o.verbosity = std::max(o.verbosity, 1);
  } else if (level == "error") {
    o.min_level = serve::LogLevel::kError;
  } else if (ec == std::errc() && end == level.data() + level.size() && n >= 1 && n <= 10) {
    o.verbosity = std::max(o.verbosity, n);
  } else {
    return Error{"--zap-log-level: expected debug, info, error or a verbosity 1..10, got \"" +
                 level + "\""};
  }
  return o;
}

}  // namespace kai::cmd
