// The work budget of the disruptive search (SolverConfig::max_work): a search that exceeds it
// gives up with a reason naming it, the same way on every run; a search within it is unchanged.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/sim/simulator.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

std::string QueueYaml(const std::string& name, int quota, int limit) {
  const std::string q = std::to_string(quota), l = std::to_string(limit);
  return "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec:\n  resources:\n    gpu: {quota: " + q + ", limit: " + l +
         ", overQuotaWeight: 1}\n    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
         "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n";
}

std::string PodGroupYaml(const std::string& name, const std::string& queue, int min_member,
                         const std::string& created) {
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: default, creationTimestamp: '" + created + "'}\nspec: {queue: " + queue +
         ", priorityClassName: train, minMember: " + std::to_string(min_member) + "}\n---\n";
}

std::string PodYaml(const std::string& name, const std::string& group, int gpus,
                    const std::string& node) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                  ", namespace: default, creationTimestamp: '2025-01-01T10:00:00Z', "
                  "annotations: {pod-group-name: " +
                  group + "}}\nspec:\n  schedulerName: kai-scheduler\n" +
                  (node.empty() ? "" : "  nodeName: " + node + "\n") +
                  "  containers:\n  - name: main\n    image: busybox\n    resources:\n"
                  "      requests: {cpu: 100m, nvidia.com/gpu: '" +
                  std::to_string(gpus) + "'}\n      limits: {nvidia.com/gpu: '" +
                  std::to_string(gpus) + "'}\n";
  return y + "status: {phase: " + (node.empty() ? "Pending" : "Running") + "}\n---\n";
}

// The shape of the 4-minute search (bench/search_budget_bench.cc), small: `nodes` nodes of 8
// GPUs, all taken by preemptible one-GPU jobs of queue-0..3 (each queue at its quota and limit),
// and `gangs` pending gangs of 4 pods x 2 GPUs in queue `team` (quota 8). No victim's queue may
// give a GPU: reclaim tries many growing scenarios and none is valid.
std::string ReclaimWorld(int nodes, int gangs) {
  std::string y =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: train}\n"
      "value: 50\n---\n";
  const int per_queue = nodes * 8 / 4;
  for (int q = 0; q < 4; ++q) y += QueueYaml("queue-" + std::to_string(q), per_queue, per_queue);
  y += QueueYaml("team", 8, -1);
  for (int n = 0; n < nodes; ++n) {
    y += "apiVersion: v1\nkind: Node\nmetadata: {name: node-" + std::to_string(n) +
         "}\nstatus:\n  allocatable: {cpu: '64', memory: 512Gi, nvidia.com/gpu: '8', pods: "
         "'110'}\n---\n";
  }
  for (int j = 0; j < nodes * 8; ++j) {
    const std::string name = "run-" + std::to_string(j);
    y += PodGroupYaml(name, "queue-" + std::to_string(j % 4), 1, "2025-01-01T10:00:00Z");
    y += PodYaml(name + "-0", name, 1, "node-" + std::to_string(j / 8));
  }
  for (int g = 0; g < gangs; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    y += PodGroupYaml(name, "team", 4, "2025-01-01T11:0" + std::to_string(g) + ":00Z");
    for (int p = 0; p < 4; ++p) y += PodYaml(name + "-" + std::to_string(p), name, 2, "");
  }
  return y;
}

sim::CycleReport ReclaimCycle(const std::string& yaml,
                              const std::function<void(SchedulerConfig&)>& tweak) {
  ClusterState state;
  const Status decoded = DecodeManifestText(yaml, "world.yaml", state);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  auto config = WithActions(ConfigFromShard(std::nullopt).value(), {"reclaim"}).value();
  tweak(config);
  return sim::RunCycle(state, config, sim::SimulateOptions{.now = testutil::kTestNow}, 1).value();
}

// The reclaim reason of the pod `pod` (null when it has none).
const DisruptionReason* ReclaimReason(const sim::CycleReport& report, const std::string& pod) {
  for (const auto& p : report.pods) {
    if (p.name != pod) continue;
    for (const auto& r : p.reasons) {
      const auto* d = r.As<DisruptionReason>();
      if (d && d->action == "reclaim") return d;
    }
  }
  return nullptr;
}

