#include "kai/core/usage/db_config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace kai::usage {
namespace {

struct ConfigError {
  std::string message;
};

std::string Text(const doc::Node& parent, std::string_view key, const std::string& where) {
  const doc::Node n = parent[key];
  if (!n.IsDefined() || n.IsNull()) return "";
  if (!n.IsScalar()) throw ConfigError{where + "." + std::string(key) + ": expected a string"};
  return std::string(n.Scalar());
}

// A Go duration field, in milliseconds; `fallback` when absent.
int64_t GoMillis(const doc::Node& parent, std::string_view key, const std::string& where,
                 int64_t fallback) {
  const std::string t = Text(parent, key, where);
  if (t.empty()) return fallback;
  auto ms = ParseGoDurationMillis(t);
  if (!ms) {
    throw ConfigError{where + "." + std::string(key) + ": expected a duration such as 1m, got \"" +
                      t + "\""};
  }
  return *ms;
}

void ReadWindow(const doc::Node& p, const std::string& where, UsageDbConfig& c) {
  const std::string type = Text(p, "windowType", where);
  if (!type.empty() && type != "sliding") {
    if (type == "tumbling" || type == "cron") {
      throw ConfigError{where + ".windowType: \"" + type +
                        "\" is not supported by kai (only sliding windows are)"};
    }
    throw ConfigError{where + ".windowType: expected sliding, tumbling or cron, got \"" + type +
                      "\""};
  }
  const std::string size = Text(p, "windowSize", where);
  if (size.empty()) return;
  auto s = ParsePrometheusDuration(size);
  if (!s)
    throw ConfigError{where + ".windowSize: expected a duration such as 1w, got \"" + size + "\""};
  c.window_text = size;
  c.params.window_seconds = *s;
}

void ReadExtra(const doc::Node& p, const std::string& where, UsageDbConfig& c) {
  const doc::Node extra = p["extraParams"];
  const std::string w = where + ".extraParams";
  c.query_timeout_millis = GoMillis(extra, "usageQueryTimeout", w, c.query_timeout_millis);
  c.query_resolution_seconds =
      GoMillis(extra, "queryResolution", w, c.query_resolution_seconds * 1000) / 1000;
  if (c.query_resolution_seconds <= 0)
    throw ConfigError{w + ".queryResolution: must be at least 1s"};
  const std::array<const char*, 3> names = {"cpu", "memory", "gpu"};
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string a = Text(extra, std::string(names[i]) + "AllocationMetric", w);
    const std::string k = Text(extra, std::string(names[i]) + "CapacityMetric", w);
    if (!a.empty()) c.allocation_metrics[i] = a;
    if (!k.empty()) c.capacity_metrics[i] = k;
  }
}

void ReadParams(const doc::Node& p, const std::string& where, UsageDbConfig& c) {
  if (p.IsDefined() && !p.IsNull() && !p.IsMap()) throw ConfigError{where + ": expected a map"};
  const int64_t half_life = GoMillis(p, "halfLifePeriod", where, 0) / 1000;
  c.params.half_life_seconds = half_life > 0 ? half_life : 0;
  ReadWindow(p, where, c);
  c.fetch_interval_seconds = GoMillis(p, "fetchInterval", where, 60000) / 1000;
  if (c.fetch_interval_seconds <= 0)
    throw ConfigError{where + ".fetchInterval: must be at least 1s"};
  c.staleness_seconds =
      std::max(GoMillis(p, "stalenessPeriod", where, 300000) / 1000, c.fetch_interval_seconds);
  c.wait_timeout_millis = GoMillis(p, "waitTimeout", where, c.wait_timeout_millis);
  ReadExtra(p, where, c);
}

}  // namespace

