// Verdicts kept from the last cycle and shared by jobs of one shape (framework/verdict_memo.h):
// how many jobs each action decides, and that the decisions and reasons are those of the full
// evaluation.
#include "kai/core/framework/verdict_memo.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/util/time.h"

namespace kai {
namespace {

std::string Node(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    nvidia.com/gpu.count: '" + std::to_string(gpus) +
         "'\nstatus:\n  allocatable:\n    cpu: '64'\n    memory: 512Gi\n    nvidia.com/gpu: '" +
         std::to_string(gpus) + "'\n    pods: '110'\n---\n";
}

std::string Queue(const std::string& name, int gpu_quota = -1) {
  return "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: " + name +
         "\nspec:\n  resources:\n    gpu: {quota: " + std::to_string(gpu_quota) +
         ", limit: -1, overQuotaWeight: 1}\n"
         "    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
         "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n";
}

// A one-pod job asking `gpus` GPUs; running on `node` when it is given.
std::string Job(const std::string& name, const std::string& queue, int gpus,
                const std::string& node = "", int created_minute = 0) {
  const std::string created = "2025-01-01T10:" + std::string(created_minute < 10 ? "0" : "") +
                              std::to_string(created_minute) + ":00Z";
  std::string y =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: " + name +
      "\n  namespace: default\n  creationTimestamp: '" + created + "'\n";
  if (!node.empty()) {
    y += "  annotations:\n    kai.scheduler/last-start-timestamp: '2025-01-01T11:00:00Z'\n";
  }
  y += "spec:\n  queue: " + queue + "\n  minMember: 1\n  priorityClassName: train\n";
  y += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
       "-0\n  namespace: default\n  creationTimestamp: '" + created +
       "'\n  annotations:\n    pod-group-name: " + name +
       "\n  labels:\n    kai.scheduler/queue: " + queue +
       "\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: train\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  y += "  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: '1'\n"
       "      limits:\n        nvidia.com/gpu: '" +
       std::to_string(gpus) + "'\nstatus:\n  phase: " + (node.empty() ? "Pending" : "Running") +
       "\n---\n";
  return y;
}

const char* kTrain =
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: train\nvalue: 50\n"
    "---\n";

ClusterState World(const std::string& text) {
  ClusterState state;
  auto decoded = CheckDecoded(std::move(state), DecodeManifestText(text, "test", state));
  EXPECT_TRUE(decoded.ok()) << decoded.error().message;
  return decoded.ok() ? std::move(decoded.value()) : ClusterState{};
}

// Two full 4-GPU nodes of queue a's running jobs, and `pending` one-GPU jobs of queue a waiting.
ClusterState FullCluster(int pending, int free_gpus = 0) {
  std::string y = std::string(kTrain) + Queue("a") + Node("n0", 4) + Node("n1", 4 + free_gpus);
  for (int i = 0; i < 8; ++i) y += Job("run-" + std::to_string(i), "a", 1, i < 4 ? "n0" : "n1");
  for (int i = 0; i < pending; ++i) y += Job("wait-" + std::to_string(i), "a", 1, "", 10 + i);
  return World(y);
}

sim::SimulateOptions Options() {
  sim::SimulateOptions o;
  o.now = *ParseRfc3339("2025-01-01T12:00:00Z");
  o.verify_kept_verdicts = true;  // every cycle also runs the full evaluation and compares
  return o;
}

SchedulerConfig Config() { return ConfigFromShard(std::nullopt).value(); }

const ActionMetrics* Action(const Session& s, const std::string& name) {
  for (const ActionMetrics& a : s.metrics().actions) {
    if (a.action == name) return &a;
  }
  return nullptr;
}

// The same world decided in full (SchedulerConfig::keep_verdicts off): `action`'s jobs tried
// there, and the decisions and reasons must be `kept`'s.
int64_t TriedInFullEvaluation(const ClusterState& world, const Session& kept,
                              const std::string& action) {
  SchedulerConfig full = Config();
  full.keep_verdicts = false;
  auto reference = sim::RunSession(BuildSnapshot(world, Options().now), full, {});
  EXPECT_TRUE(reference.ok());
  if (!reference.ok()) return -1;
  EXPECT_EQ(sim::DecisionDifference(**reference, kept), "");
  const ActionMetrics* a = Action(**reference, action);
  return a ? a->jobs_tried : -1;
}

TEST(VerdictMemo, JobsOfOneShapeShareOneDecisionPerAction) {
  ClusterState world = FullCluster(10);
  auto s = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ActionMetrics* allocate = Action(**s, "allocate");
  ASSERT_NE(allocate, nullptr);
  EXPECT_EQ(allocate->jobs_tried, 1);
  EXPECT_EQ(allocate->jobs_shared, 9);
  EXPECT_EQ(allocate->jobs_kept, 0);
  EXPECT_EQ(TriedInFullEvaluation(world, **s, "allocate"), 10);
}

// Full nodes of queue a's running jobs; one-GPU jobs of the same shape wait in queues a, b and
// c, and in queue capped, whose GPU limit is 0.
ClusterState FullClusterWithQueues() {
  std::string y = std::string(kTrain) + Queue("a") + Queue("b") + Queue("c") + Node("n0", 4);
  y += "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: capped\nspec:\n"
       "  resources:\n    gpu: {quota: 0, limit: 0, overQuotaWeight: 1}\n"
       "    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
       "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n";
  for (int i = 0; i < 4; ++i) y += Job("run-" + std::to_string(i), "a", 1, "n0");
  int minute = 10;
  for (const std::string q : {"a", "b", "c", "capped"}) {
    for (int i = 0; i < 3; ++i) y += Job("wait-" + q + std::to_string(i), q, 1, "", minute++);
  }
  return World(y);
}

TEST(VerdictMemo, AFailedPlacementIsSharedByJobsOfItsShapeInEveryQueueThatAdmitsThem) {
  ClusterState world = FullClusterWithQueues();
  auto s = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ActionMetrics* allocate = Action(**s, "allocate");
  ASSERT_NE(allocate, nullptr);
  // One placement fails; the first job of b and c takes it after its queue admitted it, capped's
  // first job is refused by its queue; the other jobs share their queue's verdict.
  EXPECT_EQ(allocate->jobs_tried, 2);
  EXPECT_EQ(allocate->jobs_shared, 10);
  // The decisions and reasons are the full evaluation's (capped's jobs: the queue's limit).
  EXPECT_EQ(TriedInFullEvaluation(world, **s, "allocate"), 12);
  const Snapshot& snap = (*s)->snap();
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    if (snap.jobs[j].name.substr(0, 5) != "wait-") continue;
    const std::vector<Reason>& reasons = (*s)->JobReasons(j);
    ASSERT_FALSE(reasons.empty()) << snap.jobs[j].name;
    const bool capped = snap.jobs[j].name.starts_with("wait-capped");
    EXPECT_EQ(reasons.front().kind() == ReasonKind::kOverLimit, capped) << snap.jobs[j].name;
  }
}

TEST(VerdictMemo, ACommitEndsTheSharingOfEarlierVerdicts) {
  // One GPU free: the first job binds; the second is decided again (something was committed
  // since the first decision) and fails; the third shares the second's verdict.
  ClusterState world = FullCluster(3, /*free_gpus=*/1);
  auto s = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  ASSERT_TRUE(s.ok());
  const ActionMetrics* allocate = Action(**s, "allocate");
  EXPECT_EQ((*s)->counters().binds, 1);
  EXPECT_EQ(allocate->jobs_tried, 2);
  EXPECT_EQ(allocate->jobs_shared, 1);
}

TEST(VerdictMemo, AQuietCycleKeepsEveryVerdictAndAChangeDecidesAgain) {
  ClusterState world = FullCluster(5);
  sim::CycleCache cycles;
  const SchedulerConfig config = Config();
  auto first = sim::RunCycle(world, config, Options(), 1, &cycles);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_GT(first->jobs_tried, 0);
  EXPECT_EQ(first->jobs_kept, 0);

  auto second = sim::RunCycle(world, config, Options(), 2, &cycles);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->jobs_tried, 0);
  EXPECT_EQ(second->jobs_kept, first->jobs_tried + first->jobs_shared);
  for (const sim::PodReport& p : second->pods) {
    if (p.status == "Pending") {
      EXPECT_FALSE(p.reasons.empty()) << p.name;
    }
  }