void Unbounded(SchedulerConfig& c) {
  c.max_search_work_per_job = 0;
  c.max_search_work_per_action = 0;
}

TEST(SearchBudget, UnboundedSearchFindsNothingAndSaysSo) {
  const sim::CycleReport r = ReclaimCycle(ReclaimWorld(12, 1), Unbounded);
  const DisruptionReason* d = ReclaimReason(r, "gang-0-0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->outcome, DisruptionOutcome::kNoFit);
  EXPECT_GT(d->scenarios_tried, 10);
  EXPECT_GT(d->search_work, d->scenarios_tried);  // scenarios cost their victims and placements
  EXPECT_EQ(r.counts.evictions, 0);
}

// Half the work the exhaustive search needs: the search stops, the reason names the bound with
// its value, and the same inputs give the same result (the same scenarios and work) every time.
TEST(SearchBudget, ExceedingTheWorkBudgetGivesUpDeterministically) {
  const std::string world = ReclaimWorld(12, 1);
  const int64_t full = ReclaimReason(ReclaimCycle(world, Unbounded), "gang-0-0")->search_work;
  auto half = [&](SchedulerConfig& c) {
    Unbounded(c);
    c.max_search_work_per_job = full / 2;
  };
  const sim::CycleReport first = ReclaimCycle(world, half);
  const DisruptionReason* d = ReclaimReason(first, "gang-0-0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->outcome, DisruptionOutcome::kGaveUp);
  EXPECT_EQ(d->bound, "spec.args.max-search-work-per-job=" + std::to_string(full / 2));
  EXPECT_GE(d->search_work, full / 2);
  EXPECT_LT(d->search_work, full);
  EXPECT_NE(Reason(*d).Message().find("reclaim gave up"), std::string::npos);
  EXPECT_EQ(first.counts.evictions, 0);
  for (int run = 0; run < 3; ++run) {
    const sim::CycleReport report = ReclaimCycle(world, half);
    const DisruptionReason* again = ReclaimReason(report, "gang-0-0");
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->scenarios_tried, d->scenarios_tried);
    EXPECT_EQ(again->scenarios_pruned, d->scenarios_pruned);
    EXPECT_EQ(again->search_work, d->search_work);
    EXPECT_EQ(again->bound, d->bound);
  }
}

// The action's budget is shared by its jobs in order: the first gang spends it, the second is
// stopped by the action's bound before it simulates anything.
TEST(SearchBudget, ActionBudgetIsSharedByTheCycle) {
  const std::string world = ReclaimWorld(12, 2);
  const int64_t full = ReclaimReason(ReclaimCycle(world, Unbounded), "gang-0-0")->search_work;
  const sim::CycleReport r = ReclaimCycle(world, [&](SchedulerConfig& c) {
    Unbounded(c);
    c.max_search_work_per_action = full;
  });
  const DisruptionReason* first = ReclaimReason(r, "gang-0-0");
  const DisruptionReason* second = ReclaimReason(r, "gang-1-0");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->outcome, DisruptionOutcome::kNoFit);
  EXPECT_EQ(second->outcome, DisruptionOutcome::kGaveUp);
  EXPECT_EQ(second->bound, "spec.args.max-search-work-per-action=" + std::to_string(full));
  EXPECT_EQ(second->scenarios_tried, 0);
}

// The default budget leaves a search that fits in it alone: the same outcome as unbounded.
TEST(SearchBudget, SearchWithinTheDefaultBudgetIsUnchanged) {
  const std::string world = ReclaimWorld(12, 1);
  const sim::CycleReport with_default = ReclaimCycle(world, [](SchedulerConfig&) {});
  const sim::CycleReport without = ReclaimCycle(world, Unbounded);
  const DisruptionReason* bounded = ReclaimReason(with_default, "gang-0-0");
  const DisruptionReason* unbounded = ReclaimReason(without, "gang-0-0");
  ASSERT_NE(bounded, nullptr);
  ASSERT_NE(unbounded, nullptr);
  EXPECT_LT(unbounded->search_work, kDefaultSearchWorkPerJob);
  EXPECT_EQ(bounded->outcome, unbounded->outcome);
  EXPECT_EQ(bounded->scenarios_tried, unbounded->scenarios_tried);
  EXPECT_EQ(bounded->search_work, unbounded->search_work);
}

}  // namespace
}  // namespace kai
