#pragma once
// The common loop of the scheduling-cycle benchmarks: every iteration builds the snapshot from a
// fixed ClusterState, opens a session with its plugins, runs a list of actions as a cycle does
// (each started on the session: jobs of one shape share a verdict within the cycle), checks the
// outcome and tears the session down, as KAI's Go benchmarks do (BuildSession + Execute inside
// b.N). The iteration time is the wall time of all of that except the outcome check and the
// memory probe (UseManualTime); the phases are counters.
//
// Counters of RunCycles (per cycle, means over the iterations):
//   snapshot_ms, open_ms, action_ms, teardown_ms   the phases of the timed region (wall)
//   cpu_ms        thread CPU time of the timed region: close to the wall time of an idle
//                 machine when the machine is loaded (the wall time then includes waiting)
//   allocs        operator new calls during the timed region (harness.cc counts them)
//   heap_MB       live heap at the end of the actions, before teardown, minus before the cycle
//                 (glibc mallinfo2): the snapshot, the session and what the actions left
//   binds, pipelined, evicted, moved   the outcome (see Outcome)
// An outcome that differs from the fixture's Expect stops the benchmark with SkipWithError, so a
// broken scheduler cannot look fast.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/model/cluster.h"
#include "kai/core/util/time.h"

namespace kai {
class Session;
}

namespace kai::bench {

// operator new calls in this process so far (global replacement in harness.cc).
uint64_t AllocationCount();
// Live heap bytes (mallinfo2: uordblks + hblkhd).
double LiveHeapBytes();

// -1: not checked.
struct Expect {
  int binds = -1;      // session binds (pods allocated onto free resources)
  int pipelined = -1;  // pods pending in the fixture that end Pipelined (preemptors)
  int evicted = -1;    // pods running in the fixture that end Releasing (victims)
  int moved = -1;      // pods running in the fixture that end Pipelined (moved victims)
};

struct Outcome {
  int binds = 0, pipelined = 0, evicted = 0, moved = 0;
};

struct CycleFixture {
  ClusterState state;
  SchedulerConfig config;
  UnixSeconds now = 0;
  std::vector<std::string> actions;  // run in order
  Expect expect;
};

// KAI's default action list (allocate, consolidation, reclaim, preempt, stalegangeviction).
std::vector<std::string> DefaultActions();

// A fixture with KAI's default config and the given actions.
CycleFixture MakeFixture(ClusterState state, UnixSeconds now, std::vector<std::string> actions,
                         Expect expect);

Outcome CountOutcome(const Session& s);

// False (and the benchmark stopped with SkipWithError naming the difference) when `o` differs
// from `e` in a checked field.
bool CheckOutcome(benchmark::State& state, const Outcome& o, const Expect& e);

// The loop described above, on `f`.
void RunCycles(benchmark::State& state, const CycleFixture& f);

}  // namespace kai::bench
