// Scheduler arguments from the SchedulingShard, and the scenario bound of the disruptive actions.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/util/time.h"
#include "kai/kube/io/manifest_files.h"

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

namespace kai {
namespace {

// A SchedulingShard manifest with `spec` as its spec block, decoded.
std::optional<ShardObject> DecodedShard(const std::string& spec) {
  ClusterState state;
  const std::string yaml =
      "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: default}\nspec:\n" +
      spec;
  const Status st = DecodeManifestText(yaml, "shard.yaml", state);
  EXPECT_TRUE(st.ok()) << st.error().message;
  return state.shard;
}

std::vector<std::string> Fields(const std::vector<NotApplied>& items) {
  std::vector<std::string> out;
  for (const NotApplied& n : items) out.push_back(n.field);
  return out;
}

std::string ArgumentOf(const SchedulerConfig& c, const std::string& plugin,
                       const std::string& key) {
  const PluginConfig* p = c.Plugin(plugin);
  if (!p || !p->arguments.count(key)) return "";
  return p->arguments.at(key);
}

// KAI's chart example: a plugin and a scheduler argument kai does not know. Both are reported,
// everything else applies, and the configuration is KAI's default otherwise.
TEST(ShardConfigTest, UnknownNamesAreReportedNotFatal) {
  const auto shard = DecodedShard(
      "  args: {v: \"0\", max-scenarios-per-job: \"7\"}\n"
      "  plugins:\n"
      "    mycustomplugin: {priority: 50}\n"
      "    proportion: {arguments: {kValue: \"2\", colour: blue}}\n"
      "  actions: {warp: {enabled: true}, reclaim: {enabled: false}}\n");
  const ShardConfig sc = ApplyShard(shard);
  EXPECT_EQ(Fields(sc.not_applied),
            (std::vector<std::string>{"spec.plugins.mycustomplugin",
                                      "spec.plugins.proportion.arguments.colour", "spec.args.v",
                                      "spec.actions.warp"}));
  for (const NotApplied& n : sc.not_applied) {
    EXPECT_EQ(n.why, NotApplied::Why::kUnknownName) << n.Message();
    EXPECT_EQ(n.shard, "shard.yaml: SchedulingShard default");
  }
  EXPECT_EQ(sc.not_applied[0].Message(),
            "shard.yaml: SchedulingShard default: spec.plugins.mycustomplugin: unknown plugin "
            "\"mycustomplugin\"");
  EXPECT_EQ(sc.config.max_scenarios_per_job, 7);
  EXPECT_EQ(ArgumentOf(sc.config, "proportion", "kValue"), "2");
  EXPECT_EQ(sc.config.Plugin("mycustomplugin"), nullptr);
  EXPECT_EQ(sc.config.actions, (std::vector<std::string>{"allocate", "consolidation", "preempt",
                                                         "stalegangeviction"}));
  // The one-shot runs: the same configuration, the names as warnings.
  auto checked = ConfigFromShard(shard);
  ASSERT_TRUE(checked.ok()) << checked.error().message;
  EXPECT_EQ(checked->actions, sc.config.actions);
  const std::vector<std::string> warnings = ShardWarnings(shard);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[2],
            "shard.yaml: SchedulingShard default: spec.args.v: unknown scheduler "
            "argument; not applied");
}

// A malformed known value: an error for the one-shot runs; the running scheduler keeps the default
// and reports it.
TEST(ShardConfigTest, MalformedValuesKeepTheDefaultInTheRunningScheduler) {
  const auto shard = DecodedShard(
      "  placementStrategy: {gpu: scatter}\n"
      "  args: {max-scenarios-per-job: \"12x\", schedule-period: soon}\n"
      "  queueDepthPerAction: {allocate: \"-3\"}\n"
      "  minRuntime: {preemptMinRuntime: later}\n"
      "  kValue: lots\n"
      "  plugins: {minruntime: {arguments: {reclaimResolveMethod: nearest}}}\n");
  const ShardConfig sc = ApplyShard(shard);
  EXPECT_EQ(Fields(sc.not_applied),
            (std::vector<std::string>{
                "spec.placementStrategy.gpu", "spec.kValue", "spec.minRuntime.preemptMinRuntime",
                "spec.plugins.minruntime.arguments", "spec.args.max-scenarios-per-job",
                "spec.args.schedule-period", "spec.queueDepthPerAction.allocate"}));
  for (const NotApplied& n : sc.not_applied)
    EXPECT_EQ(n.why, NotApplied::Why::kBadValue) << n.Message();
  EXPECT_EQ(sc.config.placement_gpu, "binpack");
  EXPECT_EQ(sc.config.max_scenarios_per_job, 100000);
  EXPECT_FALSE(sc.config.schedule_period_millis);
  EXPECT_EQ(sc.config.QueueDepth("allocate"), -1);
  EXPECT_EQ(ArgumentOf(sc.config, "proportion", "kValue"), "");
  EXPECT_EQ(ArgumentOf(sc.config, "minruntime", "reclaimResolveMethod"), "");
  auto checked = ConfigFromShard(shard);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().message,
            "shard.yaml: SchedulingShard default: spec.placementStrategy.gpu: must be binpack or "
            "spread, got \"scatter\"");
}

