// The fill run: an empty cluster of 500 nodes x 8 GPUs and 4,000 pending one-GPU single-pod jobs
// in one queue, run through the embedded cluster (kai::sim::RunCycle, the loop of
// kai::sim::Simulate and `kai simulate`) cycle after cycle until every pod runs. KAI's figure is
// 6 m 38 s end to end through a real API server (pods created, scheduled, bound, started), so the
// ratio is only indicative: kai's number is scheduler time alone (snapshot, session, the five
// actions, the per-cycle report and moving the world on).
//
//   BM_FillCluster/500/4000   nodes / jobs. Counters: cycles until all run, binds, decisions/s
//                             (binds per second of scheduler time), ms per cycle.
//   BM_FillCluster/100/800    the same at a fifth of the size: the ratio shows the scaling.
//   BM_FillClusterDra/...     the same GPUs and requests through Dynamic Resource Allocation:
//                             each node's 8 GPUs in a ResourceSlice, each pod asking one
//                             through its own ResourceClaim, generated from a template (the ratio
//                             to BM_FillCluster is what DRA costs).
//   BM_FillClusterNuma/...    the same with the numa plugin on: every node's GPUs and CPUs in two
//                             NUMA zones (single-numa-node), every pod Guaranteed (the ratio to
//                             BM_FillCluster is what NUMA-aware placement costs).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "generator.h"
#include "kai/core/framework/config.h"
#include "kai/core/sim/simulator.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Fixture {
  ClusterState world;
  SchedulerConfig config;
  UnixSeconds now = 0;
};

enum class Variant { kPlain, kDra, kNuma };

// KAI's default configuration, with the numa plugin (opt-in) at its priority for kNuma.
SchedulerConfig ConfigFor(Variant v) {
  SchedulerConfig c = ConfigFromShard(std::nullopt).value();
  if (v != Variant::kNuma) return c;
  const PluginConfig numa{"numa", 450, {}};
  auto at = std::find_if(c.plugins.begin(), c.plugins.end(),
                         [&](const PluginConfig& p) { return p.priority < numa.priority; });
  c.plugins.insert(at, numa);
  return c;
}

const Fixture& GetFixture(int nodes, int jobs, Variant variant) {
  static std::map<std::tuple<int, int, Variant>, Fixture> cache;
  auto [it, inserted] = cache.try_emplace({nodes, jobs, variant});
  if (inserted) {
    ClusterShape shape;
    shape.nodes = nodes;
    shape.gpus_per_node = 8;
    shape.jobs = jobs;
    shape.pods_per_job = 1;
    shape.gpus_per_pod = 1;
    // One queue (under the harness' implicit `default`) that deserves every GPU.
    shape.queues = QueuesUnderDefault(1, nodes * 8.0, -1, 1);
    it->second.world = Generate(shape);
    if (variant == Variant::kDra) MoveGpusToDra(it->second.world);
    if (variant == Variant::kNuma) AddNumaZones(it->second.world, 2);
    it->second.now = shape.now;
    it->second.config = ConfigFor(variant);
  }
  return it->second;
}

bool AllRunning(const ClusterState& world) {
  for (const PodObject& p : world.pods) {
    if (p.phase != "Running") return false;
  }
  return true;
}

void Fill(benchmark::State& state, Variant variant) {
  const int nodes = static_cast<int>(state.range(0));
  const int jobs = static_cast<int>(state.range(1));
  const Fixture& f = GetFixture(nodes, jobs, variant);
  constexpr int kMaxCycles = 1000;
  int cycles = 0, binds = 0;
  double seconds = 0;
  for (auto _ : state) {
    ClusterState world = f.world;  // untimed copy
    sim::SimulateOptions options;
    options.now = f.now;
    sim::CycleCache cache;  // as Simulate: cycles after the first update the snapshot
    cycles = binds = 0;
    double t = 0;
    bool ok = true;
    while (cycles < kMaxCycles) {
      const auto t0 = Clock::now();
      auto report = sim::RunCycle(world, f.config, options, cycles + 1, &cache);
      const auto t1 = Clock::now();
      t += std::chrono::duration<double>(t1 - t0).count();
      ++cycles;
      if (!report.ok()) {
        state.SkipWithError(("cycle failed: " + report.error().message).c_str());
        ok = false;
        break;
      }
      binds += report.value().counts.binds;
      if (AllRunning(world)) break;
      options.now += 1;  // the next cycle, a second later
    }
    if (!ok) break;
    if (!AllRunning(world)) {
      state.SkipWithError("pods still pending after the cycle limit");
      break;
    }
    state.SetIterationTime(t);
    seconds = t;
  }
  state.counters["nodes"] = nodes;
  state.counters["jobs"] = jobs;
  state.counters["cycles"] = cycles;
  state.counters["binds"] = binds;
  state.counters["decisions/s"] = seconds > 0 ? binds / seconds : 0;
  state.counters["ms/cycle"] = cycles > 0 ? seconds * 1e3 / cycles : 0;
}

void BM_FillCluster(benchmark::State& state) { Fill(state, Variant::kPlain); }
void BM_FillClusterDra(benchmark::State& state) { Fill(state, Variant::kDra); }
void BM_FillClusterNuma(benchmark::State& state) { Fill(state, Variant::kNuma); }

BENCHMARK(BM_FillCluster)
    ->Args({100, 800})
    ->Args({500, 4000})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_FillClusterDra)
    ->Args({100, 800})
    ->Args({500, 4000})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_FillClusterNuma)
    ->Args({100, 800})
    ->Args({500, 4000})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
}  // namespace kai::bench
