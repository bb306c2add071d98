#include "kai/daemons/scheduler/metrics.h"

#include <gtest/gtest.h>

#include "kai/core/framework/config.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/util/time.h"
#include "kai/kube/io/manifest_files.h"

namespace kai::scheduler {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// One reclaim cycle of an own scenario, its session measured with a clock that ticks 1 ms a read.
std::unique_ptr<Session> ReclaimSession(ClusterState& world) {
  auto state = LoadManifests({std::string(KAI_SOURCE_DIR) +
                              "/tests/scenarios/reclaim/min-runtime-elapsed-allows-reclaim/"
                              "scenario.yaml"});
  EXPECT_TRUE(state.ok()) << state.error().message;
  world = std::move(*state);
  auto config = ConfigFromShard(world.shard).value();
  config.actions = {"allocate", "reclaim"};
  sim::SimulateOptions options;
  options.now = *ParseRfc3339("2025-01-01T12:00:00Z");
  int64_t ticks = 0;
  auto session = sim::RunSession(sim::BuildSimSnapshot(world, options), config, {},
                                 [&ticks] { return ++ticks; });
  EXPECT_TRUE(session.ok());
  return std::move(session.value());
}

TEST(SessionMetrics, TheSessionMeasuresItsPluginsActionsAndSearches) {
  ClusterState world;
  const auto s = ReclaimSession(world);
  const SessionMetrics& m = s->metrics();
  EXPECT_GT(m.open_millis, 0);
  EXPECT_GT(m.close_millis, 0);
  ASSERT_FALSE(m.plugins.empty());
  EXPECT_EQ(m.plugins.size(), 2 * s->config().plugins.size());  // each opened and closed
  ASSERT_EQ(m.actions.size(), 2u);
  EXPECT_EQ(m.actions[0].action, "allocate");
  EXPECT_EQ(m.actions[1].action, "reclaim");
  EXPECT_GT(m.actions[1].millis, 0);
  EXPECT_EQ(m.actions[1].podgroups_scheduled, 1);  // the scenario's reclaim succeeds
  EXPECT_GE(m.actions[1].podgroups_considered, 1);
  EXPECT_GE(m.actions[1].scenarios_simulated, 1);
  ASSERT_FALSE(m.actions[1].searches.empty());
  EXPECT_EQ(m.actions[1].searches.back().result, "solved");
  ASSERT_FALSE(m.actions[1].searches.back().passes.empty());
  EXPECT_GE(m.actions[1].searches.back().passes.back().millis, 0);
}

TEST(SessionMetrics, NoMetricsClockNoDurations) {
  ClusterState world;
  auto state = LoadManifests({std::string(KAI_SOURCE_DIR) +
                              "/tests/scenarios/reclaim/min-runtime-elapsed-allows-reclaim/"
                              "scenario.yaml"});
  ASSERT_TRUE(state.ok());
  auto config = ConfigFromShard(state->shard).value();
  sim::SimulateOptions options;
  options.now = *ParseRfc3339("2025-01-01T12:00:00Z");
  auto s = sim::RunSession(sim::BuildSimSnapshot(*state, options), config, {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->metrics().open_millis, -1);
  EXPECT_TRUE((*s)->metrics().plugins.empty());
  for (const ActionMetrics& a : (*s)->metrics().actions) EXPECT_EQ(a.millis, -1);
}

TEST(SchedulerMetrics, KaisNamesFromASession) {
  ClusterState world;
  const auto s = ReclaimSession(world);
  serve::MetricsRegistry r;
  SchedulerMetrics m(r, "kai");
  m.ObserveSession(s->metrics());
  m.ObserveQueues(s->snap());
  m.ObserveBudgets(s->config());
  const std::string text = r.Text();
  for (const char* line :
       {"kai_open_session_latency_milliseconds ", "kai_close_session_latency_milliseconds ",
        "kai_plugin_scheduling_latency_milliseconds{OnSession=\"OnSessionOpen\",plugin=",
        "kai_action_scheduling_latency_milliseconds{action=\"reclaim\"} ",
        "kai_podgroups_scheduled_by_action{action=\"reclaim\"} 1",
        "kai_scenarios_simulation_by_action{action=\"reclaim\"} ",
        "kai_scenario_search_jobs_total{action=\"reclaim\",reduced_budget=\"false\","
        "result=\"solved\"}",
        "kai_scenario_search_duration_seconds_bucket{action=\"reclaim\",generator=",
        "kai_scenario_search_job_budget_configured_seconds 0",
        "kai_queue_fair_share_gpu{queue_display_name=\"\",", "kai_queue_allocation_gpu{",
        "kai_queue_gpu_usage{", "# TYPE kai_task_scheduling_latency_milliseconds histogram"}) {
    EXPECT_TRUE(Has(text, line)) << line << "\n" << text;
  }
}

TEST(SchedulerMetrics, QueueLabelsAreKaisAndAStandbyHasNone) {
  serve::MetricsRegistry r;
  SchedulerMetrics m(r, "acme");
  QueueObject named;
  named.meta.name = "team-a";
  named.display_name = "Team A";
  Snapshot snap;
  SnapQueue q{.obj = &named, .name = "team-a"};
  q.fair_share.milli_gpu = 1500;
  q.allocated.milli_cpu = 2000;
  q.usage = {0.25, 0, 0.5};
  snap.queues.push_back(q);
  m.ObserveQueues(snap);
  const std::string labels =
      "{queue_display_name=\"Team A\",queue_metadata_name=\"team-a\",queue_name=\"Team A\"}";
  std::string text = r.Text();
  EXPECT_TRUE(Has(text, "acme_queue_fair_share_gpu" + labels + " 1.5")) << text;
  EXPECT_TRUE(Has(text, "acme_queue_allocation_cpu_cores" + labels + " 2")) << text;
  EXPECT_TRUE(Has(text, "acme_queue_cpu_usage" + labels + " 0.25")) << text;  // historical
  EXPECT_TRUE(Has(text, "acme_queue_gpu_usage" + labels + " 0.5")) << text;
  m.ClearQueues();
  text = r.Text();
  EXPECT_FALSE(Has(text, "acme_queue_")) << text;
}

TEST(SchedulerMetrics, EvictedPodsSeriesGoWithTheirPodGroup) {
  serve::MetricsRegistry r;
  SchedulerMetrics m(r, "kai");
  Decisions d;
  d.evictions.push_back({.pod_group = {"ns", "pg", "uid-1"}, .action = "reclaim"});
  d.evictions.push_back({.pod_group = {"ns", "pg", "uid-1"}, .action = "reclaim"});
  CommitResult result;
  result.evictions = 2;
  result.bind_millis = {12};
  m.ObserveCommit(d, result);
  std::string text = r.Text();
  EXPECT_TRUE(Has(text,
                  "kai_pod_group_evicted_pods_total{action=\"reclaim\",namespace=\"ns\","
                  "nodepool=\"default\",podgroup=\"pg\",uid=\"uid-1\"} 2"))
      << text;
  EXPECT_TRUE(Has(text, "kai_evictions_total 2")) << text;
  EXPECT_TRUE(Has(text, "kai_task_bind_latency_milliseconds_count 1")) << text;
  m.KeepPodGroups({});
  EXPECT_FALSE(Has(r.Text(), "kai_pod_group_evicted_pods_total{"));
}

TEST(SchedulerMetrics, TaskLatencyFromThePodsCreation) {
  serve::MetricsRegistry r;
  SchedulerMetrics m(r, "kai");
  ClusterState world;
  PodObject pod;
  pod.meta.uid = "p1";
  pod.meta.creation = 1000;
  world.pods.push_back(pod);
  Decisions d;
  d.binds.push_back({.pod = {"ns", "p", "p1"}});
  m.ObserveBinds(d, world, 1002);
  const std::string text = r.Text();
  EXPECT_TRUE(Has(text, "kai_task_scheduling_latency_milliseconds_sum 2000")) << text;
}

}  // namespace
}  // namespace kai::scheduler
