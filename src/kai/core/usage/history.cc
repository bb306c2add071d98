#include "kai/core/usage/history.h"

#include <algorithm>

namespace kai::usage {
namespace {

UnixSeconds End(const Interval& in) { return in.start + in.duration_seconds; }

bool IsZero(const Resources& r) { return r.milli_cpu == 0 && r.memory == 0 && r.milli_gpu == 0; }

Resources CoreOnly(const Resources& r) {
  Resources out;
  out.milli_cpu = r.milli_cpu;
  out.memory = r.memory;
  out.milli_gpu = r.milli_gpu;
  return out;
}

// One interval spanning both, holding their resource-seconds (the time between them, if any,
// shares them too). 128-bit products: bytes times seconds overflow 64 bits within a week.
Interval Merge(const Interval& a, const Interval& b) {
  Interval m;
  m.start = a.start;
  m.duration_seconds = End(b) - a.start;
  if (m.duration_seconds <= 0) return m;
  for (CoreResource r : {CoreResource::kCpu, CoreResource::kMemory, CoreResource::kGpu}) {
    const __int128 total = static_cast<__int128>(a.amount.Get(r)) * a.duration_seconds +
                           static_cast<__int128>(b.amount.Get(r)) * b.duration_seconds;
    m.amount.Mutable(r) = static_cast<int64_t>(total / m.duration_seconds);
  }
  return m;
}

}  // namespace

bool SameAmount(const Resources& a, const Resources& b) {
  return a.milli_cpu == b.milli_cpu && a.memory == b.memory && a.milli_gpu == b.milli_gpu;
}

void UsageHistory::Sample(Series& s, UnixSeconds now, const Resources& amount,
                          bool continuous) const {
  std::vector<Interval>& in = s.intervals;
  if (s.open && continuous) {
    Interval& last = in.back();
    last.duration_seconds = now - last.start;  // the amount held until this sample
    if (SameAmount(last.amount, amount)) return;
    if (last.duration_seconds == 0) in.pop_back();  // a sample in the same second replaces it
  } else if (s.open && in.back().duration_seconds == 0) {
    in.pop_back();  // a lone sample before a silence covers no time
  }
  s.open = !IsZero(amount);
  if (s.open) in.push_back({now, 0, CoreOnly(amount)});
}

void UsageHistory::Bound(Series& s, UnixSeconds now, int64_t window_seconds) const {
  const UnixSeconds oldest = now - window_seconds;
  std::vector<Interval>& in = s.intervals;
  const size_t keep_last = s.open ? 1 : 0;  // the open interval is kept, however old its start
  const auto old_end = std::remove_if(in.begin(), in.end() - keep_last,
                                      [&](const Interval& i) { return End(i) <= oldest; });
  in.erase(old_end, in.end() - keep_last);
  if (in.size() <= limits_.max_intervals_per_series) return;
  // Halve the older half: the recent intervals, which weigh most under decay, stay exact.
  const size_t merge = in.size() / 2;
  std::vector<Interval> out;
  out.reserve(in.size());
  size_t i = 0;
  for (; i + 1 < merge; i += 2) out.push_back(Merge(in[i], in[i + 1]));
  for (; i < in.size(); ++i) out.push_back(in[i]);
  in = std::move(out);
}

void UsageHistory::Record(UnixSeconds now, const std::map<std::string, Resources>& allocated,
                          const Resources& capacity, int64_t window_seconds) {
  if (last_sample_ >= 0 && now < last_sample_) return;
  const bool continuous = last_sample_ >= 0 && now - last_sample_ <= limits_.max_gap_seconds;
  static const Resources kNothing;
  for (auto& [queue, series] : queues_) {
    auto it = allocated.find(queue);
    Sample(series, now, it == allocated.end() ? kNothing : it->second, continuous);
  }
  for (const auto& [queue, amount] : allocated) {
    if (!queues_.count(queue) && !IsZero(amount)) Sample(queues_[queue], now, amount, continuous);
  }
  Sample(capacity_, now, capacity, continuous);
  last_sample_ = now;
  for (auto& [queue, series] : queues_) Bound(series, now, window_seconds);
  std::erase_if(queues_, [](const auto& kv) { return kv.second.intervals.empty(); });
  Bound(capacity_, now, window_seconds);
}

std::map<std::string, QueueUsage> UsageHistory::Usage(UnixSeconds now,
                                                      const UsageParams& params) const {
  const QueueUsage capacity = WeightedAmount(capacity_.intervals, now, params);
  std::map<std::string, QueueUsage> out;
  for (const auto& [queue, series] : queues_) {
    const QueueUsage used = WeightedAmount(series.intervals, now, params);
    QueueUsage& u = out[queue];
    for (size_t i = 0; i < u.size(); ++i) u[i] = capacity[i] > 0 ? used[i] / capacity[i] : 0;
  }
  return out;
}

UsageStore UsageHistory::ToStore(const UsageParams& params) const {
  UsageStore store;
  store.set_params(params);
  for (const auto& [queue, series] : queues_) {
    for (const Interval& in : series.intervals) store.RecordAllocation(queue, in);
  }
  for (const Interval& in : capacity_.intervals) store.RecordCapacity(in);
  return store;
}

void UsageHistory::Restore(UnixSeconds last_sample, std::map<std::string, Series> queues,
                           Series capacity) {
  last_sample_ = last_sample;
  queues_ = std::move(queues);
  capacity_ = std::move(capacity);
}

size_t UsageHistory::interval_count() const {
  size_t n = capacity_.intervals.size();
  for (const auto& [queue, series] : queues_) n += series.intervals.size();
  return n;
}

}  // namespace kai::usage
