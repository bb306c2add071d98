// Scheduler arguments from the SchedulingShard, and the scenario bound of the disruptive actions.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kai/framework/config.h"
#include "kai/io/manifest_files.h"
#include "kai/k8s/decode.h"
#include "kai/sim/simulator.h"
#include "kai/util/time.h"

namespace kai {
namespace {

ShardObject ShardWithArg(const std::string& key, const std::string& value) {
  ShardObject shard;
  shard.meta.kind = "SchedulingShard";
  shard.meta.name = "default";
  shard.meta.source = "test.yaml";
  shard.args[key] = value;
  return shard;
}

TEST(ConfigTest, MaxScenariosPerJobIsRead) {
  auto c = ConfigFromShard(ShardWithArg("max-scenarios-per-job", "25"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->max_scenarios_per_job, 25);
  EXPECT_EQ(ConfigFromShard(std::nullopt)->max_scenarios_per_job, 100000);
}

TEST(ConfigTest, NegativeMaxScenariosNamesTheField) {
  auto c = ConfigFromShard(ShardWithArg("max-scenarios-per-job", "-1"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("spec.args.max-scenarios-per-job"), std::string::npos)
      << c.error().message;
}

TEST(ConfigTest, RestartPartlyMovedGangsIsOptIn) {
  EXPECT_FALSE(ConfigFromShard(std::nullopt)->restart_partly_moved_gangs);
  auto on = ConfigFromShard(ShardWithArg("restart-partly-moved-gangs", "true"));
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->restart_partly_moved_gangs);
  auto off = ConfigFromShard(ShardWithArg("restart-partly-moved-gangs", "false"));
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->restart_partly_moved_gangs);
}

TEST(ConfigTest, BadRestartPartlyMovedGangsNamesTheField) {
  auto c = ConfigFromShard(ShardWithArg("restart-partly-moved-gangs", "yes"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("spec.args.restart-partly-moved-gangs"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("expected true or false"), std::string::npos)
      << c.error().message;
}

// The first cycle of an own scenario (tests/scenarios/<dir>), running only `action`, with its
// shard's configuration changed by `tweak`.
sim::CycleReport FirstCycle(const std::string& dir, const std::string& action,
                            const std::function<void(SchedulerConfig&)>& tweak) {
  auto state =
      LoadManifests({std::string(KAI_SOURCE_DIR) + "/tests/scenarios/" + dir + "/scenario.yaml"});
  EXPECT_TRUE(state.ok()) << state.error().message;
  auto config = ConfigFromShard(state->shard).value();
  config.actions = {action};
  tweak(config);
  int64_t clock = 0;  // the search clock jumps a second per reading
  sim::SimulateOptions options;
  options.now = *ParseRfc3339("2025-01-01T12:00:00Z");
  options.monotonic_millis = [&clock] { return clock += 1000; };
  auto reports = sim::Simulate(*state, config, options);
  EXPECT_TRUE(reports.ok());
  return reports.value().front();
}

// One reclaim cycle of an own scenario that reclaims when searching, with `bounds` applied.
sim::CycleReport ReclaimOnce(const std::function<void(SchedulerConfig&)>& bounds) {
  return FirstCycle("reclaim/min-runtime-elapsed-allows-reclaim", "reclaim", bounds);
}

// Whether some pod's reason says the reclaim search gave up, naming `bound`.
bool GaveUp(const sim::CycleReport& report, const std::string& bound) {
  for (const auto& pod : report.pods) {
    for (const auto& r : pod.reasons) {
      const auto* d = r.As<DisruptionReason>();
      if (d && d->action == "reclaim" && d->outcome == DisruptionOutcome::kGaveUp &&
          d->bound.find(bound) != std::string::npos && r.Message().starts_with("reclaim gave up")) {
        return true;
      }
    }
  }
  return false;
}

// With no scenario allowed, a reclaim that would succeed reports that its search gave up (not
// that reclaim is impossible), and evicts nothing.
TEST(ConfigTest, ScenarioBoundIsReportedAsGivingUp) {
  const sim::CycleReport bounded =
      ReclaimOnce([](SchedulerConfig& c) { c.max_scenarios_per_job = 0; });
  EXPECT_EQ(bounded.counts.evictions, 0);
  EXPECT_TRUE(GaveUp(bounded, "max-scenarios-per-job"));
  // The same cluster reclaims when searching.
  EXPECT_GT(ReclaimOnce([](SchedulerConfig&) {}).counts.evictions, 0);
}

TEST(ConfigTest, SearchTimeBoundParsesDurations) {
  auto c = ConfigFromShard(ShardWithArg("max-search-time-per-job", "250ms"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->max_search_millis_per_job, 250);
  EXPECT_EQ(
      ConfigFromShard(ShardWithArg("max-search-time-per-job", "1.5s"))->max_search_millis_per_job,
      1500);
  EXPECT_EQ(ConfigFromShard(std::nullopt)->max_search_millis_per_job, 0);  // unbounded
  for (const char* bad : {"-1s", "soon", "10"}) {
    auto e = ConfigFromShard(ShardWithArg("max-search-time-per-job", bad));
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message.find("spec.args.max-search-time-per-job"), std::string::npos)
        << e.error().message;
  }
}

// The time bound reads the injected clock (a second per reading): a 500 ms bound stops the
// search at its first check and the reason names the time bound; without a bound the clock is
// never consulted, and an hour is plenty even for this clock.
TEST(ConfigTest, SearchTimeBoundIsReportedAsGivingUp) {
  const sim::CycleReport bounded =
      ReclaimOnce([](SchedulerConfig& c) { c.max_search_millis_per_job = 500; });
  EXPECT_EQ(bounded.counts.evictions, 0);
  EXPECT_TRUE(GaveUp(bounded, "max-search-time-per-job"));
  EXPECT_GT(ReclaimOnce([](SchedulerConfig&) {}).counts.evictions, 0);
  const sim::CycleReport hour =
      ReclaimOnce([](SchedulerConfig& c) { c.max_search_millis_per_job = 3600 * 1000; });
  EXPECT_GT(hour.counts.evictions, 0);
}

// The option decides what consolidation does to a gang it moves in part (tests/scenarios/
// consolidation/gang-moves-whole): by default, as in KAI, only the moved pod is evicted and its
// siblings keep running on their node; with the option the siblings restart with it.
TEST(ConfigTest, RestartPartlyMovedGangsDecidesConsolidation) {
  auto run = [](bool restart) {
    return FirstCycle("consolidation/gang-moves-whole", "consolidation",
                      [&](SchedulerConfig& c) { c.restart_partly_moved_gangs = restart; });
  };
  const sim::CycleReport kai_default = run(false);
  EXPECT_EQ(kai_default.counts.evictions, 1);
  EXPECT_EQ(kai_default.counts.pipelines, 2);
  const sim::CycleReport restarted = run(true);
  EXPECT_EQ(restarted.counts.evictions, 3);
  EXPECT_EQ(restarted.counts.pipelines, 4);
}

TEST(ConfigTest, SearchWorkBudgetsAreReadWithDefaults) {
  const SchedulerConfig d = ConfigFromShard(std::nullopt).value();
  EXPECT_EQ(d.max_search_work_per_job, kDefaultSearchWorkPerJob);
  EXPECT_EQ(d.max_search_work_per_action, kDefaultSearchWorkPerAction);
  auto job = ConfigFromShard(ShardWithArg("max-search-work-per-job", "5000"));
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->max_search_work_per_job, 5000);
  auto off = ConfigFromShard(ShardWithArg("max-search-work-per-action", "0"));
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->max_search_work_per_action, 0);  // no bound
  for (const char* key : {"max-search-work-per-job", "max-search-work-per-action"}) {
    for (const char* bad : {"-1", "many", "1e6"}) {
      auto e = ConfigFromShard(ShardWithArg(key, bad));
      ASSERT_FALSE(e.ok()) << key << "=" << bad;
      EXPECT_NE(e.error().message.find(std::string("spec.args.") + key), std::string::npos)
          << e.error().message;
    }
  }
}

// A SchedulingShard manifest with `budgets` as its spec.scenarioSearchBudgets block.
Result<SchedulerConfig> ShardWithBudgets(const std::string& budgets) {
  ClusterState state;
  const std::string yaml =
      "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: default}\n"
      "spec:\n  scenarioSearchBudgets:\n" +
      budgets;
  const Status st = DecodeManifestText(yaml, "shard.yaml", state);
  if (!st.ok()) return st.error();
  return ConfigFromShard(state.shard);
}

TEST(ConfigTest, ScenarioSearchBudgetsAreDecoded) {
  auto c = ShardWithBudgets(
      "    maxActionSearchDuration: {default: 5m, reclaim: 1.5s}\n"
      "    maxGeneratorSearchDuration: {NodeLocalGreedy: 30s, default: 2m}\n"
      "    maxJobSearchDuration: 4m\n"
      "    minJobSearchDuration: 250ms\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const SearchTimeBudgets& t = c->search_time;
  EXPECT_EQ(t.Action("reclaim").millis, 1500);
  EXPECT_EQ(t.Action("reclaim").field,
            "spec.scenarioSearchBudgets.maxActionSearchDuration.reclaim");
  EXPECT_EQ(t.Action("preempt").millis, 5 * 60 * 1000);  // the default key
  EXPECT_EQ(t.Action("preempt").field,
            "spec.scenarioSearchBudgets.maxActionSearchDuration.default");
  EXPECT_EQ(t.Generator("NodeLocalGreedy").millis, 30 * 1000);
  EXPECT_EQ(t.Generator("MultiNodeGang").millis, 2 * 60 * 1000);
  EXPECT_EQ(t.job_millis, 4 * 60 * 1000);
  EXPECT_EQ(t.min_job_millis, 250);
  // The work budget applies whatever the time budgets say.
  EXPECT_EQ(c->max_search_work_per_job, kDefaultSearchWorkPerJob);
  // Absent: no time budget at all.
  const SearchTimeBudgets none = ConfigFromShard(std::nullopt)->search_time;
  EXPECT_EQ(none.Action("reclaim").millis, 0);
  EXPECT_EQ(none.Generator("MultiNodeGang").millis, 0);
  EXPECT_EQ(none.job_millis, 0);
}

TEST(ConfigTest, BadScenarioSearchBudgetsNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"    maxJobSearchDuration: soon\n", "spec.scenarioSearchBudgets.maxJobSearchDuration"},
      {"    minJobSearchDuration: -1s\n", "spec.scenarioSearchBudgets.minJobSearchDuration"},
      {"    maxActionSearchDuration: {reclaim: '10'}\n",
       "spec.scenarioSearchBudgets.maxActionSearchDuration.reclaim"},
      {"    maxActionSearchDuration: {allocate: 1s}\n",
       "spec.scenarioSearchBudgets.maxActionSearchDuration.allocate"},
      {"    maxGeneratorSearchDuration: {Greedy: 1s}\n",
       "spec.scenarioSearchBudgets.maxGeneratorSearchDuration.Greedy"},
      {"    maxJobSearchDuration: 1s\n    minJobSearchDuration: 1s\n",
       "spec.scenarioSearchBudgets.minJobSearchDuration"},
      {"    maxActionSearchDuration: [1s]\n", "spec.scenarioSearchBudgets.maxActionSearchDuration"},
  };
  for (const auto& [budgets, field] : cases) {
    auto c = ShardWithBudgets(budgets);
    ASSERT_FALSE(c.ok()) << budgets;
    EXPECT_NE(c.error().message.find(field), std::string::npos) << c.error().message;
  }
}

// KAI's maxJobSearchDuration bounds the search in time (the clock jumps a second per reading);
// the reason names the field with its value.
TEST(ConfigTest, JobSearchDurationIsReportedAsGivingUp) {
  const sim::CycleReport bounded =
      ReclaimOnce([](SchedulerConfig& c) { c.search_time.job_millis = 500; });
  EXPECT_EQ(bounded.counts.evictions, 0);
  EXPECT_TRUE(GaveUp(bounded, "spec.scenarioSearchBudgets.maxJobSearchDuration=500ms"));
  const sim::CycleReport action =
      ReclaimOnce([](SchedulerConfig& c) { c.search_time.action_millis["reclaim"] = 500; });
  EXPECT_EQ(action.counts.evictions, 0);
  EXPECT_TRUE(GaveUp(action, "spec.scenarioSearchBudgets.maxActionSearchDuration.reclaim=500ms"));
  // minJobSearchDuration gives the job its time even when the action's is spent.
  const sim::CycleReport min_job = ReclaimOnce([](SchedulerConfig& c) {
    c.search_time.action_millis["default"] = 1;
    c.search_time.min_job_millis = 3600 * 1000;
  });
  EXPECT_GT(min_job.counts.evictions, 0);
}

// A generator's budget ends its pass, not the search: with the node-local pass cut at once, the
// accumulated pass still finds the reclaim.
TEST(ConfigTest, GeneratorBudgetEndsOnlyItsPass) {
  const sim::CycleReport r = ReclaimOnce(
      [](SchedulerConfig& c) { c.search_time.generator_millis["NodeLocalGreedy"] = 500; });
  EXPECT_GT(r.counts.evictions, 0);
  const sim::CycleReport both =
      ReclaimOnce([](SchedulerConfig& c) { c.search_time.generator_millis["default"] = 500; });
  EXPECT_EQ(both.counts.evictions, 0);
  EXPECT_TRUE(GaveUp(both, "spec.scenarioSearchBudgets.maxGeneratorSearchDuration.default=500ms"));
}

}  // namespace
}  // namespace kai
