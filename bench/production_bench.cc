// KAI issue #315's production cluster (bench/production_shape.h): 4,000 nodes (100 x 8 GPUs, the
// rest CPU-only), 140,000 pods (one DaemonSet pod per node, 784 one-GPU pods, ~135k CPU pods of
// KAI jobs in ~78k PodGroups, 5 % of them Succeeded, 12 pending GPU pods: a 6 x 4-GPU Deployment
// and two gangs), 20 queues. KAI: 2.2 s of snapshot analysis, then 176-290 ms of actions.
//
//   BM_ProductionSnapshotBuild        BuildSnapshot from the ClusterState (kai's only build path:
//                                     every cycle is a "first build"). KAI: 2.2 s.
//   BM_ProductionSnapshotAfterChurn   1 % of the pods (1,400 Running CPU pods) flip Running <->
//                                     Succeeded in the ClusterState, then BuildSnapshot. kai has no
//                                     incremental snapshot yet: this is a full rebuild too.
//   BM_ProductionSessionOpen          Session + OpenPlugins (fair share over 20 queues).
//   BM_ProductionActions              the five default actions (allocate, consolidation, reclaim,
//                                     preempt, stalegangeviction); per-action ms as counters.
//                                     KAI: 176-290 ms.
//   BM_ProductionFullCycle            snapshot + session + plugins + five actions + teardown.
//   BM_ProductionCycleAfterChurn      churn + the full cycle with a full rebuild.
//   BM_ProductionSnapshotIncremental  the same churn, then SnapshotCache::Update (kai's
//                                     incremental snapshot: only the changed pods, their nodes
//                                     and jobs are derived again).
//   BM_ProductionCycleIncremental     churn + incremental snapshot + session + plugins + five
//                                     actions, the snapshot lent to the session and returned:
//                                     the steady-state cycle of a running scheduler.
// Phase benchmarks time their region with a steady clock (UseManualTime).
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session.h"
#include "kai/core/snapshot/cache.h"
#include "kai/core/snapshot/snapshot.h"
#include "production_shape.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Fixture {
  ProductionShape shape;
  ClusterState state;  // mutated by the churn benchmarks, restored when they end
  SchedulerConfig config;
  std::vector<size_t> churn;  // pod indices flipped by the churn benchmarks
  bool flipped = false;
};

Fixture& GetFixture() {
  static Fixture* f = [] {
    auto* fx = new Fixture;
    fx->state = BuildProduction(fx->shape);
    fx->config = ConfigFromShard(std::nullopt).value();
    fx->churn = ChurnPods(fx->state, fx->shape, fx->shape.pods / 100);
    return fx;
  }();
  return *f;
}

// Flips the churn pods Running <-> Succeeded (1 % of the pods change every call).
void Churn(Fixture& f) {
  f.flipped = !f.flipped;
  for (size_t i : f.churn) f.state.pods[i].phase = f.flipped ? "Succeeded" : "Running";
}

void Restore(Fixture& f) {
  if (f.flipped) Churn(f);
}

void ShapeCounters(benchmark::State& state, const Fixture& f) {
  state.counters["nodes"] = static_cast<double>(f.state.nodes.size());
  state.counters["pods"] = static_cast<double>(f.state.pods.size());
  state.counters["podgroups"] = static_cast<double>(f.state.pod_groups.size());
}

void CountersOf(benchmark::State& state, const SessionCounters& c) {
  state.counters["binds"] = c.binds;
  state.counters["pipelines"] = c.pipelines;
  state.counters["evictions"] = c.evictions;
}

// Issue #315's case: 4 of the 6 Deployment replicas bind on the 16 free GPUs; the two replicas
// left and both gangs (8 pods) are pipelined onto GPUs that reclaim frees.
constexpr Expect kExpect{.binds = 4, .pipelined = 8};

constexpr std::array<const char*, 5> kDefaultActions = {"allocate", "consolidation", "reclaim",
                                                        "preempt", "stalegangeviction"};

void BM_ProductionSnapshotBuild(benchmark::State& state) {
  Fixture& f = GetFixture();
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Snapshot snap = BuildSnapshot(f.state, f.shape.now);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(snap.pods.data());
    state.SetIterationTime(Seconds(t0, t1));
  }
  ShapeCounters(state, f);
}

void BM_ProductionSnapshotAfterChurn(benchmark::State& state) {
  Fixture& f = GetFixture();
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Churn(f);
    Snapshot snap = BuildSnapshot(f.state, f.shape.now);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(snap.pods.data());
    state.SetIterationTime(Seconds(t0, t1));
  }
  Restore(f);
  ShapeCounters(state, f);
  state.counters["changed_pods"] = static_cast<double>(f.churn.size());
}

void BM_ProductionSessionOpen(benchmark::State& state) {
  Fixture& f = GetFixture();
  for (auto _ : state) {
    Snapshot snap = BuildSnapshot(f.state, f.shape.now);
    SchedulerConfig config = f.config;
    const auto t0 = Clock::now();
    Session s(std::move(snap), std::move(config));
    const bool ok = s.OpenPlugins().ok();
    const auto t1 = Clock::now();
    if (!ok) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    state.SetIterationTime(Seconds(t0, t1));
  }
  ShapeCounters(state, f);
}

