// A deep backlog (issue 36): KAI issue #315's production cluster (bench/production_shape.h: 4,000
// nodes, 140,000 pods) with 50 queues, its 784 one-GPU jobs spread over all of them (each queue
// at about its quota of 16 GPUs), and 50,000 pending jobs, 1,000 per queue, of eight shapes: 1, 2,
// 4 and 8 GPUs, a 2 x 8-GPU gang, a 4 x 1-GPU gang, 1 GPU in one zone (nodeSelector), and 256
// cores (larger than any node). Every pending job is at the running jobs' priority: once the free
// GPUs are taken (the fixture runs cycles until one decides nothing), nothing can move.
//
//   BM_Backlog/<keep>/<churn>   one cycle of kai simulate's loop (sim::RunCycle: incremental
//                               snapshot, session, the five actions, the world moved on): churn 0
//                               changes nothing since the last cycle, churn 1 flips 1 % of the
//                               pods (1,400 Running CPU pods) Running <-> Succeeded first. keep 1:
//                               verdicts kept and shared (framework/verdict_memo.h); keep 0:
//                               every pending job decided (SchedulerConfig::keep_verdicts off).
//   BM_NoBacklog/<churn>        the same cluster without the 50,000 pending jobs.
// Targets (issue 36): BM_Backlog/1/0 at most 2x BM_NoBacklog/0; BM_Backlog/1/1 at most 5x
// BM_NoBacklog/1. Counters: tried, kept and shared jobs per cycle (all actions), binds, evictions.
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/sim/simulator.h"
#include "production_shape.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace production_detail;

constexpr int kQueues = 50;
constexpr int kPendingPerQueue = 1000;

struct PendingShape {
  const char* name;
  int pods;
  int64_t gpus;       // per pod
  int64_t milli_cpu;  // per pod
  const char* zone;   // nodeSelector topology.kubernetes.io/zone, or null
};
constexpr PendingShape kShapes[] = {
    {"g1", 1, 1, 8'000, nullptr},       {"g2", 1, 2, 16'000, nullptr},
    {"g4", 1, 4, 32'000, nullptr},      {"g8", 1, 8, 64'000, nullptr},
    {"gang2x8", 2, 8, 64'000, nullptr}, {"gang4x1", 4, 1, 8'000, nullptr},
    {"g1z", 1, 1, 8'000, "zone-1"},     {"cpu256", 1, 0, 256'000, nullptr}};

// Moves the running one-GPU jobs (queues 0..9 in the production shape) round-robin over every
// queue, so that each holds about its quota.
void SpreadGpuJobs(ClusterState& st) {
  for (PodGroupObject& pg : st.pod_groups) {
    const std::string& name = pg.meta.name;
    if (name.rfind("gpu-job-", 0) != 0) continue;
    const int q = std::stoi(name.substr(8)) % kQueues;
    pg.meta.ns = TeamNs(q);
    pg.meta.labels[std::string(keys::kQueueLabel)] = QueueName(q);
    pg.queue = QueueName(q);
  }
  for (PodObject& p : st.pods) {
    if (p.pod_group.rfind("gpu-job-", 0) != 0) continue;
    const int q = std::stoi(p.pod_group.substr(8)) % kQueues;
    p.meta.ns = TeamNs(q);
    p.meta.labels[std::string(keys::kQueueLabel)] = QueueName(q);
  }
}

void AddBacklog(ClusterState& st, UnixSeconds now) {
  for (int q = 0; q < kQueues; ++q) {
    for (int j = 0; j < kPendingPerQueue; ++j) {
      const PendingShape& shape = kShapes[j % std::size(kShapes)];
      const std::string job = "wait-" + std::to_string(q) + "-" + std::to_string(j);
      const UnixSeconds created = now - 3600 + j;
      st.pod_groups.push_back(MakePodGroup(job, q, "train", shape.pods, created, false, 0));
      for (int i = 0; i < shape.pods; ++i) {
        PodObject p = MakeKaiPod(job, i, q, created, Res(shape.milli_cpu, 64 * kGi, shape.gpus, 1));
        if (shape.zone) p.node_selector = {{"topology.kubernetes.io/zone", shape.zone}};
        st.pods.push_back(std::move(p));
      }
    }
  }
}

struct Fixture {
  ProductionShape shape;
  ClusterState world;
  SchedulerConfig config;
  sim::CycleCache cache;
  std::vector<size_t> churn;
  bool flipped = false;
  int cycles = 0;
  std::string error;
};

sim::SimulateOptions Options(const Fixture& f) {
  sim::SimulateOptions o;
  o.now = f.shape.now;
  o.report_changed_pods_only = true;
  return o;
}

// Runs cycles until one decides nothing (at most 20).
void Settle(Fixture& f) {
  for (int i = 0; i < 20; ++i) {
    auto r = sim::RunCycle(f.world, f.config, Options(f), ++f.cycles, &f.cache);
    if (!r.ok()) {
      f.error = r.error().message;
      return;
    }
    const SessionCounters& c = r->counts;
    if (c.binds == 0 && c.evictions == 0 && c.pipelines == 0) return;
  }
  f.error = "the backlog did not settle in 20 cycles";
}

Fixture* MakeFixture(bool backlog, bool keep) {
  auto* f = new Fixture;
  f->shape.queues = kQueues;
  f->world = BuildProduction(f->shape);
  SpreadGpuJobs(f->world);
  if (backlog) AddBacklog(f->world, f->shape.now);
  f->config = ConfigFromShard(std::nullopt).value();
  f->config.keep_verdicts = keep;
  f->churn = ChurnPods(f->world, f->shape, f->shape.pods / 100);
  Settle(*f);
  return f;
}

Fixture& GetFixture(bool backlog, bool keep) {
  static Fixture* fixtures[2][2] = {};
  Fixture*& f = fixtures[backlog][keep];
  if (!f) f = MakeFixture(backlog, keep);
  return *f;
}

void Churn(Fixture& f) {
  f.flipped = !f.flipped;
  for (size_t i : f.churn) {
    f.world.pods[i].phase = f.flipped ? "Succeeded" : "Running";
    f.cache.changes.pods.push_back(i);
  }
}

void RunBacklogCycles(benchmark::State& state, bool backlog, bool keep, bool churn) {
  Fixture& f = GetFixture(backlog, keep);
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  int64_t tried = 0, kept = 0, shared = 0, binds = 0, evictions = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (churn) Churn(f);
    auto r = sim::RunCycle(f.world, f.config, Options(f), ++f.cycles, &f.cache);
    const auto t1 = Clock::now();
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    binds += r->counts.binds;
    evictions += r->counts.evictions;
    tried += r->jobs_tried;
    kept += r->jobs_kept;
    shared += r->jobs_shared;
  }
  const double n = static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["binds"] = static_cast<double>(binds) / n;
  state.counters["evictions"] = static_cast<double>(evictions) / n;
  state.counters["tried"] = static_cast<double>(tried) / n;
  state.counters["kept"] = static_cast<double>(kept) / n;
  state.counters["shared"] = static_cast<double>(shared) / n;
  state.counters["pods"] = static_cast<double>(f.world.pods.size());
}

void BM_Backlog(benchmark::State& state) {
  RunBacklogCycles(state, true, state.range(0) != 0, state.range(1) != 0);
}
void BM_NoBacklog(benchmark::State& state) {
  RunBacklogCycles(state, false, true, state.range(0) != 0);
}

BENCHMARK(BM_NoBacklog)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(6);
BENCHMARK(BM_Backlog)
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(8);

}  // namespace
}  // namespace kai::bench
