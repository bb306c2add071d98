#include "kai/core/framework/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "kai/core/framework/plugin.h"
#include "kai/core/util/time.h"

namespace kai {
namespace {

struct Entry {
  std::string name;
  bool enabled = true;
  int priority = 0;
  std::map<std::string, std::string> arguments;
};

// Collects what a shard asks that kai does not apply.
class Report {
 public:
  Report(const ShardObject& shard, std::vector<NotApplied>& out)
      : shard_(shard.meta.source + ": " + shard.meta.Ref()), out_(out) {}
  void Unknown(std::string field, std::string detail) {
    out_.push_back({NotApplied::Why::kUnknownName, shard_, std::move(field), std::move(detail)});
  }
  void Bad(std::string field, std::string detail) {
    out_.push_back({NotApplied::Why::kBadValue, shard_, std::move(field), std::move(detail)});
  }
  // A bad value with the text it had.
  void Bad(std::string field, const std::string& why, const std::string& value) {
    Bad(std::move(field), why + " (got \"" + value + "\")");
  }

 private:
  std::string shard_;
  std::vector<NotApplied>& out_;
};

bool IsStrategy(const std::string& s) { return s == "binpack" || s == "spread"; }

// spec.placementStrategy.<key>: binpack unless the shard sets a valid strategy.
std::string Strategy(const std::string& value, const std::string& key, Report& r) {
  if (value.empty()) return "binpack";
  if (IsStrategy(value)) return value;
  r.Bad("spec.placementStrategy." + key, "must be binpack or spread, got \"" + value + "\"");
  return "binpack";
}

std::vector<Entry> DefaultPlugins(const std::string& gpu, const std::string& cpu) {
  std::vector<Entry> out;
  for (const PluginInfo& p : AllPlugins()) {
    Entry e{std::string(p.name), true, p.default_priority, {}};
    if (p.name == "gpupack" || p.name == "gpusharingorder") e.enabled = gpu == "binpack";
    if (p.name == "gpuspread") e.enabled = gpu == "spread";
    if (p.name == "numa") e.enabled = false;  // KAI's numa plugin is opt-in
    if (p.name == "nodeplacement") e.arguments = {{"gpu", gpu}, {"cpu", cpu}};
    out.push_back(std::move(e));
  }
  return out;
}

Entry& EntryOf(std::vector<Entry>& entries, std::string_view name) {
  return *std::find_if(entries.begin(), entries.end(),
                       [&](const Entry& e) { return e.name == name; });
}

// spec.kValue and spec.minRuntime: default arguments of proportion and minruntime, which the
// shard's own plugin arguments replace (KAI's setDefaultPlugins).
void ApplyPluginDefaults(const ShardObject& shard, std::vector<Entry>& entries, Report& r) {
  if (shard.k_value) {
    double k = 0;
    const std::string& text = *shard.k_value;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(k)) {
      r.Bad("spec.kValue", "expected a number", text);
    } else {
      char buf[400];
      auto out = std::to_chars(buf, buf + sizeof buf, k, std::chars_format::fixed);
      EntryOf(entries, "proportion").arguments["kValue"] = std::string(buf, out.ptr);
    }
  }
  for (auto [value, key, arg] :
       {std::tuple{&shard.preempt_min_runtime, "preemptMinRuntime", "defaultPreemptMinRuntime"},
        std::tuple{&shard.reclaim_min_runtime, "reclaimMinRuntime", "defaultReclaimMinRuntime"}}) {
    if (!*value) continue;
    const auto d = ParseGoDuration(**value);
    if (!d || *d < 0) {
      r.Bad(std::string("spec.minRuntime.") + key, "expected a duration such as 10m", **value);
    } else {
      EntryOf(entries, "minruntime").arguments[arg] = **value;
    }
  }
}

// The shard's arguments of a known plugin replace its defaults, as in KAI; unknown keys are left
// out, and arguments the plugin refuses keep the defaults.
void ApplyPluginArguments(const PluginInfo& info, const PluginSetting& ps, Entry& e, Report& r) {
  const std::string field = "spec.plugins." + ps.name + ".arguments";
  std::map<std::string, std::string> known;
  for (const auto& [key, value] : ps.arguments) {
    if (std::find(info.arguments.begin(), info.arguments.end(), key) == info.arguments.end()) {
      r.Unknown(field + "." + key, "unknown argument for plugin " + ps.name);
      continue;
    }
    known[key] = value;
  }
  if (auto made = info.make(known); !made.ok()) {
    r.Bad(field, made.error().message);
    return;
  }
  e.arguments = std::move(known);
}

void ApplyPluginSettings(const ShardObject& shard, std::vector<Entry>& entries, Report& r) {
  for (const PluginSetting& ps : shard.plugins) {
    const PluginInfo* info = FindPlugin(ps.name);
    if (!info) {
      r.Unknown("spec.plugins." + ps.name, "unknown plugin \"" + ps.name + "\"");
      continue;
    }
    Entry& e = EntryOf(entries, ps.name);
    if (ps.enabled) e.enabled = *ps.enabled;
    if (ps.priority) e.priority = *ps.priority;
    if (ps.has_arguments) ApplyPluginArguments(*info, ps, e, r);
  }
}

// The argument parsers: the value, or an Error saying what was expected.
Result<int64_t> ParseInt(const std::string& text) {
  int64_t out = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size()) return Error{"expected an integer"};
  return out;
}