Result<std::optional<UsageDbConfig>> ParseUsageDbConfig(const doc::Node& spec,
                                                        const std::string& source) {
  const doc::Node n = spec["usageDBConfig"];
  if (!n.IsDefined() || n.IsNull()) return std::optional<UsageDbConfig>();
  const std::string where = source + ": spec.usageDBConfig";
  try {
    if (!n.IsMap()) throw ConfigError{where + ": expected a map"};
    UsageDbConfig c;
    c.client_type = Text(n, "clientType", where);
    c.connection_string = Text(n, "connectionString", where);
    c.connection_string_env_var = Text(n, "connectionStringEnvVar", where);
    if (!c.connection_string.empty() && !c.connection_string_env_var.empty()) {
      throw ConfigError{where + ": connectionString and connectionStringEnvVar are both set"};
    }
    ReadParams(n["usageParams"], where + ".usageParams", c);
    return std::optional<UsageDbConfig>(std::move(c));
  } catch (const ConfigError& e) {
    return Error{e.message};
  }
}

std::optional<int64_t> ParsePrometheusDuration(std::string_view text) {
  if (text == "0") return 0;
  static const std::pair<std::string_view, int64_t> kUnits[] = {{"y", 365 * 86400000LL},
                                                                {"w", 7 * 86400000LL},
                                                                {"d", 86400000LL},
                                                                {"h", 3600000LL},
                                                                {"ms", 1},
                                                                {"m", 60000LL},
                                                                {"s", 1000LL}};
  // Largest first; "ms" sits before "m" only so that it is matched first.
  static const int kRank[] = {0, 1, 2, 3, 6, 4, 5};
  int64_t millis = 0;
  int last_rank = -1;
  size_t i = 0;
  if (text.empty()) return std::nullopt;
  while (i < text.size()) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc() || v < 0) return std::nullopt;
    i = static_cast<size_t>(end - text.data());
    size_t u = 0;
    while (u < std::size(kUnits) && text.substr(i, kUnits[u].first.size()) != kUnits[u].first) ++u;
    if (u == std::size(kUnits) || kRank[u] <= last_rank) return std::nullopt;
    last_rank = kRank[u];
    millis += v * kUnits[u].second;
    i += kUnits[u].first.size();
  }
  return millis / 1000;
}

std::string SlidingWindowQuery(const UsageDbConfig& c, const std::string& metric, UnixSeconds now) {
  std::string decayed = metric;
  if (c.params.half_life_seconds > 0) {
    char factor[96];
    std::snprintf(factor, sizeof factor, "0.5^((%lld - time()) / %f)", static_cast<long long>(now),
                  static_cast<double>(c.params.half_life_seconds));
    decayed = "((" + metric + ") * (" + factor + "))";
  }
  return "sum_over_time((" + decayed + ")[" + c.window_text + ":" +
         std::to_string(c.query_resolution_seconds) + "s])";
}

Result<std::vector<Sample>> ParseVectorAnswer(std::string_view body) {
  auto d = doc::ParseJson(body);
  if (!d.ok()) return Error{"Prometheus answer: " + d.error().message};
  const doc::Node root = d->Roots().at(0);
  if (root["status"].Scalar() != "success") {
    return Error{"Prometheus query failed: " + std::string(root["errorType"].Scalar()) + ": " +
                 std::string(root["error"].Scalar())};
  }
  const doc::Node data = root["data"];
  if (data["resultType"].Scalar() != "vector") {
    return Error{"Prometheus answer: result type \"" + std::string(data["resultType"].Scalar()) +
                 "\", expected vector"};
  }
  std::vector<Sample> out;
  const doc::Node result = data["result"];
  for (size_t i = 0; i < result.size(); ++i) {
    const std::string v(result[i]["value"][1].Scalar());
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size()) {
      return Error{"Prometheus answer: result[" + std::to_string(i) + "]: bad value \"" + v + "\""};
    }
    out.push_back({std::string(result[i]["metric"]["queue_name"].Scalar()), x});
  }
  return out;
}

}  // namespace kai::usage
