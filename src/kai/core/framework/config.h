#pragma once
// Scheduler configuration: KAI's defaults, overridden by a SchedulingShard (kai-semantics.md §1.6).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"
#include "kai/core/util/trace.h"

namespace kai {

struct PluginConfig {
  std::string name;
  int priority = 0;
  std::map<std::string, std::string> arguments;
};

// The time budgets of spec.scenarioSearchBudgets (KAI's alpha knobs), in milliseconds of the
// session's monotonic clock; 0 or absent: none. Opt-in: they apply only when the shard sets
// them (docs/deviations.md); the work budget applies always.
struct SearchTimeBudgets {
  std::map<std::string, int64_t> action_millis;     // by action name; "default" the fallback
  std::map<std::string, int64_t> generator_millis;  // NodeLocalGreedy, MultiNodeGang, "default"
  int64_t job_millis = 0;
  int64_t min_job_millis = 0;  // a job's time before the action's budget may stop it
  // The budget of the action or generator, its own key first, then "default"; with the
  // SchedulingShard field it came from ("" and 0 when none applies).
  struct Limit {
    int64_t millis = 0;
    std::string field;
  };
  Limit Action(const std::string& action) const;
  Limit Generator(const std::string& generator) const;
};

// Work units the disruptive search of one job may spend by default (spec.args
// max-search-work-per-job), and one action in one cycle (max-search-work-per-action); see
// actions/common/solver.h for the unit and bench/RESULTS.md for how the default was derived.
inline constexpr int64_t kDefaultSearchWorkPerJob = 200000;
inline constexpr int64_t kDefaultSearchWorkPerAction = 10 * kDefaultSearchWorkPerJob;

struct SchedulerConfig {
  std::vector<std::string> actions;   // in execution order
  std::vector<PluginConfig> plugins;  // enabled plugins, in registration order
  std::string placement_gpu = "binpack";
  std::string placement_cpu = "binpack";
  int64_t max_consolidation_preemptees = 16;
  bool allow_consolidating_reclaim = true;
  int64_t default_staleness_grace_seconds = 60;
  // spec.args.schedule-period: the live scheduler's cycle period (kai scheduler; none here).
  std::optional<int64_t> schedule_period_millis;
  // spec.queueDepthPerAction: the pending jobs each action takes per leaf queue (KAI's session
  // GetJobsDepth), by action name; an action absent here takes every job. kai's older spec.args
  // queue-depth-per-action sets allocate's.
  std::map<std::string, int64_t> queue_depth_per_action;
  // kai's bound on the scenarios a disruptive action simulates for one job (spec.args
  // max-scenarios-per-job); reaching it is reported as the search giving up.
  int64_t max_scenarios_per_job = 100000;
  // kai's opt-in (spec.args restart-partly-moved-gangs): a victim gang that loses placed pods to a
  // disruptive action restarts whole instead of keeping its re-placed pods running below minMember
  // (KAI's behaviour, the default; docs/deviations.md).
  bool restart_partly_moved_gangs = false;
  // The same bound in time (spec.args max-search-time-per-job, a duration), in milliseconds of
  // the session's monotonic clock; 0 (the default) leaves the search bounded by count only, so
  // that decisions never depend on machine speed.
  int64_t max_search_millis_per_job = 0;
  // kai's deterministic bound on the disruptive search (spec.args max-search-work-per-job and
  // max-search-work-per-action), in work units; 0: none. Always on by default, so that one job
  // cannot stall a cycle; decisions never depend on machine speed.
  int64_t max_search_work_per_job = kDefaultSearchWorkPerJob;
  int64_t max_search_work_per_action = kDefaultSearchWorkPerAction;
  SearchTimeBudgets search_time;  // spec.scenarioSearchBudgets
  bool full_hierarchy_fairness = true;
  // Pending jobs take verdicts kept from the last cycle or shared by a job of the same shape
  // instead of being decided again (framework/verdict_memo.h); false: every job is decided every
  // cycle (the full evaluation that --verify-kept-verdicts compares with).
  bool keep_verdicts = true;
  // Diagnostics of the disruptive actions' search (KAI_DEBUG in the kai command); not owned, and
  // null for no trace. Never changes a decision.
  TraceSink* trace = nullptr;

  const PluginConfig* Plugin(std::string_view name) const;
  // The minruntime plugin's defaultPreemptMinRuntime and defaultReclaimMinRuntime that parse, in
  // seconds (what the plugin protects a workload for when its queues set none).
  std::set<int64_t> DefaultMinRuntimes() const;
  // The depth of `action` (spec.queueDepthPerAction); -1: unlimited.
  int64_t QueueDepth(std::string_view action) const;
};

// One setting of a SchedulingShard that kai did not apply: it keeps KAI's default instead.
struct NotApplied {
  enum class Why {
    kUnknownName,  // a plugin, plugin argument, spec.args key or action kai does not know
    kBadValue,     // a known setting with a malformed value (a negative depth, a non-duration)
  };
  Why why = Why::kUnknownName;
  std::string shard;            // "<source>: <SchedulingShard ref>"
  std::string field;            // the field path, such as spec.plugins.mycustomplugin
  std::string detail;           // why, such as: unknown plugin "mycustomplugin"
  std::string Message() const;  // "<shard>: <field>: <detail>"
  friend bool operator==(const NotApplied&, const NotApplied&) = default;
};

struct ShardConfig {
  SchedulerConfig config;
  std::vector<NotApplied> not_applied;  // in the order of the shard's fields
};

// The configuration of an optional shard for a scheduler that keeps running: never fails. What
// kai cannot apply (unknown names, malformed values) keeps KAI's default and is listed.
ShardConfig ApplyShard(const std::optional<ShardObject>& shard);

// The same for one-shot runs (kai simulate, explain, whatif): a malformed value is an error
// naming the field; unknown names stay listed in not_applied (for warnings).
Result<ShardConfig> CheckShard(const std::optional<ShardObject>& shard);

// The messages of the names of a shard kai does not know (warnings of the one-shot runs).
std::vector<std::string> ShardWarnings(const std::optional<ShardObject>& shard);

// CheckShard's configuration, unknown names left out.
Result<SchedulerConfig> ConfigFromShard(const std::optional<ShardObject>& shard);

// Replaces the action list (kai simulate --actions); unknown names are errors.
Result<SchedulerConfig> WithActions(SchedulerConfig config,
                                    const std::vector<std::string>& actions);

}  // namespace kai