Result<int64_t> ParseCount(const std::string& text) {
  auto v = ParseInt(text);
  if (v.ok() && *v < 0) return Error{"expected a count of 0 or more"};
  return v;
}

Result<bool> ParseBool(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return Error{"expected true or false"};
}

// A Go duration in milliseconds of at least `min`, or `expected` as the error.
Result<int64_t> ParseMillis(const std::string& text, int64_t min, const char* expected) {
  const auto ms = ParseGoDurationMillis(text);
  if (!ms || *ms < min) return Error{expected};
  return *ms;
}

Result<int64_t> ParseSeconds(const std::string& text) {
  const auto s = ParseGoDuration(text);
  if (!s) return Error{"expected a duration such as 60s"};
  return *s;
}

// Sets `out` only when the text parsed.
template <class T, class U>
Status Set(Result<T> parsed, U& out) {
  if (!parsed.ok()) return parsed.error();
  out = *parsed;
  return Ok();
}

struct IntArg {
  std::string_view key;
  Result<int64_t> (*parse)(const std::string&);
  int64_t SchedulerConfig::*field;
};

struct BoolArg {
  std::string_view key;
  bool SchedulerConfig::*field;
};

// One scheduler argument (spec.args): set when valid; nullopt when kai does not know the key.
std::optional<Status> SetArg(const std::string& key, const std::string& value, SchedulerConfig& c) {
  using C = SchedulerConfig;
  static const IntArg kInts[] = {
      {"max-consolidation-preemptees", ParseInt, &C::max_consolidation_preemptees},
      {"max-scenarios-per-job", ParseCount, &C::max_scenarios_per_job},
      {"max-search-work-per-job", ParseCount, &C::max_search_work_per_job},
      {"max-search-work-per-action", ParseCount, &C::max_search_work_per_action},
      {"default-staleness-grace-period", ParseSeconds, &C::default_staleness_grace_seconds},
  };
  static const BoolArg kBools[] = {
      {"allow-consolidating-reclaim", &C::allow_consolidating_reclaim},
      {"full-hierarchy-fairness", &C::full_hierarchy_fairness},
      {"restart-partly-moved-gangs", &C::restart_partly_moved_gangs},
  };
  for (const IntArg& a : kInts) {
    if (key == a.key) return Set(a.parse(value), c.*a.field);
  }
  for (const BoolArg& a : kBools) {
    if (key == a.key) return Set(ParseBool(value), c.*a.field);
  }
  if (key == "queue-depth-per-action") {  // kai's older argument: allocate's depth
    auto depth = ParseInt(value);
    if (depth.ok()) c.queue_depth_per_action["allocate"] = *depth;
    return depth.ok() ? Ok() : Status(depth.error());
  }
  if (key == "max-search-time-per-job") {
    return Set(ParseMillis(value, 0, "expected a duration of 0 or more such as 500ms"),
               c.max_search_millis_per_job);
  }
  if (key == "schedule-period") {
    return Set(ParseMillis(value, 1, "expected a positive duration such as 1s"),
               c.schedule_period_millis);
  }
  return std::nullopt;
}

