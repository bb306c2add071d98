#pragma once
// kai whatif's event loop (docs/whatif.md): a trace of jobs submitted to a cluster over simulated
// time, scheduled by the same cycles as kai simulate and kai scheduler (sim::RunCycle with its
// incremental snapshot). The clock jumps from event to event: a job's arrival, a job's
// completion, the next schedule period after a change, or a recheck while jobs wait; idle
// stretches cost nothing. A job whose running pods drop below its minMember (evicted) goes back to
// pending and, when it runs again, needs its whole duration again. Pure: no I/O, the clock is the
// simulated one, and the only randomness is the trace's (seeded before it gets here).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/model/cluster.h"
#include "kai/core/usage/db_config.h"
#include "kai/core/util/result.h"
#include "kai/core/util/time.h"
#include "kai/core/whatif/trace.h"

namespace kai::whatif {

struct Progress {
  int64_t simulated_seconds = 0;  // reached, from the start
  int64_t until_seconds = 0;
  int64_t events = 0, cycles = 0;
};

struct WhatIfOptions {
  UnixSeconds start = 0;                  // the simulated clock at the trace's time 0
  int64_t until_seconds = 7 * 24 * 3600;  // how long to simulate
  int64_t period_seconds = 0;             // 0: the shard's schedulePeriod (rounded up), else 1 s
  // While jobs wait and nothing else happens, a cycle runs this often (time alone can change a
  // decision: usage decays, minimum runtimes and stale-gang grace periods end).
  int64_t recheck_seconds = 60;
  int64_t buckets = 200;  // points of the timelines
  // Time-based fair share: the shard's usageDBConfig (none: plain fair share, as KAI without one).
  // The usage is refreshed every fetchInterval of simulated time, as KAI reads it.
  std::optional<usage::UsageDbConfig> usage;
  // Called now and then with where the run is (the front end draws a progress bar).
  std::function<void(const Progress&)> progress;
  Session::MonotonicClock monotonic_millis;  // the sessions' search clock (default: steady)
  // Every cycle also runs with every pending job decided (sim::SimulateOptions).
  bool verify_kept_verdicts = false;
};

struct JobOutcome {
  std::string ns, name, queue;
  int64_t submit = 0;        // seconds from the start
  int64_t first_start = -1;  // -1: never ran
  int64_t completed = -1;    // -1: did not finish
  int64_t restarts = 0;      // times it was evicted below its minMember while running
  int64_t gpu_milli_per_pod = 0;
  int pods = 0;
  // Wait before the first start; a job that never started counts its wait up to the end.
  int64_t Wait(int64_t until) const { return (first_start >= 0 ? first_start : until) - submit; }
  friend bool operator==(const JobOutcome&, const JobOutcome&) = default;
};

// Per queue, integrated over the run (milli-GPU x seconds, exact).
struct QueueTotals {
  std::string name, parent;
  int64_t used_milli_gpu_seconds = 0;
  int64_t fair_milli_gpu_seconds = 0;
  int64_t evictions_suffered = 0;        // pods of the queue evicted
  int64_t evictions_caused = 0;          // pods evicted for jobs of the queue
  int64_t peak_allocated_milli_gpu = 0;  // the most its running pods held at once
  std::vector<int64_t> allocated;        // per timeline bucket, milli-GPU x seconds
  std::vector<int64_t> fair_share;
  friend bool operator==(const QueueTotals&, const QueueTotals&) = default;
};

struct RunResult {
  int64_t until_seconds = 0, bucket_seconds = 0;
  int64_t capacity_milli_gpu = 0;
  std::vector<int64_t> cluster_allocated;  // per bucket, milli-GPU x seconds
  std::vector<QueueTotals> queues;         // the snapshot's queue order
  std::vector<JobOutcome> jobs;            // the trace's order
  int64_t events = 0, cycles = 0;
  friend bool operator==(const RunResult&, const RunResult&) = default;
};

// Runs `jobs` on `cluster` (its pods stay as they are: running ones keep running). Errors: a job
// whose objects do not decode (naming the trace line), the scheduler's configuration.
Result<RunResult> RunWhatIf(ClusterState cluster, const SchedulerConfig& config,
                            const std::vector<TraceJob>& jobs, const WhatIfOptions& options);

}  // namespace kai::whatif
