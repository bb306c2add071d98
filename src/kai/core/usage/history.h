#pragma once
// The live scheduler's record of what each queue held over time (time-based fair share,
// kai-semantics.md §3.8): one sample per cycle, turned into intervals. A queue's amount holds from
// one sample to the next (as a Prometheus gauge is read between scrapes); consecutive equal
// samples are one interval, intervals that left the window are dropped, and a series longer than
// its limit has its oldest intervals merged pairwise, so a scheduler that runs for months keeps a
// bounded history. Pure: the caller passes the clock.
#include <map>
#include <string>
#include <vector>

#include "kai/core/usage/usage_store.h"

namespace kai::usage {

struct HistoryLimits {
  // A silence longer than this (the scheduler was down) is not bridged: the amount held before it
  // is not assumed to have lasted through it.
  int64_t max_gap_seconds = 300;
  // Per series (one per queue, one for the capacity). Merging keeps each merged pair's
  // resource-seconds, so the undecayed usage is unchanged; only its spread in time coarsens.
  size_t max_intervals_per_series = 1024;
};

// One queue's (or the capacity's) intervals, in time order. `open`: the last one is the amount
// held at the last sample, which the next sample extends.
struct Series {
  std::vector<Interval> intervals;
  bool open = false;
  friend bool operator==(const Series&, const Series&) = default;
};

class UsageHistory {
 public:
  explicit UsageHistory(HistoryLimits limits = {}) : limits_(limits) {}

  // One sample at `now`: every queue's allocation (a queue absent holds nothing) and the
  // cluster's capacity; `window_seconds` bounds what is kept. A sample older than the last one (a
  // clock stepped back) is ignored.
  void Record(UnixSeconds now, const std::map<std::string, Resources>& allocated,
              const Resources& capacity, int64_t window_seconds);

  // Normalised usage of every queue with allocations in the window (as UsageStore::Usage).
  std::map<std::string, QueueUsage> Usage(UnixSeconds now, const UsageParams& params) const;
  // The history as a UsageStore (kai queues --usage-dir reads it through the simulator's path).
  UsageStore ToStore(const UsageParams& params) const;

  // What the file store (history_format.h) writes and restores.
  UnixSeconds last_sample() const { return last_sample_; }
  const std::map<std::string, Series>& allocations() const { return queues_; }
  const Series& capacity() const { return capacity_; }
  void Restore(UnixSeconds last_sample, std::map<std::string, Series> queues, Series capacity);
  size_t interval_count() const;

 private:
  void Sample(Series& series, UnixSeconds now, const Resources& amount, bool continuous) const;
  void Bound(Series& series, UnixSeconds now, int64_t window_seconds) const;

  HistoryLimits limits_;
  UnixSeconds last_sample_ = -1;  // -1: no sample yet
  std::map<std::string, Series> queues_;
  Series capacity_;
};

// Whether two amounts agree in cpu, memory and gpu (the only resources the history keeps).
bool SameAmount(const Resources& a, const Resources& b);

}  // namespace kai::usage