void ApplyArgs(const ShardObject& shard, SchedulerConfig& c, Report& r) {
  for (const auto& [key, value] : shard.args) {
    const std::string field = "spec.args." + key;
    const std::optional<Status> st = SetArg(key, value, c);
    if (!st) {
      r.Unknown(field, "unknown scheduler argument");
    } else if (!st->ok()) {
      r.Bad(field, st->error().message, value);
    }
  }
}

// spec.queueDepthPerAction (after spec.args queue-depth-per-action, which it overrides).
void ApplyQueueDepths(const ShardObject& shard, SchedulerConfig& c, Report& r) {
  for (const auto& [action, value] : shard.queue_depth_per_action) {
    const std::string field = "spec.queueDepthPerAction." + action;
    if (!FindAction(action)) {
      r.Unknown(field, "unknown action \"" + action + "\"");
      continue;
    }
    auto depth = ParseCount(value);
    if (!depth.ok()) {
      r.Bad(field, depth.error().message, value);
      continue;
    }
    c.queue_depth_per_action[action] = *depth;
  }
}

// A duration of spec.scenarioSearchBudgets in milliseconds; none (reported) when it is not a Go
// duration of 0 or more.
std::optional<int64_t> BudgetMillis(const std::string& field, const std::string& value, Report& r) {
  const auto ms = ParseGoDurationMillis(value);
  if (!ms || *ms < 0) {
    r.Bad(field, "expected a duration of 0 or more such as 30s", value);
    return std::nullopt;
  }
  return *ms;
}

// KAI's operator refuses unknown keys here, so they are bad values rather than unknown names.
void BudgetMap(const std::string& field, const std::map<std::string, std::string>& in,
               const std::vector<std::string>& keys, std::map<std::string, int64_t>& out,
               Report& r) {
  for (const auto& [key, value] : in) {
    const std::string path = field + "." + key;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string valid;
      for (const std::string& k : keys) valid += (valid.empty() ? "" : ", ") + k;
      r.Bad(path, "unknown key (valid: " + valid + ")");
      continue;
    }
    if (auto ms = BudgetMillis(path, value, r)) out[key] = *ms;
  }
}

// spec.scenarioSearchBudgets, checked as KAI's operator does (known action keys, durations of 0
// or more, the minimum below the maximum); kai has the two generators of KAI's portfolio only.
void ApplySearchBudgets(const ShardObject& shard, SchedulerConfig& c, Report& r) {
  if (!shard.search_budgets) return;
  const SearchBudgetsSetting& b = *shard.search_budgets;
  const std::string field = "spec.scenarioSearchBudgets";
  SearchTimeBudgets& t = c.search_time;
  BudgetMap(field + ".maxActionSearchDuration", b.max_action,
            {"default", "reclaim", "preempt", "consolidation"}, t.action_millis, r);
  BudgetMap(field + ".maxGeneratorSearchDuration", b.max_generator,
            {"default", "NodeLocalGreedy", "MultiNodeGang"}, t.generator_millis, r);
  for (auto [value, out, name] :
       {std::tuple{&b.max_job, &t.job_millis, "maxJobSearchDuration"},
        std::tuple{&b.min_job, &t.min_job_millis, "minJobSearchDuration"}}) {
    if (!*value) continue;
    if (auto ms = BudgetMillis(field + "." + name, **value, r)) *out = *ms;
  }
  if (t.job_millis > 0 && t.min_job_millis >= t.job_millis) {
    r.Bad(field + ".minJobSearchDuration", "must be less than maxJobSearchDuration");
    t.min_job_millis = 0;
  }
}

struct ActionEntry {
  std::string name;
  bool enabled = true;
  int priority = 0;
};

void ApplyActions(const std::optional<ShardObject>& shard, SchedulerConfig& c, Report* r) {
  std::vector<ActionEntry> entries;
  for (const ActionInfo& a : AllActions())
    entries.push_back({std::string(a.name), true, a.default_priority});
  if (shard) {
    for (const ActionSetting& as : shard->actions) {
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const ActionEntry& e) { return e.name == as.name; });
      if (it == entries.end()) {
        r->Unknown("spec.actions." + as.name, "unknown action \"" + as.name + "\"");
        continue;
      }
      if (as.enabled) it->enabled = *as.enabled;
      if (as.priority) it->priority = *as.priority;
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const ActionEntry& a, const ActionEntry& b) {
    return a.priority > b.priority;
  });
  const bool spread = c.placement_gpu == "spread" || c.placement_cpu == "spread";
  for (const ActionEntry& e : entries) {
    if (!e.enabled) continue;
    if (e.name == "consolidation" && spread) continue;  // KAI: consolidation needs binpack
    c.actions.push_back(e.name);
  }
}

}  // namespace

