#include "kai/core/usage/history.h"

#include <gtest/gtest.h>

namespace kai::usage {
namespace {

constexpr UnixSeconds kT0 = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kHour = 3600;
constexpr int64_t kWeek = 7 * 24 * kHour;

Resources Gpu(int64_t milli) {
  Resources r;
  r.milli_gpu = milli;
  return r;
}

const Resources kCapacity = Gpu(10000);  // 10 GPUs

TEST(UsageHistoryTest, EqualSamplesCoalesceIntoOneIntervalThatHoldsUntilTheLastSample) {
  UsageHistory h;
  for (int i = 0; i <= 60; ++i) h.Record(kT0 + i, {{"a", Gpu(2000)}}, kCapacity, kWeek);
  ASSERT_EQ(h.allocations().at("a").intervals.size(), 1u);
  EXPECT_EQ(h.allocations().at("a").intervals[0].start, kT0);
  EXPECT_EQ(h.allocations().at("a").intervals[0].duration_seconds, 60);
  ASSERT_EQ(h.capacity().intervals.size(), 1u);
  EXPECT_EQ(h.capacity().intervals[0].duration_seconds, 60);
}

TEST(UsageHistoryTest, AChangeClosesTheIntervalAtTheSampleAndAbsenceMeansNothingHeld) {
  UsageHistory h;
  h.Record(kT0, {{"a", Gpu(2000)}}, kCapacity, kWeek);
  h.Record(kT0 + 10, {{"a", Gpu(3000)}}, kCapacity, kWeek);
  h.Record(kT0 + 30, {}, kCapacity, kWeek);  // the queue released everything
  h.Record(kT0 + 40, {}, kCapacity, kWeek);
  const auto& a = h.allocations().at("a").intervals;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].duration_seconds, 10);
  EXPECT_EQ(a[0].amount.milli_gpu, 2000);
  EXPECT_EQ(a[1].start, kT0 + 10);
  EXPECT_EQ(a[1].duration_seconds, 20);
  EXPECT_EQ(a[1].amount.milli_gpu, 3000);
  // 2 GPUs x 10 s + 3 GPUs x 20 s over 10 GPUs x 40 s.
  EXPECT_DOUBLE_EQ(h.Usage(kT0 + 40, {0, kWeek}).at("a")[2], (20.0 + 60.0) / 400.0);
}

TEST(UsageHistoryTest, ALongSilenceIsNotBridged) {
  UsageHistory h(HistoryLimits{.max_gap_seconds = 300});
  h.Record(kT0, {{"a", Gpu(1000)}}, kCapacity, kWeek);
  h.Record(kT0 + 100, {{"a", Gpu(1000)}}, kCapacity, kWeek);
  h.Record(kT0 + 1100, {{"a", Gpu(1000)}}, kCapacity, kWeek);  // down for 1000 s
  const auto& a = h.allocations().at("a").intervals;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].duration_seconds, 100);
  EXPECT_EQ(a[1].start, kT0 + 1100);
}

TEST(UsageHistoryTest, SamplesInTheSameSecondReplaceEachOtherAndAnEarlierOneIsIgnored) {
  UsageHistory h;
  h.Record(kT0, {{"a", Gpu(1000)}}, kCapacity, kWeek);
  h.Record(kT0, {{"a", Gpu(2000)}}, kCapacity, kWeek);
  h.Record(kT0 - 50, {{"a", Gpu(5000)}}, kCapacity, kWeek);  // the clock stepped back
  ASSERT_EQ(h.allocations().at("a").intervals.size(), 1u);
  EXPECT_EQ(h.allocations().at("a").intervals[0].amount.milli_gpu, 2000);
  EXPECT_EQ(h.last_sample(), kT0);
}

TEST(UsageHistoryTest, IntervalsThatLeftTheWindowAreDroppedAndAnEmptyQueueGoes) {
  UsageHistory h;
  h.Record(kT0, {{"a", Gpu(1000)}}, kCapacity, kHour);
  h.Record(kT0 + 60, {{"b", Gpu(1000)}}, kCapacity, kHour);
  for (UnixSeconds t = kT0 + 120; t <= kT0 + 2 * kHour; t += 60) {
    h.Record(t, {{"b", Gpu(1000)}}, kCapacity, kHour);
  }
  EXPECT_EQ(h.allocations().count("a"), 0u);
  EXPECT_EQ(h.allocations().count("b"), 1u);
}

// Months of a busy cluster: the allocation changes every cycle. The history stays within its
// bound, and merging keeps the resource-seconds of what it merged.
TEST(UsageHistoryTest, AMonthOfChangesEveryCycleStaysBounded) {
  const HistoryLimits limits{.max_gap_seconds = 300, .max_intervals_per_series = 256};
  UsageHistory h(limits);
  const int64_t window = 30 * 24 * kHour;
  size_t most = 0;
  for (int64_t i = 0; i < 90LL * 24 * 360; ++i) {  // every 10 s for 90 days
    const UnixSeconds t = kT0 + i * 10;
    h.Record(t, {{"a", Gpu(1000 + (i % 7) * 1000)}, {"b", Gpu(500)}}, kCapacity, window);
    most = std::max(most, h.interval_count());
  }
  EXPECT_LE(most, 3 * limits.max_intervals_per_series);
  EXPECT_EQ(h.allocations().at("b").intervals.size(), 1u);  // a constant series stays one interval
  // a's mean is 4 GPUs (1..7): its usage over the window is near 4/10 of the capacity.
  EXPECT_NEAR(h.Usage(kT0 + 90LL * 24 * 3600, {0, window}).at("a")[2], 0.4, 0.01);
}

TEST(UsageHistoryTest, UsageDecaysWithTheHalfLife) {
  UsageHistory h;
  for (UnixSeconds t = kT0; t <= kT0 + 2 * kHour; t += 60) {
    std::map<std::string, Resources> held;
    if (t < kT0 + kHour) held["a"] = Gpu(10000);
    h.Record(t, held, kCapacity, kWeek);
  }
  // Without decay: 1 hour of the whole cluster in 2 hours.
  EXPECT_DOUBLE_EQ(h.Usage(kT0 + 2 * kHour, {0, kWeek}).at("a")[2], 0.5);
  // With a half-life, the older hour weighs less than the recent one.
  EXPECT_LT(h.Usage(kT0 + 2 * kHour, {kHour, kWeek}).at("a")[2], 0.5);
}

}  // namespace
}  // namespace kai::usage
