#include "kai/core/explain/queues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/plugins/proportion/proportion.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kGpu = 1000;
constexpr QueueResource kOpen{-1, -1, 1000};

class Cluster {
 public:
  void Node(const std::string& name, int64_t gpus) {
    NodeObject n;
    n.meta = Meta("Node", name, false);
    n.allocatable.milli_gpu = gpus * kGpu;
    n.allocatable.milli_cpu = 64 * 1000;
    n.allocatable.memory = int64_t{256} << 30;
    n.allocatable.pods = 110;
    n.capacity = n.allocatable;
    state.nodes.push_back(std::move(n));
  }

  // GPU quota/limit in devices (-1 = none), weight as overQuotaWeight.
  void Queue(const std::string& name, const std::string& parent, double quota, double limit,
             double weight) {
    QueueObject q;
    q.meta = Meta("Queue", name, false);
    q.parent = parent;
    q.has_resources = true;
    auto milli = [](double v) { return v < 0 ? int64_t{-1} : std::llround(v * kGpu); };
    q.gpu = {milli(quota), milli(limit), std::llround(weight * 1000)};
    q.cpu = kOpen;
    q.memory = kOpen;
    state.queues.push_back(std::move(q));
  }

  // `pods` one-GPU pods: Running on `node`, or Pending when it is empty.
  void Job(const std::string& name, const std::string& queue, int pods,
           const std::string& node = "") {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", name, true);
    pg.queue = queue;
    state.pod_groups.push_back(std::move(pg));
    for (int i = 0; i < pods; ++i) {
      PodObject p;
      p.meta = Meta("Pod", name + "-" + std::to_string(i), true);
      p.scheduler_name = "kai-scheduler";
      p.pod_group = name;
      p.request.milli_gpu = kGpu;
      p.request.pods = 1;
      p.node_name = node;
      p.phase = node.empty() ? "Pending" : "Running";
      state.pods.push_back(std::move(p));
    }
  }

  ClusterState state;

 private:
  ObjectMeta Meta(const std::string& kind, const std::string& name, bool namespaced) {
    ObjectMeta m;
    m.kind = kind;
    m.name = name;
    m.uid = "uid-" + name;
    if (namespaced) m.ns = "default";
    m.creation = created_ += 60;
    return m;
  }
  UnixSeconds created_ = kNow - 100000;
};

const QueueExplanation& Find(const std::vector<QueueExplanation>& all, const std::string& name) {
  for (const auto& e : all) {
    if (e.name == name) return e;
  }
  ADD_FAILURE() << "no explanation for " << name;
  static const QueueExplanation kEmpty{.resources = std::vector<QueueResourceExplanation>(3)};
  return kEmpty;
}

// Resources are listed cpu, memory, gpu.
const QueueResourceExplanation& Gpu(const std::vector<QueueExplanation>& all,
                                    const std::string& name) {
  return Find(all, name).resources.at(2);
}

// 10 GPUs. Root level: org (quota -1) and idle (quota 0, asks nothing).
// org's children divide org's fair share:
//   req   quota 2, w1, runs 1 GPU, asks nothing more          requested 1
//   lim   quota 2, limit 3, w1, 8 pending                      requested 8, requestable 3
//   now   quota 1, weight 0, 5 pending                         requested 5
//   prop  quota 2, w1, 20 pending                              requested 20
// Root (total 10): org min(10, 1+8+5+20 = 34) = 10, idle 0.
// Under org (total 10): deserved req 1, lim 2, now 1, prop 2 = 6; 4 over quota.
//   Round 1, W = lim 1 + prop 1 = 2 (req is satisfied, now has no weight): shares 2 each;
//   lim needs 1 <= 2 -> takes 1 (below its share: another round); prop needs 18 > 2 -> 2. 1 left.
//   Round 2, prop alone: share 1 -> 1. 0 left.
//   Fair shares: req 1, lim 3, now 1, prop 5 (sum 10).
std::vector<QueueExplanation> ExplainSmallTree() {
  Cluster c;
  c.Node("n1", 10);
  c.Queue("org", "", -1, -1, 1);
  c.Queue("req", "org", 2, -1, 1);
  c.Queue("lim", "org", 2, 3, 1);
  c.Queue("now", "org", 1, -1, 0);
  c.Queue("prop", "org", 2, -1, 1);
  c.Queue("idle", "", 0, -1, 1);
  c.Job("req-run", "req", 1, "n1");
  c.Job("lim-job", "lim", 8);
  c.Job("now-job", "now", 5);
  c.Job("prop-job", "prop", 20);
  Snapshot snap = BuildSnapshot(c.state, kNow);
  plugins::proportion::ComputeQueueShares(snap, 1.0);
  return ExplainQueues(snap);
}