namespace {

SearchTimeBudgets::Limit Lookup(const std::map<std::string, int64_t>& limits,
                                const std::string& key, const std::string& field) {
  for (const std::string& k : {key, std::string("default")}) {
    if (auto it = limits.find(k); it != limits.end()) return {it->second, field + "." + k};
  }
  return {};
}

}  // namespace

SearchTimeBudgets::Limit SearchTimeBudgets::Action(const std::string& action) const {
  return Lookup(action_millis, action, "spec.scenarioSearchBudgets.maxActionSearchDuration");
}

SearchTimeBudgets::Limit SearchTimeBudgets::Generator(const std::string& generator) const {
  return Lookup(generator_millis, generator,
                "spec.scenarioSearchBudgets.maxGeneratorSearchDuration");
}

const PluginConfig* SchedulerConfig::Plugin(std::string_view name) const {
  for (const auto& p : plugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::set<int64_t> SchedulerConfig::DefaultMinRuntimes() const {
  std::set<int64_t> out;
  for (const PluginConfig& p : plugins) {
    if (p.name != "minruntime") continue;
    for (const char* key : {"defaultPreemptMinRuntime", "defaultReclaimMinRuntime"}) {
      auto it = p.arguments.find(key);
      if (it == p.arguments.end()) continue;
      if (auto d = ParseGoDuration(it->second)) out.insert(*d);
    }
  }
  return out;
}

int64_t SchedulerConfig::QueueDepth(std::string_view action) const {
  const auto it = queue_depth_per_action.find(std::string(action));
  return it == queue_depth_per_action.end() ? -1 : it->second;
}

std::string NotApplied::Message() const { return shard + ": " + field + ": " + detail; }

ShardConfig ApplyShard(const std::optional<ShardObject>& shard) {
  ShardConfig out;
  SchedulerConfig& c = out.config;
  std::optional<Report> report;
  if (shard) {
    report.emplace(*shard, out.not_applied);
    c.placement_gpu = Strategy(shard->placement_gpu, "gpu", *report);
    c.placement_cpu = Strategy(shard->placement_cpu, "cpu", *report);
  }
  std::vector<Entry> entries = DefaultPlugins(c.placement_gpu, c.placement_cpu);
  if (shard) {
    ApplyPluginDefaults(*shard, entries, *report);
    ApplyPluginSettings(*shard, entries, *report);
    ApplyArgs(*shard, c, *report);
    ApplyQueueDepths(*shard, c, *report);
    ApplySearchBudgets(*shard, c, *report);
  }
  // Registration order: priority descending, ties by name (KAI's plugin_action_merge).
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.name < b.name;
  });
  for (Entry& e : entries) {
    if (e.enabled) c.plugins.push_back({e.name, e.priority, std::move(e.arguments)});
  }
  ApplyActions(shard, c, report ? &*report : nullptr);
  return out;
}

Result<ShardConfig> CheckShard(const std::optional<ShardObject>& shard) {
  ShardConfig out = ApplyShard(shard);
  for (const NotApplied& n : out.not_applied) {
    if (n.why == NotApplied::Why::kBadValue) return Error{n.Message()};
  }
  return out;
}

std::vector<std::string> ShardWarnings(const std::optional<ShardObject>& shard) {
  std::vector<std::string> out;
  for (const NotApplied& n : ApplyShard(shard).not_applied) {
    if (n.why == NotApplied::Why::kUnknownName) out.push_back(n.Message() + "; not applied");
  }
  return out;
}

Result<SchedulerConfig> ConfigFromShard(const std::optional<ShardObject>& shard) {
  auto checked = CheckShard(shard);
  if (!checked.ok()) return checked.error();
  return std::move(checked->config);
}

Result<SchedulerConfig> WithActions(SchedulerConfig config,
                                    const std::vector<std::string>& actions) {
  for (const auto& a : actions) {
    if (!FindAction(a)) return Error{"--actions: unknown action \"" + a + "\""};
  }
  config.actions = actions;
  return config;
}

}  // namespace kai
