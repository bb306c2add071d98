#pragma once
// What a what-if run comes to, per queue: wait times, completed jobs, GPU-hours used against the
// fair share, evictions; and the cluster's GPU utilisation over time. Integers until the last
// step (seconds, milli-GPU x seconds); the ratios are for people.
#include <cstdint>
#include <string>
#include <vector>

#include "kai/core/whatif/engine.h"

namespace kai::whatif {

struct QueueSummary {
  std::string name, parent;
  // Jobs submitted before the run's end (later ones are left out).
  int64_t jobs = 0, started = 0, completed = 0, restarts = 0;
  // Seconds from submission to first start; a job that never started counts its wait until the
  // end of the run (so a variant cannot look better by starting fewer jobs).
  int64_t wait_p50 = 0, wait_p95 = 0, wait_max = 0;
  std::vector<int64_t> waits;  // every job's, sorted
  int64_t used_milli_gpu_seconds = 0, fair_milli_gpu_seconds = 0;
  int64_t evictions_suffered = 0, evictions_caused = 0;
};

struct VariantSummary {
  std::string name;
  RunResult run;
  std::vector<QueueSummary> queues;  // the queues with jobs or a fair share, in the run's order
};

// The nearest-rank percentile (p in 0..100) of sorted values; 0 for none.
int64_t Percentile(const std::vector<int64_t>& sorted, int p);

VariantSummary Summarize(std::string name, RunResult run);

// Mean cluster utilisation of a timeline bucket, 0..1 (the last bucket may be shorter).
double BucketUtilisation(const RunResult& r, size_t bucket);
double MeanUtilisation(const RunResult& r);
int64_t BucketLength(const RunResult& r, size_t bucket);

}  // namespace kai::whatif
