// Scheduler arguments from the SchedulingShard, and the scenario bound of the disruptive actions.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kai/framework/config.h"
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

// With no scenario allowed, a reclaim that would succeed reports that its search gave up (not
// that reclaim is impossible), and evicts nothing.
TEST(ConfigTest, ScenarioBoundIsReportedAsGivingUp) {
  const std::string dir =
      std::string(KAI_SOURCE_DIR) + "/tests/scenarios/reclaim/min-runtime-elapsed-allows-reclaim";
  auto state = LoadManifests({dir + "/scenario.yaml"});
  ASSERT_TRUE(state.ok()) << state.error().message;
  auto run = [&](int64_t bound) {
    auto config = ConfigFromShard(state->shard).value();
    config.actions = {"reclaim"};
    config.max_scenarios_per_job = bound;
    sim::SimulateOptions options;
    options.now = *ParseRfc3339("2025-01-01T12:00:00Z");
    auto reports = sim::Simulate(*state, config, options);
    EXPECT_TRUE(reports.ok());
    return reports.value().front();
  };
  const sim::CycleReport bounded = run(0);
  EXPECT_EQ(bounded.counts.evictions, 0);
  bool gave_up = false;
  for (const auto& pod : bounded.pods) {
    for (const auto& r : pod.reasons) gave_up = gave_up || r.detail.find("reclaim gave up") == 0;
  }
  EXPECT_TRUE(gave_up);
  EXPECT_GT(run(100000).counts.evictions, 0);  // the same cluster reclaims when searching
}

}  // namespace
}  // namespace kai
