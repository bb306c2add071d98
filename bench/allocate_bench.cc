// Allocate on KAI's AllocateAction_* benchmark shapes (pkg/scheduler/actions/benchmark_test.go):
// N nodes x 8 GPUs, J pending one-pod one-GPU jobs (priority train) round-robin over 4 queues
// in 2 departments. Every job fits, so every iteration must bind all J pods.
//
//   BM_AllocateLargeCluster            snapshot + session open + allocate (KAI's figure covers
//                                      the same: BuildSession + allocate.Execute)
//   BM_AllocateLargeCluster_Snapshot   BuildSnapshot only
//   BM_AllocateLargeCluster_SessionOpen  Session construction + OpenPlugins (fair share) only
//   BM_AllocateLargeCluster_Action     the allocate action only
//   BM_AllocateSmall                   10 nodes, 50 jobs, whole cycle: the ratio against Large
//                                      shows how the cycle scales with the cluster.
// The phase benchmarks time their region with a steady clock (UseManualTime); the setup and
// teardown around it are untimed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "generator.h"
#include "kai/framework/config.h"
#include "kai/framework/plugin.h"
#include "kai/framework/session.h"
#include "kai/snapshot/snapshot.h"

// CMake compiles only bench/*_bench.cc into kai_bench; until bench/generator.cc is added to its
// sources, it is compiled here. Remove this include when CMakeLists.txt lists it.
#include "generator.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Fixture {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
  int jobs = 0;
  int nodes = 0;
};

const Fixture& GetFixture(int nodes, int jobs) {
  // One fixture per shape, built once (generation is not what is measured).
  static std::map<std::pair<int, int>, Fixture> cache;
  auto [it, inserted] = cache.try_emplace({nodes, jobs});
  if (inserted) {
    const ClusterShape shape = KaiAllocateShape(nodes, jobs);
    it->second.state = Generate(shape);
    it->second.now = shape.now;
    it->second.config = ConfigFromShard(std::nullopt).value();
    it->second.jobs = jobs;
    it->second.nodes = nodes;
  }
  return it->second;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void ReportCounters(benchmark::State& state, const Fixture& f) {
  state.counters["jobs/s"] =
      benchmark::Counter(static_cast<double>(f.jobs), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["nodes"] = f.nodes;
  state.counters["jobs"] = f.jobs;
}

bool CheckBinds(benchmark::State& state, const Session& s, const Fixture& f) {
  if (s.counters().binds == f.jobs) return true;
  state.SkipWithError(("expected " + std::to_string(f.jobs) + " binds, got " +
                       std::to_string(s.counters().binds))
                          .c_str());
  return false;
}

// Whole cycle: snapshot, session, plugins, allocate.
void RunFullCycle(benchmark::State& state, int nodes, int jobs) {
  const Fixture& f = GetFixture(nodes, jobs);
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    allocate->make()->Execute(s);
    if (!CheckBinds(state, s, f)) break;
    benchmark::DoNotOptimize(s.counters());
  }
  ReportCounters(state, f);
}

void BM_AllocateLargeCluster(benchmark::State& state) { RunFullCycle(state, 100, 500); }
void BM_AllocateSmall(benchmark::State& state) { RunFullCycle(state, 10, 50); }

void BM_AllocateLargeCluster_Snapshot(benchmark::State& state) {
  const Fixture& f = GetFixture(100, 500);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Snapshot snap = BuildSnapshot(f.state, f.now);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(snap.pods.data());
    state.SetIterationTime(Seconds(t0, t1));
  }
  ReportCounters(state, f);
}

void BM_AllocateLargeCluster_SessionOpen(benchmark::State& state) {
  const Fixture& f = GetFixture(100, 500);
  for (auto _ : state) {
    Snapshot snap = BuildSnapshot(f.state, f.now);
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
  ReportCounters(state, f);
}

void BM_AllocateLargeCluster_Action(benchmark::State& state) {
  const Fixture& f = GetFixture(100, 500);
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
    if (!CheckBinds(state, s, f)) break;
    state.SetIterationTime(Seconds(t0, t1));
  }
  ReportCounters(state, f);
}

BENCHMARK(BM_AllocateLargeCluster)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllocateLargeCluster_Snapshot)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_AllocateLargeCluster_SessionOpen)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_AllocateLargeCluster_Action)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_AllocateSmall)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kai::bench