// KAI's operator renders spec.kValue and spec.minRuntime as default arguments of proportion and
// minruntime; the shard's own arguments of those plugins replace them.
TEST(ShardConfigTest, KValueAndMinRuntimeBecomePluginArguments) {
  auto c = ConfigFromShard(DecodedShard(
      "  kValue: 1.5\n  minRuntime: {preemptMinRuntime: 5m, reclaimMinRuntime: 15m}\n"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(ArgumentOf(*c, "proportion", "kValue"), "1.5");
  EXPECT_EQ(ArgumentOf(*c, "minruntime", "defaultPreemptMinRuntime"), "5m");
  EXPECT_EQ(ArgumentOf(*c, "minruntime", "defaultReclaimMinRuntime"), "15m");
  // As KAI's strconv.FormatFloat(v, 'f', -1, 64).
  EXPECT_EQ(ArgumentOf(*ConfigFromShard(DecodedShard("  kValue: 2\n")), "proportion", "kValue"),
            "2");
  EXPECT_EQ(ArgumentOf(*ConfigFromShard(DecodedShard("  kValue: 1e-1\n")), "proportion", "kValue"),
            "0.1");
  auto replaced =
      ConfigFromShard(DecodedShard("  kValue: 1.5\n  minRuntime: {preemptMinRuntime: 5m}\n"
                                   "  plugins:\n    proportion: {arguments: {kValue: \"0.5\"}}\n"
                                   "    minruntime: {arguments: {reclaimResolveMethod: queue}}\n"));
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_EQ(ArgumentOf(*replaced, "proportion", "kValue"), "0.5");
  EXPECT_EQ(ArgumentOf(*replaced, "minruntime", "defaultPreemptMinRuntime"), "");
  EXPECT_EQ(ArgumentOf(*replaced, "minruntime", "reclaimResolveMethod"), "queue");
  // Enabling or reprioritising a plugin keeps them.
  auto kept =
      ConfigFromShard(DecodedShard("  kValue: 3\n  plugins:\n    proportion: {priority: 1850}\n"));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(ArgumentOf(*kept, "proportion", "kValue"), "3");
}

TEST(ShardConfigTest, QueueDepthPerAction) {
  auto c = ConfigFromShard(DecodedShard("  queueDepthPerAction: {allocate: 100, reclaim: 20}\n"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->QueueDepth("allocate"), 100);
  EXPECT_EQ(c->QueueDepth("reclaim"), 20);
  EXPECT_EQ(c->QueueDepth("preempt"), -1);
  // kai's older argument sets allocate's depth; the per-action map wins over it.
  auto old = ConfigFromShard(ShardWithArg("queue-depth-per-action", "4"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->QueueDepth("allocate"), 4);
  EXPECT_EQ(old->QueueDepth("reclaim"), -1);
  auto both = DecodedShard(
      "  args: {queue-depth-per-action: \"4\"}\n  queueDepthPerAction: {allocate: 9, dance: 1}\n");
  const ShardConfig sc = ApplyShard(both);
  EXPECT_EQ(sc.config.QueueDepth("allocate"), 9);
  EXPECT_EQ(Fields(sc.not_applied), std::vector<std::string>{"spec.queueDepthPerAction.dance"});
  EXPECT_EQ(sc.not_applied[0].why, NotApplied::Why::kUnknownName);
  EXPECT_EQ(ConfigFromShard(std::nullopt)->QueueDepth("allocate"), -1);
}

// The depth of an action bounds the jobs it takes per leaf queue: with reclaim's at 0, the job
// that reclaims in this scenario is not tried.
TEST(ShardConfigTest, QueueDepthBoundsTheDisruptiveActions) {
  EXPECT_GT(ReclaimOnce([](SchedulerConfig&) {}).counts.evictions, 0);
  const sim::CycleReport bounded =
      ReclaimOnce([](SchedulerConfig& c) { c.queue_depth_per_action["reclaim"] = 0; });
  EXPECT_EQ(bounded.counts.evictions, 0);
  EXPECT_GT(ReclaimOnce([](SchedulerConfig& c) {
              c.queue_depth_per_action["reclaim"] = 1;
            }).counts.evictions,
            0);
}

}  // namespace
}  // namespace kai
