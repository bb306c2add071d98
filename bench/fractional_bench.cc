// Fractional fill (issue "GPU sharing"): 1,000 nodes x 8 GPUs, 16,000 pending single-pod jobs
// asking gpu-fraction 0.5, round-robin over KAI's four-queue departments layout. Every GPU ends
// with exactly two halves (gpupack joins the half-used GPU first), so every iteration must bind
// all 16,000 pods.
//
//   BM_FractionalFill          snapshot + session open + allocate
//   BM_FractionalFill_Action   the allocate action only (target: under 20 ms)
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>

#include "generator.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai::bench {
namespace {

constexpr int kNodes = 1000;
constexpr int kPods = 16000;

struct Fixture {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
};

const Fixture& GetFixture() {
  static const Fixture f = [] {
    Fixture out;
    ClusterShape shape = KaiAllocateShape(kNodes, kPods);
    out.state = Generate(shape);
    for (PodObject& p : out.state.pods) {
      p.request.milli_gpu = 0;
      p.gpu_sharing.fraction_milli = kMilliPerUnit / 2;
    }
    out.now = shape.now;
    out.config = ConfigFromShard(std::nullopt).value();
    return out;
  }();
  return f;
}

bool AllBound(benchmark::State& state, const Session& s) {
  if (s.counters().binds == kPods) return true;
  state.SkipWithError(
      ("expected " + std::to_string(kPods) + " binds, got " + std::to_string(s.counters().binds))
          .c_str());
  return false;
}

void Run(benchmark::State& state, bool action_only) {
  const Fixture& f = GetFixture();
  const ActionInfo* allocate = FindAction("allocate");
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    Session s(BuildSnapshot(f.state, f.now), f.config);
    if (!s.OpenPlugins().ok()) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    auto action = allocate->make();
    const auto t1 = std::chrono::steady_clock::now();
    action->Execute(s);
    const auto t2 = std::chrono::steady_clock::now();
    if (!AllBound(state, s)) break;
    state.SetIterationTime(std::chrono::duration<double>(action_only ? t2 - t1 : t2 - t0).count());
  }
  state.counters["pods"] = kPods;
  state.counters["nodes"] = kNodes;
}

void BM_FractionalFill(benchmark::State& state) { Run(state, false); }
void BM_FractionalFill_Action(benchmark::State& state) { Run(state, true); }

BENCHMARK(BM_FractionalFill)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_FractionalFill_Action)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

}  // namespace
}  // namespace kai::bench