  // A new node: nothing is kept, and the jobs bind.
  ClusterState grown = World(Node("n2", 2));
  world.nodes.push_back(grown.nodes.front());
  cycles.changes.rebuild = true;
  auto third = sim::RunCycle(world, config, Options(), 3, &cycles);
  ASSERT_TRUE(third.ok()) << third.error().message;
  EXPECT_EQ(third->jobs_kept, 0);
  EXPECT_EQ(third->counts.binds, 2);
}

TEST(VerdictMemo, TheClockMovingKeepsAllocateVerdicts) {
  ClusterState world = FullCluster(3);
  sim::CycleCache cycles;
  sim::SimulateOptions o = Options();
  ASSERT_TRUE(sim::RunCycle(world, Config(), o, 1, &cycles).ok());
  o.now += 10;
  auto second = sim::RunCycle(world, Config(), o, 2, &cycles);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->jobs_tried, 0);
  EXPECT_GT(second->jobs_kept, 0);
}

TEST(VerdictMemo, AMinRuntimeEndingDecidesTheSearchesAgain) {
  // The running jobs started at 11:00; with a 90-minute reclaim min runtime they are protected
  // until 12:30. A cycle at 12:00 and one at 12:40: the second may not keep reclaim's verdicts.
  std::string y = std::string(kTrain) + Queue("a", 2) + Queue("b", 2) + Node("n0", 4);
  for (int i = 0; i < 4; ++i) y += Job("run-" + std::to_string(i), "a", 1, "n0");
  for (int i = 0; i < 3; ++i) y += Job("wait-" + std::to_string(i), "b", 1, "", 10 + i);
  ClusterState world = World(y);
  SchedulerConfig config = Config();
  bool found = false;
  for (PluginConfig& p : config.plugins) {
    if (p.name != "minruntime") continue;
    p.arguments["defaultReclaimMinRuntime"] = "90m";
    found = true;
  }
  ASSERT_TRUE(found);
  sim::CycleCache cycles;
  sim::SimulateOptions o = Options();
  auto first = sim::RunCycle(world, config, o, 1, &cycles);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->counts.evictions, 0);
  o.now += 40 * 60;
  auto second = sim::RunCycle(world, config, o, 2, &cycles);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_GT(second->jobs_tried, 0);
  EXPECT_GT(second->counts.evictions, 0);
}

