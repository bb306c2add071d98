#include "kai/framework/config.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "kai/framework/plugin.h"
#include "kai/util/time.h"

namespace kai {
namespace {

struct Entry {
  std::string name;
  bool enabled = true;
  int priority = 0;
  std::map<std::string, std::string> arguments;
};

std::string ShardField(const ShardObject& s, const std::string& field) {
  return s.meta.source + ": " + s.meta.Ref() + ": " + field;
}

bool IsStrategy(const std::string& s) { return s == "binpack" || s == "spread"; }

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

Status ApplyPluginSettings(const ShardObject& shard, std::vector<Entry>& entries) {
  for (const PluginSetting& ps : shard.plugins) {
    const std::string field = "spec.plugins." + ps.name;
    const PluginInfo* info = FindPlugin(ps.name);
    if (!info) return Error{ShardField(shard, field) + ": unknown plugin \"" + ps.name + "\""};
    for (const auto& [key, value] : ps.arguments) {
      if (std::find(info->arguments.begin(), info->arguments.end(), key) == info->arguments.end()) {
        return Error{ShardField(shard, field + ".arguments." + key) +
                     ": unknown argument for plugin " + ps.name};
      }
    }
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return e.name == ps.name; });
    if (ps.enabled) it->enabled = *ps.enabled;
    if (ps.priority) it->priority = *ps.priority;
    if (ps.has_arguments) it->arguments = ps.arguments;  // arguments replace defaults, as in KAI
  }
  return Ok();
}

// The argument parsers: Ok, or an Error saying what was expected.
Status ParseInt(const std::string& text, int64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size()) return Error{"expected an integer"};
  return Ok();
}

Status ParseBool(const std::string& text, bool& out) {
  if (text == "true") {
    out = true;
  } else if (text == "false") {
    out = false;
  } else {
    return Error{"expected true or false"};
  }
  return Ok();
}

Status ApplyArgs(const ShardObject& shard, SchedulerConfig& c) {
  for (const auto& [key, value] : shard.args) {
    Status err = Ok();
    if (key == "max-consolidation-preemptees") {
      err = ParseInt(value, c.max_consolidation_preemptees);
    } else if (key == "allow-consolidating-reclaim") {
      err = ParseBool(value, c.allow_consolidating_reclaim);
    } else if (key == "full-hierarchy-fairness") {
      err = ParseBool(value, c.full_hierarchy_fairness);
    } else if (key == "queue-depth-per-action") {
      err = ParseInt(value, c.queue_depth_per_action);
    } else if (key == "max-scenarios-per-job") {
      err = ParseInt(value, c.max_scenarios_per_job);
      if (err.ok() && c.max_scenarios_per_job < 0) err = Error{"expected a count of 0 or more"};
    } else if (key == "max-search-work-per-job") {
      err = ParseInt(value, c.max_search_work_per_job);
      if (err.ok() && c.max_search_work_per_job < 0) err = Error{"expected a count of 0 or more"};
    } else if (key == "max-search-work-per-action") {
      err = ParseInt(value, c.max_search_work_per_action);
      if (err.ok() && c.max_search_work_per_action < 0) {
        err = Error{"expected a count of 0 or more"};
      }
    } else if (key == "restart-partly-moved-gangs") {
      err = ParseBool(value, c.restart_partly_moved_gangs);
    } else if (key == "max-search-time-per-job") {
      const auto ms = ParseGoDurationMillis(value);
      if (!ms || *ms < 0) err = Error{"expected a duration of 0 or more such as 500ms"};
      if (ms && *ms >= 0) c.max_search_millis_per_job = *ms;
    } else if (key == "schedule-period") {
      const auto ms = ParseGoDurationMillis(value);
      if (!ms || *ms <= 0) err = Error{"expected a positive duration such as 1s"};
      if (ms && *ms > 0) c.schedule_period_millis = *ms;
    } else if (key == "default-staleness-grace-period") {
      auto d = ParseGoDuration(value);
      if (d)
        c.default_staleness_grace_seconds = *d;
      else
        err = Error{"expected a duration such as 60s"};
    } else {
      err = Error{"unknown scheduler argument"};
    }
    if (!err.ok()) {
      return Error{ShardField(shard, "spec.args." + key) + ": " + err.error().message + " (got \"" +
                   value + "\")"};
    }
  }
  return Ok();
}

// A duration of spec.scenarioSearchBudgets in milliseconds; an Error naming the field when it is
// not a Go duration of 0 or more.
Result<int64_t> BudgetMillis(const ShardObject& shard, const std::string& field,
                             const std::string& value) {
  const auto ms = ParseGoDurationMillis(value);
  if (!ms || *ms < 0) {
    return Error{ShardField(shard, field) +
                 ": expected a duration of 0 or more such as 30s (got \"" + value + "\")"};
  }
  return *ms;
}