TEST(ExplainQueuesTest, ListsQueuesParentsFirstSiblingsByCreation) {
  const auto all = ExplainSmallTree();
  std::vector<std::string> names;
  for (const auto& e : all) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"org", "req", "lim", "now", "prop", "idle"}));
  EXPECT_EQ(Find(all, "org").depth, 0);
  EXPECT_FALSE(Find(all, "org").leaf);
  EXPECT_EQ(Find(all, "org").parent, "");
  EXPECT_EQ(Find(all, "lim").depth, 1);
  EXPECT_EQ(Find(all, "lim").parent, "org");
  EXPECT_TRUE(Find(all, "lim").leaf);
  EXPECT_EQ(Find(all, "lim").priority, 100);
  ASSERT_EQ(Find(all, "lim").resources.size(), 3u);
  EXPECT_EQ(Find(all, "lim").resources[0].resource, "cpu");
  EXPECT_EQ(Find(all, "lim").resources[1].resource, "memory");
  EXPECT_EQ(Find(all, "lim").resources[2].resource, "nvidia.com/gpu");
}

TEST(ExplainQueuesTest, SplitsFairShareIntoDeservedAndSurplusParts) {
  const auto all = ExplainSmallTree();
  // Children divide org's fair share (10); org and idle divide the cluster (10).
  EXPECT_EQ(Gpu(all, "org").level_total, 10 * kGpu);
  EXPECT_EQ(Gpu(all, "prop").level_total, 10 * kGpu);
  // org: quota -1 stands for the whole level: deserved min(10, 34) = 10, no surplus.
  EXPECT_EQ(Gpu(all, "org").fair_share, 10 * kGpu);
  EXPECT_EQ(Gpu(all, "org").deserved_part, 10 * kGpu);
  EXPECT_EQ(Gpu(all, "org").surplus_part, 0);
  EXPECT_EQ(Gpu(all, "org").requested, 34 * kGpu);
  // req: 1 = min(2, 1) deserved + 0.
  EXPECT_EQ(Gpu(all, "req").fair_share, 1 * kGpu);
  EXPECT_EQ(Gpu(all, "req").deserved_part, 1 * kGpu);
  EXPECT_EQ(Gpu(all, "req").surplus_part, 0);
  // lim: 3 = 2 deserved + 1 surplus.
  EXPECT_EQ(Gpu(all, "lim").fair_share, 3 * kGpu);
  EXPECT_EQ(Gpu(all, "lim").deserved_part, 2 * kGpu);
  EXPECT_EQ(Gpu(all, "lim").surplus_part, 1 * kGpu);
  EXPECT_EQ(Gpu(all, "lim").limit, 3 * kGpu);
  // now: 1 = 1 deserved + 0 (weight 0 takes no surplus).
  EXPECT_EQ(Gpu(all, "now").fair_share, 1 * kGpu);
  EXPECT_EQ(Gpu(all, "now").deserved_part, 1 * kGpu);
  EXPECT_EQ(Gpu(all, "now").surplus_part, 0);
  EXPECT_EQ(Gpu(all, "now").weight_milli, 0);
  // prop: 5 = 2 deserved + 3 surplus (2 in round 1, 1 in round 2).
  EXPECT_EQ(Gpu(all, "prop").fair_share, 5 * kGpu);
  EXPECT_EQ(Gpu(all, "prop").deserved_part, 2 * kGpu);
  EXPECT_EQ(Gpu(all, "prop").surplus_part, 3 * kGpu);
  EXPECT_EQ(Gpu(all, "prop").quota, 2 * kGpu);
  EXPECT_EQ(Gpu(all, "prop").requested, 20 * kGpu);
  // Saturation = allocated / fair share: req runs 1 of 1; prop runs nothing.
  EXPECT_EQ(Gpu(all, "req").allocated, 1 * kGpu);
  EXPECT_DOUBLE_EQ(Gpu(all, "req").saturation, 1.0);
  EXPECT_DOUBLE_EQ(Gpu(all, "prop").saturation, 0.0);
}

