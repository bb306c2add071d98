#include "harness.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "kai/core/framework/session.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/snapshot.h"

// Counts every (non-aligned) operator new of the process. kai_bench is built without sanitizers
// (scripts/sanitize.sh turns the benchmarks off), so replacing the global allocation functions is
// safe; the matching operator deletes free with std::free.
namespace {
std::atomic<uint64_t> g_allocations{0};

void* CountedAlloc(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return CountedAlloc(n); }
void* operator new[](std::size_t n) { return CountedAlloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace kai::bench {

using Clock = std::chrono::steady_clock;

uint64_t AllocationCount() { return g_allocations.load(std::memory_order_relaxed); }

double LiveHeapBytes() {
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd);
}

std::vector<std::string> DefaultActions() {
  return {"allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"};
}

CycleFixture MakeFixture(ClusterState state, UnixSeconds now, std::vector<std::string> actions,
                         Expect expect) {
  CycleFixture f;
  f.state = std::move(state);
  f.config = ConfigFromShard(std::nullopt).value();
  f.now = now;
  f.actions = std::move(actions);
  f.expect = expect;
  return f;
}

Outcome CountOutcome(const Session& s) {
  Outcome o;
  o.binds = s.counters().binds;
  for (const SnapPod& p : s.snap().pods) {
    const bool was_running = p.obj->phase == "Running";
    if (p.status == PodStatus::kReleasing && was_running) ++o.evicted;
    if (p.status == PodStatus::kPipelined) ++(was_running ? o.moved : o.pipelined);
  }
  return o;
}

namespace {

void Describe(std::string& out, const char* what, int got, int want) {
  out += std::string(out.empty() ? "" : ", ") + what + " " + std::to_string(got);
  if (want >= 0) out += " (expected " + std::to_string(want) + ")";
}

bool Differs(int got, int want) { return want >= 0 && got != want; }

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// CPU time of this thread in ms: on a loaded machine it stays near the unloaded wall time.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Sums of the per-cycle measures; reported as means.
struct Totals {
  double snapshot = 0, open = 0, action = 0, teardown = 0, cpu = 0, heap = 0, allocs = 0;
};

}  // namespace

bool CheckOutcome(benchmark::State& state, const Outcome& o, const Expect& e) {
  if (!Differs(o.binds, e.binds) && !Differs(o.pipelined, e.pipelined) &&
      !Differs(o.evicted, e.evicted) && !Differs(o.moved, e.moved)) {
    return true;
  }
  std::string msg;
  Describe(msg, "binds", o.binds, e.binds);
  Describe(msg, "pipelined", o.pipelined, e.pipelined);
  Describe(msg, "evicted", o.evicted, e.evicted);
  Describe(msg, "moved", o.moved, e.moved);
  state.SkipWithError(("unexpected outcome: " + msg).c_str());
  return false;
}

void RunCycles(benchmark::State& state, const CycleFixture& f) {
  Totals sum;
  Outcome o;
  for (auto _ : state) {
    const double heap0 = LiveHeapBytes();
    const uint64_t allocs0 = AllocationCount();
    const double cpu0 = ThreadCpuMs();
    const auto t0 = Clock::now();
    auto s = std::make_unique<Session>(BuildSnapshot(f.state, f.now), f.config);
    const auto t1 = Clock::now();
    const bool opened = s->OpenPlugins().ok();
    const auto t2 = Clock::now();
    if (!opened) {
      state.SkipWithError("OpenPlugins failed");
      break;
    }
    // As a cycle runs them (sim::RunSession), so that jobs of one shape share a verdict within
    // the cycle; no record of an earlier cycle is kept, so no action replays.
    s->memo().Open(*s, nullptr, /*world_unchanged=*/false, /*record=*/false);
    const Status ran = sim::RunActions(*s, f.actions);
    const auto t3 = Clock::now();
    if (!ran.ok()) {
      state.SkipWithError(ran.error().message.c_str());
      break;
    }
    const double cpu1 = ThreadCpuMs();
    const uint64_t allocs1 = AllocationCount();
    sum.heap += LiveHeapBytes() - heap0;  // untimed
    o = CountOutcome(*s);                 // untimed
    const auto t4 = Clock::now();
    const double cpu2 = ThreadCpuMs();
    s.reset();
    const auto t5 = Clock::now();
    sum.cpu += (cpu1 - cpu0) + (ThreadCpuMs() - cpu2);
    sum.snapshot += Ms(t0, t1);
    sum.open += Ms(t1, t2);
    sum.action += Ms(t2, t3);
    sum.teardown += Ms(t4, t5);
    sum.allocs += static_cast<double>(allocs1 - allocs0);
    state.SetIterationTime((Ms(t0, t3) + Ms(t4, t5)) / 1e3);
    if (!CheckOutcome(state, o, f.expect)) break;
  }
  const double n = std::max<double>(1, static_cast<double>(state.iterations()));
  state.counters["snapshot_ms"] = sum.snapshot / n;
  state.counters["open_ms"] = sum.open / n;
  state.counters["action_ms"] = sum.action / n;
  state.counters["teardown_ms"] = sum.teardown / n;
  state.counters["cpu_ms"] = sum.cpu / n;
  state.counters["allocs"] = sum.allocs / n;
  state.counters["heap_MB"] = sum.heap / n / 1e6;
  state.counters["nodes"] = static_cast<double>(f.state.nodes.size());
  state.counters["pods"] = static_cast<double>(f.state.pods.size());
  state.counters["binds"] = o.binds;
  state.counters["pipelined"] = o.pipelined;
  state.counters["evicted"] = o.evicted;
  state.counters["moved"] = o.moved;
}

}  // namespace kai::bench
