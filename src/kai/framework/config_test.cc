// Scheduler arguments from the SchedulingShard, and the scenario bound of the disruptive actions.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

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

}  // namespace
}  // namespace kai