Status BudgetMap(const ShardObject& shard, const std::string& field,
                 const std::map<std::string, std::string>& in, const std::vector<std::string>& keys,
                 std::map<std::string, int64_t>& out) {
  for (const auto& [key, value] : in) {
    const std::string path = field + "." + key;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string valid;
      for (const std::string& k : keys) valid += (valid.empty() ? "" : ", ") + k;
      return Error{ShardField(shard, path) + ": unknown key (valid: " + valid + ")"};
    }
    auto ms = BudgetMillis(shard, path, value);
    if (!ms.ok()) return ms.error();
    out[key] = *ms;
  }
  return Ok();
}

// spec.scenarioSearchBudgets, checked as KAI's operator does (known action keys, durations of 0
// or more, the minimum below the maximum); kai has the two generators of KAI's portfolio only.
Status ApplySearchBudgets(const ShardObject& shard, SchedulerConfig& c) {
  if (!shard.search_budgets) return Ok();
  const SearchBudgetsSetting& b = *shard.search_budgets;
  const std::string field = "spec.scenarioSearchBudgets";
  SearchTimeBudgets& t = c.search_time;
  if (Status st = BudgetMap(shard, field + ".maxActionSearchDuration", b.max_action,
                            {"default", "reclaim", "preempt", "consolidation"}, t.action_millis);
      !st.ok()) {
    return st;
  }
  if (Status st = BudgetMap(shard, field + ".maxGeneratorSearchDuration", b.max_generator,
                            {"default", "NodeLocalGreedy", "MultiNodeGang"}, t.generator_millis);
      !st.ok()) {
    return st;
  }
  for (auto [value, out, name] :
       {std::tuple{&b.max_job, &t.job_millis, "maxJobSearchDuration"},
        std::tuple{&b.min_job, &t.min_job_millis, "minJobSearchDuration"}}) {
    if (!*value) continue;
    auto ms = BudgetMillis(shard, field + "." + name, **value);
    if (!ms.ok()) return ms.error();
    *out = *ms;
  }
  if (t.job_millis > 0 && t.min_job_millis >= t.job_millis) {
    return Error{ShardField(shard, field + ".minJobSearchDuration") +
                 ": must be less than maxJobSearchDuration"};
  }
  return Ok();
}

struct ActionEntry {
  std::string name;
  bool enabled = true;
  int priority = 0;
};

Status ApplyActions(const std::optional<ShardObject>& shard, SchedulerConfig& c) {
  std::vector<ActionEntry> entries;
  for (const ActionInfo& a : AllActions())
    entries.push_back({std::string(a.name), true, a.default_priority});
  if (shard) {
    for (const ActionSetting& as : shard->actions) {
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const ActionEntry& e) { return e.name == as.name; });
      if (it == entries.end()) {
        return Error{ShardField(*shard, "spec.actions." + as.name) + ": unknown action \"" +
                     as.name + "\""};
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
  return Ok();
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

Result<SchedulerConfig> ConfigFromShard(const std::optional<ShardObject>& shard) {
  SchedulerConfig c;
  if (shard) {
    if (!shard->placement_gpu.empty()) c.placement_gpu = shard->placement_gpu;
    if (!shard->placement_cpu.empty()) c.placement_cpu = shard->placement_cpu;
    if (!IsStrategy(c.placement_gpu)) {
      return Error{ShardField(*shard, "spec.placementStrategy.gpu") +
                   ": must be binpack or spread, got \"" + c.placement_gpu + "\""};
    }
    if (!IsStrategy(c.placement_cpu)) {
      return Error{ShardField(*shard, "spec.placementStrategy.cpu") +
                   ": must be binpack or spread, got \"" + c.placement_cpu + "\""};
    }
  }
  std::vector<Entry> entries = DefaultPlugins(c.placement_gpu, c.placement_cpu);
  if (shard) {
    if (Status st = ApplyPluginSettings(*shard, entries); !st.ok()) return st.error();
    if (Status st = ApplyArgs(*shard, c); !st.ok()) return st.error();
    if (Status st = ApplySearchBudgets(*shard, c); !st.ok()) return st.error();
  }
  // Registration order: priority descending, ties by name (KAI's plugin_action_merge).
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.name < b.name;
  });
  for (Entry& e : entries) {
    if (e.enabled) c.plugins.push_back({e.name, e.priority, std::move(e.arguments)});
  }
  if (Status st = ApplyActions(shard, c); !st.ok()) return st.error();
  return c;
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
