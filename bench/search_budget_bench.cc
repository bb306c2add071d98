// The disruptive search's work budget (issue 34 item 7) on the shape of the 4-minute reclaim
// search (bench/RESULTS.md, "kai explain"; generator.h ExplainWorldShape): 1,000 nodes x 8 GPUs,
// all taken by 8,000 running preemptible one-GPU jobs of queue-0..3 (each at its quota and limit
// of 2,000 GPUs); 1,996 pending one-GPU jobs of those queues; the gang `frag-gang` (4 pods x 2
// GPUs) of queue `team` with 8 GPUs of quota. No victim's queue may give a GPU: reclaim for the
// gang simulates growing scenarios over the 8,000 candidates and none is valid.
//
//   BM_ReclaimSearchBudget/W   one reclaim cycle with max-search-work-per-job W (and no action
//                              bound). Counters: the gang's scenarios tried, pruned, work units
//                              spent, and gave_up (1 when the budget stopped the search). W = 0
//                              (no bound) is the "before": it runs for minutes and is registered
//                              only with KAI_BENCH_UNBOUNDED=1.
//
// KAI_BENCH_YAML_DIR=dir writes the world (search-budget-1000.yaml) for `kai simulate -f`.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "generator.h"
#include "kai/core/framework/config.h"
#include "kai/core/sim/simulator.h"

namespace kai::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Fixture {
  ClusterState state;
  UnixSeconds now = 0;
};

const Fixture& GetFixture() {
  static const Fixture f = [] {
    Fixture x;
    const ClusterShape shape = ExplainWorldShape(8, true, 8, false);
    x.state = Generate(shape);
    x.now = shape.now;
    if (const char* dir = std::getenv("KAI_BENCH_YAML_DIR"); dir != nullptr && *dir != '\0') {
      std::ofstream(std::string(dir) + "/search-budget-1000.yaml") << ToYaml(x.state);
    }
    return x;
  }();
  return f;
}

// The gang's reclaim reason in the cycle's report (null when it has none).
const DisruptionReason* GangReason(const sim::CycleReport& report) {
  for (const sim::PodReport& p : report.pods) {
    if (p.pod_group != "frag-gang") continue;
    for (const Reason& r : p.reasons) {
      const auto* d = r.As<DisruptionReason>();
      if (d != nullptr && d->action == "reclaim") return d;
    }
  }
  return nullptr;
}

void BM_ReclaimSearchBudget(benchmark::State& state) {
  const Fixture& f = GetFixture();
  SchedulerConfig config = WithActions(ConfigFromShard(std::nullopt).value(), {"reclaim"}).value();
  config.max_search_work_per_job = state.range(0);
  config.max_search_work_per_action = 0;
  DisruptionReason last;
  for (auto _ : state) {
    ClusterState world = f.state;  // a cycle changes its world
    const auto start = Clock::now();
    auto report = sim::RunCycle(world, config, sim::SimulateOptions{.now = f.now}, 1);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    if (!report.ok()) {
      state.SkipWithError(report.error().message.c_str());
      return;
    }
    const DisruptionReason* d = GangReason(*report);
    if (d == nullptr || report->counts.evictions != 0) {
      state.SkipWithError("expected the gang's reclaim to fail with a reason and evict nothing");
      return;
    }
    last = *d;
  }
  state.counters["scenarios"] = last.scenarios_tried;
  state.counters["pruned"] = last.scenarios_pruned;
  state.counters["work"] = static_cast<double>(last.search_work);
  state.counters["gave_up"] = last.outcome == DisruptionOutcome::kGaveUp ? 1 : 0;
}

void Budgets(benchmark::internal::Benchmark* b) {
  const char* unbounded = std::getenv("KAI_BENCH_UNBOUNDED");
  if (unbounded != nullptr && std::string(unbounded) == "1") b->Arg(0);
  b->Arg(kDefaultSearchWorkPerJob / 4)->Arg(kDefaultSearchWorkPerJob / 2);
  b->Arg(kDefaultSearchWorkPerJob)->Arg(kDefaultSearchWorkPerJob * 2);
}

BENCHMARK(BM_ReclaimSearchBudget)
    ->Apply(Budgets)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(1);

}  // namespace
}  // namespace kai::bench
