// Fair share (the proportion plugin) at scale.
//
//   BM_FairShare1000Queues  ComputeQueueShares alone on a 3-level tree of 1,110 queues
//                           (10 departments x 10 teams x 10 projects = 1,000 leaves), random
//                           quotas / limits / weights / priorities on cpu, memory and gpu,
//                           pending jobs in 90% of the leaves and running jobs in half of them,
//                           500 nodes x 8 GPUs. Target: < 1 ms. The snapshot is built once,
//                           outside the timed loop: ComputeQueueShares overwrites everything it
//                           computes (requested / allocated are reset and re-accumulated, every
//                           fair share is rewritten), so re-running it on one snapshot measures
//                           exactly one computation.
// KAI's many-queues shape is BM_ManyQueues/50 in actions_bench.cc.
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/plugins/proportion/proportion.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai::bench {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kGpu = 1000;
constexpr int64_t kCore = 1000;
constexpr int64_t kGi = int64_t{1} << 30;

// ---------------------------------------------------------------------------------------------
// 1,000 leaf queues.

class TreeBuilder {
 public:
  explicit TreeBuilder(uint64_t seed) : rng_(seed) {}

  ClusterState Build(int nodes, int fanout) {
    for (int i = 0; i < nodes; ++i) {
      NodeObject n;
      n.meta = Meta("Node", "node-" + std::to_string(i), false);
      n.allocatable.milli_gpu = 8 * kGpu;
      n.allocatable.milli_cpu = 128 * kCore;
      n.allocatable.memory = 1024 * kGi;
      n.allocatable.pods = 110;
      n.capacity = n.allocatable;
      state_.nodes.push_back(std::move(n));
    }
    const int64_t gpus = int64_t{nodes} * 8;
    // Quotas per level sized so that siblings roughly fit their parent (with some
    // oversubscription and some slack, both of which real trees have).
    for (int d = 0; d < fanout; ++d) {
      const std::string dept = "dept-" + std::to_string(d);
      AddQueue(dept, "", gpus / fanout);
      for (int t = 0; t < fanout; ++t) {
        const std::string team = dept + "-team-" + std::to_string(t);
        AddQueue(team, dept, gpus / fanout / fanout);
        for (int p = 0; p < fanout; ++p) {
          const std::string project = team + "-proj-" + std::to_string(p);
          AddQueue(project, team, gpus / fanout / fanout / fanout);
          AddJobs(project, nodes);
        }
      }
    }
    return std::move(state_);
  }

 private:
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  ObjectMeta Meta(const std::string& kind, const std::string& name, bool namespaced) {
    ObjectMeta m;
    m.kind = kind;
    m.name = name;
    m.uid = name;
    if (namespaced) m.ns = "default";
    m.creation = kNow - 86400 + Int(0, 3600);
    return m;
  }

  // `typical` in whole units; quota around it (sometimes none or unlimited), limit mostly none.
  QueueResource Random(int64_t typical, int64_t unit) {
    QueueResource r;
    const int64_t t = std::max<int64_t>(typical, 1);
    r.quota = Chance(0.05) ? -1 : Int(0, 2 * t) * unit;
    r.limit = Chance(0.7) ? -1 : Int(t, 4 * t) * unit;
    r.weight_milli = Chance(0.05) ? 0 : Int(1, 5) * 1000;
    return r;
  }

  void AddQueue(const std::string& name, const std::string& parent, int64_t typical_gpus) {
    QueueObject q;
    q.meta = Meta("Queue", name, false);
    q.parent = parent;
    if (!Chance(0.3)) q.priority = static_cast<int>(Int(1, 3)) * 50;
    q.has_resources = true;
    q.gpu = Random(typical_gpus, kGpu);
    q.cpu = Random(typical_gpus * 16, kCore);
    q.memory = Random(typical_gpus * 128, kGi);
    state_.queues.push_back(std::move(q));
  }

  void AddJob(const std::string& name, const std::string& queue, int pods, const Resources& req,
              const std::string& node) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", name, true);
    pg.queue = queue;
    pg.min_member = pods;
    state_.pod_groups.push_back(std::move(pg));
    for (int i = 0; i < pods; ++i) {
      PodObject p;
      p.meta = Meta("Pod", name + "-" + std::to_string(i), true);
      p.scheduler_name = "kai-scheduler";
      p.pod_group = name;
      p.request = req;
      p.node_name = node;
      p.phase = node.empty() ? "Pending" : "Running";
      state_.pods.push_back(std::move(p));
    }
  }

  void AddJobs(const std::string& queue, int nodes) {
    auto request = [&] {
      Resources r;
      r.milli_gpu = Int(0, 8) * kGpu;
      r.milli_cpu = Int(1, 16) * kCore;
      r.memory = Int(1, 64) * kGi;
      r.pods = 1;
      return r;
    };
    if (Chance(0.5)) {
      AddJob(queue + "-running", queue, static_cast<int>(Int(1, 2)), request(),
             "node-" + std::to_string(next_node_++ % nodes));
    }
    if (Chance(0.9)) AddJob(queue + "-pending", queue, static_cast<int>(Int(1, 4)), request(), "");
  }

  std::mt19937_64 rng_;
  ClusterState state_;
  int next_node_ = 0;
};

void BM_FairShare1000Queues(benchmark::State& state) {
  static const ClusterState cluster = TreeBuilder(42).Build(500, 10);
  Snapshot snap = BuildSnapshot(cluster, kNow);
  plugins::proportion::ComputeQueueShares(snap, 1.0);
  const Resources first_root_share = snap.queues[snap.root_queues.front()].fair_share;
  for (auto _ : state) {
    plugins::proportion::ComputeQueueShares(snap, 1.0);
    benchmark::DoNotOptimize(snap.queues.data());
    benchmark::ClobberMemory();
  }
  if (snap.queues[snap.root_queues.front()].fair_share != first_root_share) {
    state.SkipWithError("ComputeQueueShares is not idempotent: the benchmark is invalid");
  }
  int leaves = 0;
  for (const SnapQueue& q : snap.queues) leaves += q.IsLeaf();
  state.counters["queues"] = static_cast<double>(snap.queues.size());
  state.counters["leaves"] = leaves;
  state.counters["pods"] = static_cast<double>(snap.pods.size());
}

BENCHMARK(BM_FairShare1000Queues)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kai::bench