void BM_ProductionActions(benchmark::State& state) {
  Fixture& f = GetFixture();
  std::array<double, kDefaultActions.size()> per_action{};
  std::vector<const ActionInfo*> actions;
  for (const char* name : kDefaultActions) actions.push_back(FindAction(name));
  SessionCounters last;
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.shape.now), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    double total = 0;
    for (size_t a = 0; a < actions.size(); ++a) {
      auto action = actions[a]->make();
      const auto t0 = Clock::now();
      action->Execute(s);
      const auto t1 = Clock::now();
      per_action[a] += Seconds(t0, t1);
      total += Seconds(t0, t1);
    }
    state.SetIterationTime(total);
    last = s.counters();
    if (!CheckOutcome(state, CountOutcome(s), kExpect)) break;
  }
  ShapeCounters(state, f);
  const double n = static_cast<double>(state.iterations());
  for (size_t a = 0; a < actions.size(); ++a) {
    state.counters[std::string(kDefaultActions[a]) + "_ms"] = n > 0 ? per_action[a] * 1e3 / n : 0;
  }
  CountersOf(state, last);
}

// The churn as the cache hears of it: the flipped pods, changed in place.
ClusterChanges ChurnChanges(const Fixture& f) {
  ClusterChanges changes;
  changes.pods = f.churn;
  return changes;
}

void CacheCounters(benchmark::State& state, const SnapshotCache& cache) {
  const SnapshotCacheStats& st = cache.stats();
  const double n = static_cast<double>(std::max<int64_t>(1, st.incremental_updates));
  state.counters["full_builds"] = static_cast<double>(st.full_builds);
  state.counters["pods_rederived"] = static_cast<double>(st.pods_rederived) / n;
  state.counters["nodes_rederived"] = static_cast<double>(st.nodes_rederived) / n;
  state.counters["jobs_rederived"] = static_cast<double>(st.jobs_rederived) / n;
}

void BM_ProductionSnapshotIncremental(benchmark::State& state) {
  Fixture& f = GetFixture();
  SnapshotCache cache;
  cache.Update(f.state, f.shape.now, {});
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Churn(f);
    const Snapshot& snap = cache.Update(f.state, f.shape.now, ChurnChanges(f));
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(snap.pods.data());
    state.SetIterationTime(Seconds(t0, t1));
  }
  Restore(f);
  ShapeCounters(state, f);
  CacheCounters(state, cache);
  state.counters["changed_pods"] = static_cast<double>(f.churn.size());
}

enum class CycleKind {
  kFull,              // snapshot built in full, no churn
  kChurnRebuild,      // 1 % churn, snapshot built in full
  kChurnIncremental,  // 1 % churn, snapshot from the cache (lent to the session, returned)
};

// Snapshot + session + plugins + the five actions.
void RunCycle(benchmark::State& state, CycleKind kind) {
  Fixture& f = GetFixture();
  std::vector<const ActionInfo*> actions;
  for (const char* name : kDefaultActions) actions.push_back(FindAction(name));
  const bool incremental = kind == CycleKind::kChurnIncremental;
  SnapshotCache cache;
  if (incremental) cache.Update(f.state, f.shape.now, {});
  auto snapshot = [&]() -> Snapshot {
    if (!incremental) return BuildSnapshot(f.state, f.shape.now);
    cache.Update(f.state, f.shape.now, ChurnChanges(f));
    return cache.Lend();
  };
  SessionCounters last;
  for (auto _ : state) {
    if (kind != CycleKind::kFull) Churn(f);
    Session s(snapshot(), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    for (const ActionInfo* a : actions) a->make()->Execute(s);
    last = s.counters();
    state.PauseTiming();
    const bool ok = CheckOutcome(state, CountOutcome(s), kExpect);
    state.ResumeTiming();
    if (incremental) cache.Return(s.TakeSnapshot(), s.MovedPods(), s.NodeChanges());
    if (!ok) break;
  }
  Restore(f);
  ShapeCounters(state, f);
  CountersOf(state, last);
  if (incremental) CacheCounters(state, cache);
}

void BM_ProductionFullCycle(benchmark::State& state) { RunCycle(state, CycleKind::kFull); }
void BM_ProductionCycleAfterChurn(benchmark::State& state) {
  RunCycle(state, CycleKind::kChurnRebuild);
}
void BM_ProductionCycleIncremental(benchmark::State& state) {
  RunCycle(state, CycleKind::kChurnIncremental);
}
BENCHMARK(BM_ProductionSnapshotBuild)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_ProductionSnapshotAfterChurn)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_ProductionSessionOpen)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(10);
BENCHMARK(BM_ProductionActions)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_ProductionFullCycle)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ProductionCycleAfterChurn)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ProductionSnapshotIncremental)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_ProductionCycleIncremental)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kai::bench
