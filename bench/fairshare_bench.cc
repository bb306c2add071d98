// Fair share (the proportion plugin) at scale, and allocate on KAI's many-queues shape.
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
//   BM_ManyQueuesAllocate   KAI's BenchmarkManyQueues_MediumCluster
//                           (pkg/scheduler/actions/benchmark_test.go,
//                           createBenchmarkTopologyWithManyQueues(50, 200, 20)): 50 nodes x 8
//                           GPUs, 200 pending one-pod one-GPU jobs (priority train), job i in
//                           queue-(i % 20); queue-i (deserved 400/20 = 20 GPUs, overQuotaWeight
//                           1) under dept-(i % 5) (deserved 400/5 = 80 GPUs, overQuotaWeight =
//                           its deserved, as the Go harness sets). Times the allocate action
//                           only (UseManualTime); every iteration must bind all 200 pods.
//   BM_ManyQueuesCycle      the same shape, whole cycle: snapshot + session + plugins (fair
//                           share) + allocate, which is what KAI's figure covers (BuildSession +
//                           allocate.Execute inside b.N).
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>
#include <random>
#include <string>

#include "generator.h"  // compiled once, by allocate_bench.cc, until CMakeLists.txt lists it
#include "kai/framework/config.h"
#include "kai/framework/plugin.h"
#include "kai/framework/session.h"
#include "kai/plugins/proportion/proportion.h"
#include "kai/snapshot/snapshot.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

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

// ---------------------------------------------------------------------------------------------
// KAI's many-queues shape.

struct ManyQueues {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
  int jobs = 0;
};

const ManyQueues& GetManyQueues() {
  static const ManyQueues fixture = [] {
    constexpr int kNodes = 50, kJobs = 200, kQueues = 20;
    constexpr int kDepts = (kQueues + 3) / 4;  // 5, as the Go harness computes it
    const double total = kNodes * 8.0;
    ClusterShape shape;
    shape.nodes = kNodes;
    shape.gpus_per_node = 8;
    shape.jobs = kJobs;
    shape.pods_per_job = 1;
    shape.gpus_per_pod = 1;
    for (int d = 0; d < kDepts; ++d) {
      shape.queues.push_back(
          QueueSpec{"dept-" + std::to_string(d), "", total / kDepts, -1, total / kDepts});
    }
    // Leaves are listed queue-0..19, so the generator's round-robin puts job i in queue-(i % 20).
    for (int i = 0; i < kQueues; ++i) {
      shape.queues.push_back(QueueSpec{"queue-" + std::to_string(i),
                                       "dept-" + std::to_string(i % kDepts), total / kQueues, -1,
                                       1});
    }
    ManyQueues f;
    f.state = Generate(shape);
    f.now = shape.now;
    f.config = ConfigFromShard(std::nullopt).value();
    f.jobs = kJobs;
    return f;
  }();
  return fixture;
}

bool CheckBinds(benchmark::State& state, const Session& s, int expected) {
  if (s.counters().binds == expected) return true;
  state.SkipWithError(
      ("expected " + std::to_string(expected) + " binds, got " + std::to_string(s.counters().binds))
          .c_str());
  return false;
}

void BM_ManyQueuesAllocate(benchmark::State& state) {
  const ManyQueues& f = GetManyQueues();
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    auto action = allocate->make();
    const auto t0 = Clock::now();
    action->Execute(s);
    const auto t1 = Clock::now();
    if (!CheckBinds(state, s, f.jobs)) break;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  state.counters["jobs"] = f.jobs;
}

void BM_ManyQueuesCycle(benchmark::State& state) {
  const ManyQueues& f = GetManyQueues();
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    allocate->make()->Execute(s);
    if (!CheckBinds(state, s, f.jobs)) break;
  }
  state.counters["jobs"] = f.jobs;
}

BENCHMARK(BM_FairShare1000Queues)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ManyQueuesAllocate)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_ManyQueuesCycle)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kai::bench
