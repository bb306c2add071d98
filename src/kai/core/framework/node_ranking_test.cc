#include "kai/core/framework/node_ranking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kai/core/actions/common/placement.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/testing.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/snapshot/fit.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

using testing::Meta;

// 12 nodes of 0-8 GPUs; 60 one-pod jobs of whole GPUs, GPU fractions and CPU only, a third of
// them running where they fit.
ClusterState World(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ClusterState st;
  std::vector<int64_t> free;
  for (int i = 0; i < 12; ++i) {
    NodeObject n;
    n.meta = Meta("Node", "node-" + std::to_string(i), false);
    const int gpus = uniform(0, 8);
    n.meta.labels = {{std::string(keys::kNodeGpuCount), std::to_string(gpus)},
                     {std::string(keys::kNodeGpuMemory), "100"}};
    ReadTypedLabels(n);
    n.allocatable = {.milli_cpu = uniform(4, 32) * kMilliPerUnit,
                     .memory = int64_t{64} << 30,
                     .milli_gpu = gpus * kMilliPerUnit,
                     .pods = 110};
    n.capacity = n.allocatable;
    free.push_back(n.allocatable.milli_gpu);
    st.nodes.push_back(std::move(n));
  }
  QueueObject q;
  q.meta = Meta("Queue", "q", false);
  st.queues.push_back(q);
  for (int j = 0; j < 60; ++j) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", "job-" + std::to_string(j), true);
    pg.meta.creation = kNow - 3600 + j;
    pg.queue = "q";
    PodObject pod;
    pod.meta = Meta("Pod", pg.meta.name + "-0", true);
    pod.meta.creation = pg.meta.creation;
    pod.meta.labels = {{std::string(keys::kQueueLabel), "q"}};
    pod.scheduler_name = std::string(keys::kSchedulerName);
    pod.pod_group = pg.meta.name;
    pod.request = {.milli_cpu = uniform(1, 4) * 500, .memory = int64_t{1} << 30, .pods = 1};
    const int kind = j % 3;
    if (kind == 0) pod.request.milli_gpu = uniform(1, 3) * kMilliPerUnit;
    if (kind == 1) pod.gpu_sharing.fraction_milli = uniform(1, 3) * 250;
    const int n = uniform(0, 11);
    const int64_t need = kind == 1 ? kMilliPerUnit : pod.request.milli_gpu;
    if (j % 3 == 2 && need <= free[n]) {
      free[n] -= need;
      pod.phase = "Running";
      pod.node_name = st.nodes[n].meta.name;
    }
    st.pods.push_back(std::move(pod));
    st.pod_groups.push_back(std::move(pg));
  }
  return st;
}

SchedulerConfig Config(const std::string& gpu) {
  ShardObject shard;
  shard.meta = Meta("SchedulingShard", "default", false);
  shard.placement_gpu = gpu;
  return ConfigFromShard(shard).value();
}

struct Ranked {
  NodeId id;
  double score;
  bool operator==(const Ranked&) const = default;
};

// What the ranking must hold: every node with room that no scorer vetoes, scored afresh over all
// candidates, best first.
std::vector<Ranked> Expected(Session& s, PodId pod) {
  std::vector<double> scores(s.snap().nodes.size());
  s.PrepareScores(pod);
  s.ScoreNodes(pod, scores);
  std::vector<RankedNode> nodes;
  for (NodeId n : s.AllNodes()) {
    if (!FitsIdleOrReleasing(s.snap().pods[pod], s.snap().nodes[n])) continue;
    if (scores[n] == -std::numeric_limits<double>::infinity()) continue;
    nodes.push_back({scores[n], s.snap().node_name_rank[n], n});
  }
  std::sort(nodes.begin(), nodes.end(), BetterNode{});
  std::vector<Ranked> out;
  for (const RankedNode& r : nodes) out.push_back({r.id, r.score});
  return out;
}

std::vector<Ranked> Actual(Session& s, PodId pod) {
  const RankedNodes* ranked = s.ranking().Ranked(pod);
  EXPECT_NE(ranked, nullptr);
  std::vector<Ranked> out;
  if (ranked) {
    for (const RankedNode& r : *ranked) out.push_back({r.id, r.score});
  }
  return out;
}