TEST(VerdictMemo, DecisionDifferenceNamesTheJob) {
  ClusterState world = FullCluster(2);
  auto a = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  auto b = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(sim::DecisionDifference(**a, **b), "");
  JobId waiting = kNone;
  for (JobId j = 0; j < static_cast<JobId>((*b)->snap().jobs.size()); ++j) {
    if ((*b)->snap().jobs[j].name == "wait-1") waiting = j;
  }
  ASSERT_NE(waiting, kNone);
  (*b)->SetJobReasons(waiting, {NoNodesReason{}});
  EXPECT_NE(sim::DecisionDifference(**a, **b).find("job default/wait-1: reasons"),
            std::string::npos);
}

TEST(VerdictMemo, ASearchIsSharedOnlyWhereNoCandidateOfTheQueueWasCreatedBetween) {
  // Two 4-GPU nodes, each with a 3-GPU job of queue a created at 10:15: two free GPUs, one per
  // node. Two-GPU jobs of queue a wait, created at 10:10, 10:12 and 10:20. Consolidation
  // simulates moving the 3-GPU jobs and fails; a scenario re-places the job among those
  // candidates in job order, which the creation time decides: the 10:12 job shares the 10:10
  // job's verdict, the 10:20 job (after the candidates) is searched again.
  std::string y = std::string(kTrain) + Queue("a") + Node("n0", 4) + Node("n1", 4);
  y += Job("run-0", "a", 3, "n0", 15) + Job("run-1", "a", 3, "n1", 15);
  y +=
      Job("wait-0", "a", 2, "", 10) + Job("wait-1", "a", 2, "", 12) + Job("wait-2", "a", 2, "", 20);
  ClusterState world = World(y);
  auto s = sim::RunSession(BuildSnapshot(world, Options().now), Config(), {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ActionMetrics* consolidation = Action(**s, "consolidation");
  ASSERT_NE(consolidation, nullptr);
  EXPECT_GT(consolidation->scenarios_simulated, 0);
  EXPECT_EQ(consolidation->jobs_tried, 2);
  EXPECT_EQ(consolidation->jobs_shared, 1);
  EXPECT_EQ(TriedInFullEvaluation(world, **s, "consolidation"), 3);
}

TEST(VerdictMemo, ASearchVerdictHoldsUnderABoundItStayedBelow) {
  ActionVerdict finished{
      .searched = true, .work = 100, .bound_limit = 500, .bound_name = "per-job"};
  EXPECT_TRUE(finished.HoldsUnder(101, "other"));
  EXPECT_TRUE(finished.HoldsUnder(-1, ""));
  EXPECT_FALSE(finished.HoldsUnder(100, "per-job"));
  // A search may end a little past its bound without stopping on it (the last scenario).
  ActionVerdict past{.searched = true, .work = 516, .bound_limit = 500, .bound_name = "per-job"};
  EXPECT_TRUE(past.HoldsUnder(500, "per-action"));
  EXPECT_FALSE(past.HoldsUnder(499, "per-job"));
  // No search ran (not eligible, no candidates): any bound.
  EXPECT_TRUE(ActionVerdict{}.HoldsUnder(0, "per-action"));
  ActionVerdict stopped{
      .searched = true, .work = 500, .bound_limit = 500, .bound_name = "per-job", .gave_up = true};
  EXPECT_TRUE(stopped.HoldsUnder(500, "per-job"));
  EXPECT_FALSE(stopped.HoldsUnder(500, "per-action"));
  EXPECT_FALSE(stopped.HoldsUnder(600, "per-job"));
}

}  // namespace
}  // namespace kai
