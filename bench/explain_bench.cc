// `kai explain` at 1,000 nodes and 10,000 pods (issue 21: "under a second"). 1,000 nodes x 8
// GPUs; 7,000 running one-GPU jobs (7 on every node, priority class build: non-preemptible) in
// queue-0..3, each limited to what it runs; 2,988 more one-GPU jobs of those queues pending
// (over their limits). Every node has one GPU free. Two targets:
//
//   BM_ExplainFragmentedGang `frag-gang`, 4 pods x 2 GPUs in queue `team` (no quota or limit):
//                            1,000 GPUs are free but no node has 2; stopping one pod on each of
//                            4 nodes is found
//   BM_ExplainLimitGang      `limit-gang`, 8 pods x 1 GPU in queue `capped` (GPU limit 4):
//                            raise the limit by 4
//   BM_ExplainCycle          one cycle of the world (the unit an explanation repeats)
//   BM_ExplainCopyAndSnapshot  what a verifying cycle spends before the session: copying the
//                            world and building its snapshot
//
// The whole ExplainWorkload call is timed: the first cycle, candidate generation, every
// verifying cycle (each copies the world, builds the snapshot, runs the five actions).
// Counters: cycles run, suggestions found. KAI_BENCH_YAML_DIR=dir writes the world as YAML for
// `kai explain -f`.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "generator.h"
#include "kai/core/explain/counterfactual.h"
#include "kai/core/framework/config.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct ExplainFixture {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
};

void MaybeWriteYaml(const std::string& name, const ClusterState& state) {
  const char* dir = std::getenv("KAI_BENCH_YAML_DIR");
  if (dir == nullptr || *dir == '\0') return;
  std::ofstream(std::string(dir) + "/" + name + ".yaml") << ToYaml(state);
}

const ExplainFixture& GetExplainFixture() {
  static const ExplainFixture f = [] {
    ExplainFixture x;
    const ClusterShape shape = ExplainWorldShape(7, false, -1, true);
    x.state = Generate(shape);
    x.now = shape.now;
    x.config = ConfigFromShard(std::nullopt).value();
    MaybeWriteYaml("explain-1000", x.state);
    return x;
  }();
  return f;
}

void RunExplain(benchmark::State& state, const std::string& target, ChangeKind expected) {
  const ExplainFixture& f = GetExplainFixture();
  ExplainOptions o;
  o.simulate.now = f.now;
  int cycles = 0;
  size_t suggestions = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto e = ExplainWorkload(f.state, f.config, ExplainTarget{true, "default", target}, o);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    if (!e.ok()) {
      state.SkipWithError(e.error().message.c_str());
      return;
    }
    bool found = false;
    for (const Suggestion& s : e->suggestions) found = found || s.change.kind == expected;
    if (!found || e->outcome.runs) {
      state.SkipWithError("the expected suggestion is missing");
      return;
    }
    cycles = e->cycles;
    suggestions = e->suggestions.size();
  }
  state.counters["cycles"] = cycles;
  state.counters["suggestions"] = static_cast<double>(suggestions);
}

void BM_ExplainFragmentedGang(benchmark::State& state) {
  RunExplain(state, "frag-gang", ChangeKind::kFreeGpus);
}
BENCHMARK(BM_ExplainFragmentedGang)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

void BM_ExplainLimitGang(benchmark::State& state) {
  RunExplain(state, "limit-gang", ChangeKind::kRaiseLimit);
}
BENCHMARK(BM_ExplainLimitGang)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

void BM_ExplainCycle(benchmark::State& state) {
  const ExplainFixture& f = GetExplainFixture();
  sim::SimulateOptions o{.now = f.now};
  for (auto _ : state) {
    const auto start = Clock::now();
    auto s = sim::RunSession(sim::BuildSimSnapshot(f.state, o), f.config, {});
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    if (!s.ok()) state.SkipWithError(s.error().message.c_str());
  }
}
BENCHMARK(BM_ExplainCycle)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

void BM_ExplainCopyAndSnapshot(benchmark::State& state) {
  const ExplainFixture& f = GetExplainFixture();
  sim::SimulateOptions o{.now = f.now};
  for (auto _ : state) {
    const auto start = Clock::now();
    ClusterState copy = f.state;
    Snapshot snap = sim::BuildSimSnapshot(copy, o);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    benchmark::DoNotOptimize(snap.pods.size());
  }
}
BENCHMARK(BM_ExplainCopyAndSnapshot)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

}  // namespace
}  // namespace kai::bench
