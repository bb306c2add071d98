#include "kai/core/controllers/queue_status.h"

#include <gtest/gtest.h>

#include "kai/core/k8s/doc.h"

namespace kai::controllers {
namespace {

QueueFacts Queue(const std::string& name, const std::string& parent, QueueStatusValue status = {}) {
  QueueFacts q;
  q.name = name;
  q.parent = parent;
  q.status = std::move(status);
  return q;
}

PodGroupFacts Group(const std::string& name, const std::string& queue, ResourcesStatus s) {
  return PodGroupFacts{"team", name, queue, "", "", std::move(s)};
}

TEST(QueueStatus, LeafSumsItsPodGroupsAsTheServerHoldsThem) {
  const QueueFacts leaf = Queue("leaf", "root");
  const auto a = Group("a", "leaf", {{{"cpu", "1"}}, {{"cpu", "500m"}}, {}});
  const auto b = Group("b", "leaf",
                       {{{"cpu", "1"}, {"nvidia.com/gpu", "500m"}},
                        {{"cpu", "1"}, {"nvidia.com/gpu", "500m"}},
                        {{"cpu", "1"}, {"nvidia.com/gpu", "500m"}}});
  const auto other = Group("c", "elsewhere", {{{"cpu", "9"}}, {{"cpu", "9"}}, {}});
  auto s = ComputeQueueStatus(leaf, {}, {&b, &a, &other});
  EXPECT_EQ(s.requested, (TextList{{"cpu", "2"}, {"nvidia.com/gpu", "500m"}}));
  EXPECT_EQ(s.allocated, (TextList{{"cpu", "1500m"}, {"nvidia.com/gpu", "500m"}}));
  EXPECT_EQ(s.allocated_non_preemptible, (TextList{{"cpu", "1"}, {"nvidia.com/gpu", "500m"}}));
  EXPECT_TRUE(s.child_queues.empty());
}

TEST(QueueStatus, ParentSumsChildrenAndListsThemSorted) {
  const QueueFacts root = Queue("root", "");
  const QueueFacts z = Queue("z-leaf", "root", {{{"memory", "1Gi"}}, {}, {{"memory", "2Gi"}}, {}});
  const QueueFacts a = Queue("a-leaf", "root", {{{"memory", "1Gi"}}, {}, {{"memory", "1Gi"}}, {}});
  const QueueFacts stray = Queue("stray", "other", {{{"memory", "5Gi"}}, {}, {}, {}});
  auto s = ComputeQueueStatus(root, {&z, &a, &stray}, {});
  EXPECT_EQ(s.child_queues, (std::vector<std::string>{"a-leaf", "z-leaf"}));
  EXPECT_EQ(s.allocated, (TextList{{"memory", "2Gi"}}));
  EXPECT_EQ(s.requested, (TextList{{"memory", "3Gi"}}));
  EXPECT_TRUE(s.allocated_non_preemptible.empty());
}

TEST(QueueStatusPatch, ReplacesChildQueuesAndNullsEmptiedLists) {
  QueueStatusValue held{{{"cpu", "1"}}, {}, {{"cpu", "1"}}, {"a"}};
  QueueStatusValue next{{}, {}, {{"cpu", "1"}}, {"a", "b"}};
  EXPECT_EQ(QueueStatusPatch(held, next),
            R"({"status":{"allocated":null,"childQueues":["a","b"]}})");
  EXPECT_EQ(QueueStatusPatch(next, next), "{}");
}

TEST(QueueMetrics, UnitsAsKaisQueueController) {
  auto d = doc::ParseJson(
      R"({"metadata":{"name":"q"},"spec":{"displayName":"Q","resources":{"gpu":{"quota":2.5},)"
      R"("cpu":{"quota":4000},"memory":{"quota":-1}}}})");
  auto q = DecodeQueueFacts(d->Roots().at(0));
  ASSERT_TRUE(q.ok());
  QueueStatusValue s{
      {{"cpu", "1500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "333333334n"}}, {}, {}, {}};
  auto m = QueueMetricsOf(*q, s);
  EXPECT_DOUBLE_EQ(m.deserved_gpus, 2.5);
  EXPECT_DOUBLE_EQ(m.quota_cpu_cores, 4);
  EXPECT_DOUBLE_EQ(m.quota_memory_bytes, -1);
  EXPECT_DOUBLE_EQ(m.allocated_gpus, 0.3333);
  EXPECT_DOUBLE_EQ(m.allocated_cpu_cores, 1.5);
  EXPECT_DOUBLE_EQ(m.allocated_memory_bytes, 1073741824);
}

TEST(QueueMetrics, QueueWithoutResourcesHasZeroQuotas) {
  auto m = QueueMetricsOf(Queue("q", ""), {});
  EXPECT_EQ(m.deserved_gpus, 0);
  EXPECT_EQ(m.quota_cpu_cores, 0);
  EXPECT_EQ(m.allocated_gpus, 0);
}

TEST(QueueFactsDecode, BadStatusQuantityNamesTheQueueAndField) {
  auto d = doc::ParseJson(R"({"metadata":{"name":"q"},"status":{"allocated":{"cpu":"lots"}}})");
  auto q = DecodeQueueFacts(d->Roots().at(0));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message, "Queue q: status.allocated.cpu: not a quantity: \"lots\"");
}

}  // namespace
}  // namespace kai::controllers
