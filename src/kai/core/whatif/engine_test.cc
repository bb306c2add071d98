// The what-if event loop on a one-node cluster: arrivals, completions, the schedule period,
// evictions that restart a job, idle stretches and time-based fair share, all on the simulated
// clock.
#include "kai/core/whatif/engine.h"

#include <gtest/gtest.h>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/util/time.h"

namespace kai::whatif {
namespace {

std::string Queue(const std::string& name, int quota) {
  return "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec:\n  resources:\n    gpu: {quota: " + std::to_string(quota) +
         ", limit: -1, overQuotaWeight: 1}\n    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
         "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n";
}

ClusterState Cluster(int quota_a = 2, int quota_b = 2, int nodes = 1) {
  std::string y = Queue("team-a", quota_a) + Queue("team-b", quota_b);
  for (int n = 0; n < nodes; ++n) {
    y += "apiVersion: v1\nkind: Node\nmetadata: {name: node-" + std::to_string(n) +
         "}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"4\", "
         "pods: \"110\"}\n---\n";
  }
  ClusterState s;
  const auto errors = ProblemsOf(DecodeManifestText(y, "cluster.yaml", s));
  EXPECT_TRUE(errors.empty()) << errors.front();
  return s;
}

TraceJob Job(const std::string& name, const std::string& queue, int64_t submit, int64_t duration,
             int pods, int64_t gpu_milli) {
  TraceJob j;
  j.name = name;
  j.ns = queue;
  j.queue = queue;
  j.submit = submit;
  j.duration = duration;
  j.pods = pods;
  j.min_member = pods;
  j.gpu_milli = gpu_milli;
  return j;
}

WhatIfOptions Options(int64_t until) {
  WhatIfOptions o;
  o.start = *ParseRfc3339("2025-01-06T00:00:00Z");
  o.until_seconds = until;
  o.buckets = 10;
  return o;
}

RunResult Simulate(ClusterState c, const std::vector<TraceJob>& jobs, const WhatIfOptions& o) {
  auto config = ConfigFromShard(c.shard);
  EXPECT_TRUE(config.ok());
  auto r = RunWhatIf(std::move(c), *config, jobs, o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : RunResult{};
}

const QueueTotals& QueueOf(const RunResult& r, const std::string& name) {
  for (const QueueTotals& q : r.queues) {
    if (q.name == name) return q;
  }
  ADD_FAILURE() << "no queue " << name;
  return r.queues.front();
}

TEST(WhatIfEngine, JobRunsItsDurationAndCompletes) {
  const RunResult r = Simulate(Cluster(), {Job("a", "team-a", 10, 100, 2, 1000)}, Options(1000));
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].first_start, 10);
  EXPECT_EQ(r.jobs[0].completed, 110);
  EXPECT_EQ(r.jobs[0].Wait(1000), 0);
  EXPECT_EQ(QueueOf(r, "team-a").used_milli_gpu_seconds, 2 * 1000 * 100);
  EXPECT_EQ(r.capacity_milli_gpu, 4000);
  int64_t cluster = 0;
  for (int64_t b : r.cluster_allocated) cluster += b;
  EXPECT_EQ(cluster, 2 * 1000 * 100);
}

TEST(WhatIfEngine, SecondJobStartsAtTheCycleAfterTheFirstCompletes) {
  const RunResult r =
      Simulate(Cluster(), {Job("a", "team-a", 0, 100, 4, 1000), Job("b", "team-a", 5, 50, 4, 1000)},
               Options(1000));
  EXPECT_EQ(r.jobs[0].first_start, 0);
  EXPECT_EQ(r.jobs[1].first_start, 100);
  EXPECT_EQ(r.jobs[1].completed, 150);
  EXPECT_EQ(r.jobs[1].Wait(1000), 95);
}

TEST(WhatIfEngine, SchedulePeriodAlignsCycles) {
  WhatIfOptions o = Options(1000);
  o.period_seconds = 10;
  const RunResult r = Simulate(Cluster(), {Job("a", "team-a", 13, 100, 1, 1000)}, o);
  EXPECT_EQ(r.jobs[0].first_start, 20);
  EXPECT_EQ(r.jobs[0].completed, 120);
}

TEST(WhatIfEngine, NeverStartedJobWaitsUntilTheEnd) {
  const RunResult r = Simulate(Cluster(), {Job("huge", "team-a", 100, 10, 8, 1000)}, Options(1000));
  EXPECT_EQ(r.jobs[0].first_start, -1);
  EXPECT_EQ(r.jobs[0].Wait(1000), 900);
}

TEST(WhatIfEngine, ReclaimedJobRestartsWithItsFullDuration) {
  // team-a borrows the whole node; team-b's job within its quota reclaims; team-a's job goes
  // back to pending and restarts from scratch once team-b's job is done.
  const RunResult r = Simulate(
      Cluster(),
      {Job("borrower", "team-a", 0, 1000, 4, 1000), Job("owner", "team-b", 100, 200, 2, 1000)},
      Options(5000));
  const JobOutcome& borrower = r.jobs[0];
  const JobOutcome& owner = r.jobs[1];
  EXPECT_EQ(borrower.first_start, 0);
  EXPECT_EQ(borrower.restarts, 1);
  ASSERT_GE(owner.first_start, 100);
  EXPECT_LE(owner.first_start, 102);
  EXPECT_EQ(owner.completed, owner.first_start + 200);
  // Its second run starts when room is back and lasts the full 1000 s.
  EXPECT_GE(borrower.completed, owner.completed + 1000);
  EXPECT_GT(QueueOf(r, "team-a").evictions_suffered, 0);
  EXPECT_EQ(QueueOf(r, "team-a").evictions_suffered, QueueOf(r, "team-b").evictions_caused);
  EXPECT_EQ(QueueOf(r, "team-b").evictions_suffered, 0);
}

TEST(WhatIfEngine, IdleStretchesCostNoCycles) {
  const RunResult r = Simulate(
      Cluster(),
      {Job("early", "team-a", 0, 60, 1, 1000), Job("late", "team-a", 6 * 86400, 60, 1, 1000)},
      Options(7 * 86400));
  EXPECT_EQ(r.jobs[1].first_start, 6 * 86400);
  EXPECT_LT(r.cycles, 10);
  EXPECT_EQ(r.events, 4);  // two arrivals, two completions
}

TEST(WhatIfEngine, SameInputSameResult) {
  const std::vector<TraceJob> jobs = {Job("a", "team-a", 0, 300, 3, 1000),
                                      Job("b", "team-b", 10, 200, 2, 1000),
                                      Job("c", "team-a", 20, 100, 1, 500)};
  EXPECT_EQ(Simulate(Cluster(), jobs, Options(2000)), Simulate(Cluster(), jobs, Options(2000)));
}

TEST(WhatIfEngine, UsageHistoryShrinksAHeavyUsersShare) {
  // team-a uses the whole node for ten hours; then both queues ask for all of it at once. With
  // time-based fair share (half-life 1 h), team-b's share is the larger; without, they are equal.
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 4; ++i)
    jobs.push_back(Job("hog" + std::to_string(i), "team-a", 0, 36000, 1, 1000));
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(Job("a" + std::to_string(i), "team-a", 36000, 3600, 1, 1000));
    jobs.push_back(Job("b" + std::to_string(i), "team-b", 36000, 3600, 1, 1000));
  }
  WhatIfOptions o = Options(40000);
  o.buckets = 40;  // 1000 s each; bucket 36 is [36000, 37000)
  const RunResult plain = Simulate(Cluster(0, 0), jobs, o);
  usage::UsageDbConfig u;
  u.params.half_life_seconds = 3600;
  o.usage = u;
  const RunResult timed = Simulate(Cluster(0, 0), jobs, o);
  EXPECT_EQ(QueueOf(plain, "team-a").fair_share[37], QueueOf(plain, "team-b").fair_share[37]);
  EXPECT_LT(QueueOf(timed, "team-a").fair_share[37], QueueOf(timed, "team-b").fair_share[37]);
  EXPECT_GT(QueueOf(timed, "team-b").allocated[37], QueueOf(timed, "team-a").allocated[37]);
}

TEST(WhatIfEngine, UnknownQueueIsAnErrorNamingTheLine) {
  TraceJob j = Job("x", "nobody", 0, 10, 1, 1000);
  j.line = 7;
  auto c = Cluster();
  auto config = ConfigFromShard(c.shard);
  auto r = RunWhatIf(std::move(c), *config, {j}, Options(100));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "trace line 7: queue \"nobody\" is not in the cluster");
}

}  // namespace
}  // namespace kai::whatif
