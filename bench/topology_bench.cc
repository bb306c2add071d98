// Topology-aware allocate on KAI's topology scale shape (test/e2e/scale "Allocate single
// distributed job with preferred topology"; bench/generator.h KaiTopologyShape): 512 nodes x 8 GPUs
// as 4 zones x 8 blocks x 8 racks x 2 nodes, one gang of 512 pods x 2 GPUs. No rack or block
// holds the gang; the first zone does, and inside it the pods fill rack after rack. KAI's figures
// are end to end through a real API server (48.7 s with preferred level rack, 49.4 s without);
// kai's are the scheduling cycle only.
//
//   BM_TopologyPreferredRack         snapshot + session open + allocate, preferred level rack
//   BM_TopologyPreferredRack_Action  the allocate action only
//   BM_TopologyNoConstraint          the same gang without a topology constraint
// Every iteration must bind all 512 pods.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "generator.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct TopologyFixture {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
  int pods = 0;
};

const TopologyFixture& GetTopologyFixture(const std::string& preferred) {
  static std::map<std::string, TopologyFixture> cache;
  auto [it, inserted] = cache.try_emplace(preferred);
  if (inserted) {
    const ClusterShape shape = KaiTopologyShape(preferred);
    it->second.state = Generate(shape);
    it->second.now = shape.now;
    it->second.config = ConfigFromShard(std::nullopt).value();
    it->second.pods = shape.jobs * shape.pods_per_job;
  }
  return it->second;
}

// Opens a session on a fresh snapshot; false (and the benchmark skipped) when plugins fail.
bool Open(benchmark::State& state, Session& s) {
  if (s.OpenPlugins().ok()) return true;
  state.SkipWithError("OpenPlugins failed");
  return false;
}

bool AllBound(benchmark::State& state, const Session& s, const TopologyFixture& f) {
  if (s.counters().binds == f.pods) return true;
  state.SkipWithError(
      ("expected " + std::to_string(f.pods) + " binds, got " + std::to_string(s.counters().binds))
          .c_str());
  return false;
}

// The gang must end in one zone (it fits in one, and no smaller domain holds it).
bool OneZone(benchmark::State& state, const Session& s) {
  std::set<std::string_view> zones;
  for (const SnapPod& p : s.snap().pods) {
    if (p.node == kNone) continue;
    zones.insert(s.snap().nodes[p.node].obj->meta.labels.at("kai.scheduler/zone"));
  }
  if (zones.size() == 1) return true;
  state.SkipWithError(("gang spread over " + std::to_string(zones.size()) + " zones").c_str());
  return false;
}

void RunTopologyCycle(benchmark::State& state, const std::string& preferred) {
  const TopologyFixture& f = GetTopologyFixture(preferred);
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!Open(state, s)) break;
    allocate->make()->Execute(s);
    if (!AllBound(state, s, f)) break;
    benchmark::DoNotOptimize(s.counters());
  }
  state.counters["pods"] = f.pods;
}

void BM_TopologyPreferredRack(benchmark::State& state) {
  RunTopologyCycle(state, "kai.scheduler/rack");
}
void BM_TopologyNoConstraint(benchmark::State& state) { RunTopologyCycle(state, ""); }

void BM_TopologyPreferredRack_Action(benchmark::State& state) {
  const TopologyFixture& f = GetTopologyFixture("kai.scheduler/rack");
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!Open(state, s)) break;
    auto action = allocate->make();
    const auto t0 = Clock::now();
    action->Execute(s);
    const auto t1 = Clock::now();
    if (!AllBound(state, s, f) || !OneZone(state, s)) break;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  state.counters["pods"] = f.pods;
}

BENCHMARK(BM_TopologyPreferredRack)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TopologyPreferredRack_Action)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TopologyNoConstraint)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kai::bench
