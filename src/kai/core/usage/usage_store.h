#pragma once
// Time-based fair share: a record of what each queue held over time, turned into a normalised
// usage per resource (kai-semantics.md §3.8):
//   U(queue, r) = sum over the window of decay(t) * allocated(t) / sum of decay(t) * capacity(t),
//   decay(t) = 0.5 ^ ((now - t) / half_life)   (no decay when half_life is 0).
// Example: 24 GPU-hours used in a 10-GPU cluster over a 10-hour window scores 0.24.
// Usage only shrinks a queue's over-quota share (through kValue); deserved quota is never affected.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "kai/core/resource/resources.h"
#include "kai/core/util/result.h"
#include "kai/core/util/time.h"

namespace kai::usage {

// cpu, memory, gpu, in that order (the order of proportion::kQueueResources).
using QueueUsage = std::array<double, 3>;

struct UsageParams {
  int64_t half_life_seconds = 0;           // 0: no decay
  int64_t window_seconds = 7 * 24 * 3600;  // KAI's default window: one week
};

struct Interval {
  UnixSeconds start = 0;
  int64_t duration_seconds = 0;
  Resources amount;
  friend bool operator==(const Interval&, const Interval&) = default;
};

class UsageStore {
 public:
  void RecordAllocation(const std::string& queue, Interval interval);
  void RecordCapacity(Interval interval);
  // Normalised usage of every queue that has allocations in the window.
  std::map<std::string, QueueUsage> Usage(UnixSeconds now, const UsageParams& params) const;
  const UsageParams& params() const { return params_; }
  void set_params(UsageParams p) { params_ = p; }
  bool empty() const { return allocations_.empty(); }

 private:
  UsageParams params_;
  std::vector<std::pair<std::string, Interval>> allocations_;
  std::vector<Interval> capacity_;
};

// Weight of [start, start + duration) at `now`: its overlap with the window, each instant t
// weighted by 0.5 ^ ((now - t) / half_life). In seconds.
double DecayedSeconds(UnixSeconds start, int64_t duration, UnixSeconds now, const UsageParams& p);

// Sum over `intervals` of DecayedSeconds times the amount, per resource (cpu, memory, gpu).
QueueUsage WeightedAmount(const std::vector<Interval>& intervals, UnixSeconds now,
                          const UsageParams& p);

// Parses a usage history (the text of a usage file; `source` names it in errors):
//   usageParams: {halfLifePeriod: 12h, windowSize: 168h}
//   capacity:    [{start: RFC3339, duration: 10h, gpu: "10", cpu: "100", memory: 1Ti}]
//   allocations: [{queue: team-a, start: RFC3339, duration: 2h, gpu: "4"}]
// The front ends read the file (io/usage_file.h).
Result<UsageStore> ParseUsage(const std::string& text, const std::string& source);

}  // namespace kai::usage