TEST(ExplainQueuesTest, NamesWhatCappedEachShare) {
  const auto all = ExplainSmallTree();
  EXPECT_EQ(Gpu(all, "req").capped_by, "request");    // fair share 1 >= requested 1
  EXPECT_EQ(Gpu(all, "idle").capped_by, "request");   // asks nothing, gets nothing
  EXPECT_EQ(Gpu(all, "lim").capped_by, "limit");      // 3 = its limit, though it asks 8
  EXPECT_EQ(Gpu(all, "now").capped_by, "no-weight");  // weight 0: deserved only
  // prop got its weighted part of the surplus and the level is fully divided (10 of 10).
  EXPECT_EQ(Gpu(all, "prop").capped_by, "proportional-share");
  EXPECT_EQ(Gpu(all, "org").capped_by, "nothing-left");
  // Resources nobody asks for: capped by the (zero) request.
  EXPECT_EQ(Find(all, "prop").resources[0].capped_by, "request");
  EXPECT_EQ(Find(all, "prop").resources[0].fair_share, 0);

  EXPECT_EQ(Gpu(all, "lim").Summary(),
            "3 = 2 deserved + 1 surplus (of 10 at this level; capped by its limit)");
  EXPECT_EQ(Gpu(all, "now").Summary(),
            "1 = 1 deserved + 0 surplus (of 10 at this level; overQuotaWeight 0: no surplus)");
  EXPECT_EQ(Gpu(all, "req").Summary(),
            "1 = 1 deserved + 0 surplus (of 10 at this level; all it requested)");
  EXPECT_EQ(Gpu(all, "prop").Summary(),
            "5 = 2 deserved + 3 surplus (of 10 at this level; its weighted part of the surplus)");
}

TEST(ExplainQueuesTest, UsageCanLeaveALevelUndivided) {
  // With time-based usage KAI can leave a level partly undivided (kai-semantics.md §3.2, 3.8):
  // 12 GPUs, quota 0, weight 1 each, k = 1; hot-a and hot-c have usage 1.0, cool 0.
  //   Round 1, W = 3, w' = 1/3: P_hot = max(0, 1/3 + (1/3 - 1)) = 0, P_cool = 2/3.
  //   cool's share is all 12 >= its 3 -> takes 3 (below its share: another round); 9 left.
  //   Round 2, W = 2, w' = 1/2: P_hot = max(0, .5 + (.5 - 1)) = 0 for both: sum P = 0, stop.
  //   No remainders recorded, so no top-up: hot-a 0, cool 3, hot-c 0; 9 GPUs stay undivided.
  // hot-a runs 1 GPU with a fair share of 0: saturation is infinite.
  Cluster c;
  c.Node("n1", 12);
  c.Queue("hot-a", "", 0, -1, 1);
  c.Queue("cool", "", 0, -1, 1);
  c.Queue("hot-c", "", 0, -1, 1);
  c.Job("hot-a-run", "hot-a", 1, "n1");
  c.Job("hot-a-job", "hot-a", 9);
  c.Job("cool-job", "cool", 3);
  c.Job("hot-c-job", "hot-c", 10);
  Snapshot snap = BuildSnapshot(c.state, kNow);
  snap.queues[snap.queue_by_name.at("hot-a")].usage = {0, 0, 1.0};
  snap.queues[snap.queue_by_name.at("hot-c")].usage = {0, 0, 1.0};
  plugins::proportion::ComputeQueueShares(snap, 1.0);
  const auto all = ExplainQueues(snap);

  EXPECT_EQ(Gpu(all, "cool").fair_share, 3 * kGpu);
  EXPECT_EQ(Gpu(all, "cool").deserved_part, 0);
  EXPECT_EQ(Gpu(all, "cool").surplus_part, 3 * kGpu);
  EXPECT_EQ(Gpu(all, "cool").capped_by, "request");

  EXPECT_EQ(Gpu(all, "hot-a").fair_share, 0);
  EXPECT_EQ(Gpu(all, "hot-a").requested, 10 * kGpu);
  EXPECT_EQ(Gpu(all, "hot-a").capped_by, "usage");
  EXPECT_DOUBLE_EQ(Gpu(all, "hot-a").usage, 1.0);
  EXPECT_EQ(Gpu(all, "hot-a").saturation, std::numeric_limits<double>::infinity());
  EXPECT_EQ(Gpu(all, "hot-c").capped_by, "usage");
  EXPECT_EQ(Gpu(all, "hot-c").Summary(),
            "0 = 0 deserved + 0 surplus (of 12 at this level; its past usage leaves it no surplus "
            "now)");
}

}  // namespace
}  // namespace kai
