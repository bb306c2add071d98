#pragma once
// What a session measured, for the scheduler's metrics (KAI's pkg/scheduler/metrics): plain
// counts, and durations taken with the session's metrics clock. The daemon (scheduler/) turns
// them into Prometheus families; nothing here decides anything. Durations are only taken when a
// metrics clock is installed (Session::SetMetricsClock): kai simulate and kai whatif read no
// clock for them, and the search clock (Session::MonotonicMillis), which bounds the disruptive
// search, is never read for a measurement.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kai {

struct PluginTiming {
  std::string plugin;
  bool open = true;  // OnSessionOpen; false: OnSessionClose
  int64_t millis = 0;
};

// One pass of a scenario generator (KAI's NodeLocalGreedy, MultiNodeGang) over one job.
struct GeneratorPass {
  std::string_view generator;  // literals, as every word below
  std::string_view result;     // solved, unsolved, deadline_exhausted
  int64_t simulated = 0;       // scenarios simulated
  int64_t filtered = 0;        // scenarios skipped by the cheap necessary condition
  int64_t duplicates = 0;      // scenarios already tried
  int64_t millis = -1;         // -1: not measured (no metrics clock)
};

// One job's disruptive search (reclaim, preempt, consolidation).
struct JobSearch {
  std::string_view result;  // solved, deadline_exhausted, generators_exhausted
  bool action_budget_exhausted = false;
  std::vector<GeneratorPass> passes;
};

struct ActionMetrics {
  std::string action;
  int64_t millis = -1;  // -1: not measured
  int64_t podgroups_considered = 0, podgroups_scheduled = 0;
  int64_t scenarios_simulated = 0, scenarios_filtered = 0;
  int64_t preemption_attempts = 0;
  // Pending jobs the action decided, and those it did not decide again: verdicts kept from the
  // last cycle, and verdicts shared by a job of the same shape (framework/verdict_memo.h).
  int64_t jobs_tried = 0, jobs_kept = 0, jobs_shared = 0;
  std::vector<JobSearch> searches;
};

struct SessionMetrics {
  int64_t open_millis = -1, close_millis = -1;  // -1: not measured
  std::vector<PluginTiming> plugins;
  std::vector<ActionMetrics> actions;  // in the order they ran

  // The action running now (the last one started); null before the first.
  ActionMetrics* current() { return actions.empty() ? nullptr : &actions.back(); }
};

}  // namespace kai
