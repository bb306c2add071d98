#include "kai/cmd/flags.h"

#include <algorithm>

#include "kai/core/k8s/decode_fields.h"
#include "kai/core/util/time.h"

namespace kai::cmd {

namespace {

bool g_fips_mode_flag = false;  // --fips-mode, for the process (main.cc)

const CLI::App* CommandNamed(const CLI::App& app, std::string_view name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

bool TakesAValue(const CLI::App& app, const CLI::App* command, const std::string& name) {
  const CLI::Option* o = command != nullptr ? command->get_option_no_throw(name) : nullptr;
  if (o == nullptr) o = app.get_option_no_throw(name);
  return o != nullptr && o->get_expected_min() > 0;
}

}  // namespace

std::vector<std::string> SplitEmptyValues(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> out;
  const CLI::App* command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (command == nullptr && !arg.starts_with("-")) command = CommandNamed(app, arg);
    const std::string name = arg.substr(0, arg.size() - 1);
    if (arg.size() > 3 && arg.starts_with("--") && arg.ends_with("=") &&
        name.find('=') == std::string::npos && TakesAValue(app, command, name)) {
      out.push_back(name);
      out.emplace_back();
      continue;
    }
    out.push_back(arg);
  }
  return out;
}

CLI::Option* AddFilesOption(CLI::App* c, std::vector<std::string>& files, const std::string& what) {
  return c->add_option("-f,--filename", files, what + " (repeatable: one per -f)")
      ->allow_extra_args(false);
}

void AddClientFlags(CLI::App* c, std::string& kubeconfig, std::string& context,
                    const std::string& kubeconfig_help) {
  c->add_option("--kubeconfig", kubeconfig, kubeconfig_help);
  c->add_option("--context", context, "kubeconfig context (default: its current-context)");
  AddFipsModeFlag(c);
}

void AddFipsModeFlag(CLI::App* c) {
  c->add_flag("--fips-mode", g_fips_mode_flag,
              "TLS through OpenSSL's FIPS provider only, with FIPS-approved settings; refuse to "
              "start where the provider is not installed (docs/fips.md)");
}

bool FipsModeRequested() { return g_fips_mode_flag; }

void AddServerFlags(CLI::App* c, std::string& metrics, std::string& health,
                    const std::string& metrics_help, const std::string& health_help) {
  c->add_option("--metrics-bind-address", metrics, metrics_help);
  c->add_option("--health-probe-bind-address", health, health_help);
}

void AddRateFlags(CLI::App* c, double& qps, int& burst) {
  c->add_option("--qps", qps,
                "API requests a second, on average (default 0: no client-side limit; KAI's: 50)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--burst", burst, "API requests at once above --qps (default 300)")
      ->check(CLI::PositiveNumber);
}

const std::string& KaiOnlyFlags::Add(CLI::App* c, const std::string& name, bool boolean,
                                     std::string help) {
  std::string& value = values_.emplace_back();
  CLI::Option* o = boolean ? c->add_flag("--" + name, value, std::move(help))
                           : c->add_option("--" + name, value, std::move(help));
  entries_.push_back({o, name, "", std::nullopt, &value});
  return value;
}

void KaiOnlyFlags::Inert(CLI::App* c, const std::string& name, const std::string& reason,
                         bool boolean) {
  Add(c, name, boolean, "KAI's; no effect in kai: " + reason);
  entries_.back().reason = reason;
}

void KaiOnlyFlags::OnlyValue(CLI::App* c, const std::string& name, const std::string& value,
                             const std::string& reason, bool boolean) {
  const std::string shown = value.empty() ? "\"\"" : value;
  Add(c, name, boolean, "KAI's; only " + shown + " (" + reason + ")");
  entries_.back().reason = reason;
  entries_.back().only = value;
}

std::optional<std::string> KaiOnlyFlags::Check() const {
  for (const Entry& e : entries_) {
    if (e.only && e.option->count() > 0 && *e.value != *e.only) {
      return "--" + e.name + ": kai takes only \"" + *e.only + "\" here, got \"" + *e.value +
             "\": " + e.reason;
    }
  }
  return std::nullopt;
}

std::vector<std::string> KaiOnlyFlags::Warnings() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) {
    if (!e.only && e.option->count() > 0)
      out.push_back("warning: --" + e.name + " has no effect in kai: " + e.reason);
  }
  return out;
}

void KaiOnlyFlags::Warn(std::ostream& log) const {
  for (const std::string& w : Warnings()) log << "kai: " << w << "\n";
}

std::optional<std::string> ParseSecondsOrDurationFlag(const std::string& flag,
                                                      const std::string& text,
                                                      std::chrono::milliseconds& out) {
  if (const std::optional<int64_t> seconds = decoding::ParseWholeInteger(text)) {
    if (*seconds <= 0) return flag + ": expected a positive number of seconds, got " + text;
    out = std::chrono::seconds(*seconds);
    return std::nullopt;
  }
  return ParseDurationFlag(flag, text, out);
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

void LogFlags::Add(CLI::App* c, int verbosity, bool capital_levels,
                   const std::string& verbosity_alias) {
  verbosity_ = verbosity;
  capital_levels_ = capital_levels;
  const std::string names = verbosity_alias.empty() ? "--v" : "--v," + verbosity_alias;
  c->add_option(names, verbosity_, "log verbosity (default " + std::to_string(verbosity) + ")")
      ->check(CLI::Range(0, 10));
  c->add_flag("--log-json", json_, "log one JSON object a line (level, ts, logger, msg)");
  c->add_option("--zap-devel", zap_devel_,
                "controller-runtime's: false logs JSON unless --zap-encoder says otherwise")
      ->default_str("true");
  c->add_option("--zap-encoder", zap_encoder_, "controller-runtime's: json or console")
      ->check(CLI::IsMember({"json", "console"}));
  c->add_option("--zap-log-level", zap_log_level_,
                "controller-runtime's: debug, info, error, or a verbosity from 1");
  inert_.Inert(c, "zap-stacktrace-level", "kai's records carry no stack traces");
  inert_.Inert(c, "zap-time-encoding", "kai writes every record's time as UTC ISO 8601");
}

Result<serve::LogOptions> LogFlags::Options() const {
  serve::LogOptions o;
  o.verbosity = verbosity_;
  o.capital_levels = capital_levels_;
  o.json = json_ || zap_encoder_ == "json" || (!zap_devel_ && zap_encoder_.empty());
  const std::string& level = zap_log_level_;
  const std::optional<int64_t> n = decoding::ParseWholeInteger(level);
  if (level.empty() || level == "info") return o;
  if (level == "debug") {
    o.verbosity = std::max(o.verbosity, 1);
  } else if (level == "error") {
    o.min_level = serve::LogLevel::kError;
  } else if (n && *n >= 1 && *n <= 10) {
    o.verbosity = std::max(o.verbosity, static_cast<int>(*n));
  } else {
    return Error{"--zap-log-level: expected debug, info, error or a verbosity 1..10, got \"" +
                 level + "\""};
  }
  return o;
}

}  // namespace kai::cmd