// Places, evicts and rolls back at random; after every step the ranking of every probe pod must
// be what scoring all nodes afresh gives.
void CheckRandomSteps(uint64_t seed, const std::string& gpu) {
  const ClusterState world = World(seed);
  Session s(BuildSnapshot(world, kNow), Config(gpu));
  ASSERT_TRUE(s.OpenPlugins().ok());
  std::mt19937_64 rng(seed);
  std::vector<PodId> probes;  // one pod of each kind
  for (PodId p = 0; p < 3; ++p) probes.push_back(p);
  Statement stmt(s);
  std::vector<size_t> checkpoints;
  for (int step = 0; step < 120; ++step) {
    const PodId pod = std::uniform_int_distribution<PodId>(0, 59)(rng);
    const PodStatus st = s.snap().pods[pod].status;
    const int action = std::uniform_int_distribution<int>(0, 9)(rng);
    if (action < 5 && st == PodStatus::kPending) {
      const PodId one[] = {pod};
      actions::PlaceTasks(s, stmt, one, /*pipeline_only=*/action == 0);
    } else if (action < 8 && IsActiveUsed(st) && st != PodStatus::kReleasing) {
      stmt.Evict(pod);
    } else if (action == 8) {
      checkpoints.push_back(stmt.Checkpoint());
    } else if (!checkpoints.empty()) {
      stmt.Rollback(checkpoints.back());
      checkpoints.pop_back();
    }
    for (PodId probe : probes) {
      ASSERT_EQ(Actual(s, probe), Expected(s, probe))
          << "seed " << seed << " step " << step << " probe " << probe;
    }
  }
}

TEST(NodeRanking, FollowsPlacementsEvictionsAndRollbacksBinpack) {
  for (uint64_t seed = 1; seed <= 20; ++seed) CheckRandomSteps(seed, "binpack");
}

TEST(NodeRanking, FollowsPlacementsEvictionsAndRollbacksSpread) {
  for (uint64_t seed = 1; seed <= 20; ++seed) CheckRandomSteps(seed, "spread");
}

TEST(NodeRanking, NotUsedOnASubsetOfTheNodes) {
  const ClusterState world = World(1);  // the snapshot points into it: it must outlive s
  Session s(BuildSnapshot(world, kNow), Config("binpack"));
  ASSERT_TRUE(s.OpenPlugins().ok());
  const std::vector<NodeId> some = {0, 1, 2};
  s.SetCandidateNodes(some);
  EXPECT_EQ(s.ranking().Ranked(0), nullptr);
  s.SetCandidateNodes(s.AllNodes());
  EXPECT_NE(s.ranking().Ranked(0), nullptr);
}

}  // namespace
}  // namespace kai

namespace kai {
namespace {

TEST(BlockPool, ReusesFreedBlocksAndKeepsLiveOnesApart) {
  BlockPool pool;
  std::vector<void*> live;
  for (int i = 0; i < 3000; ++i) live.push_back(pool.Allocate(40));  // spans several chunks
  std::vector<uintptr_t> addresses(live.size());
  std::transform(live.begin(), live.end(), addresses.begin(),
                 [](void* p) { return reinterpret_cast<uintptr_t>(p); });
  std::sort(addresses.begin(), addresses.end());
  for (size_t i = 1; i < addresses.size(); ++i) EXPECT_GE(addresses[i] - addresses[i - 1], 40u);
  for (uintptr_t a : addresses) EXPECT_EQ(a % alignof(std::max_align_t), 0u);
  void* freed = live[1234];
  pool.Deallocate(freed, 40);
  EXPECT_EQ(pool.Allocate(40), freed);  // the free list hands the block out again
  // Another size is not the pool's: it goes to the general allocator and back.
  void* other = pool.Allocate(200);
  ASSERT_NE(other, nullptr);
  pool.Deallocate(other, 200);
}

TEST(BlockPool, BacksRankingSetsThatOutliveEachOther) {
  BlockPool pool;
  std::vector<int> order;
  {
    RankedNodes a{PoolAllocator<RankedNode>(&pool)};
    RankedNodes b{PoolAllocator<RankedNode>(&pool)};
    for (int i = 0; i < 500; ++i) {
      a.insert(RankedNode{static_cast<double>(i % 7), i, i});
      b.insert(RankedNode{1.0, i, i});
    }
    for (int i = 0; i < 500; i += 2) a.erase(RankedNode{static_cast<double>(i % 7), i, i});
    a.clear();
    for (int i = 0; i < 5; ++i) a.insert(RankedNode{static_cast<double>(i), i, i});
    for (const RankedNode& r : a) order.push_back(r.id);
    EXPECT_EQ(b.size(), 500u);
  }
  EXPECT_EQ(order, (std::vector<int>{4, 3, 2, 1, 0}));  // best score first
}

}  // namespace
}  // namespace kai
