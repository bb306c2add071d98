#include "kai/core/usage/usage_store.h"
#include "kai/kube/io/usage_file.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "kai/core/util/time.h"

namespace kai::usage {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kHour = 3600;
constexpr int64_t kGpu = 1000;

Resources Gpus(int64_t milli_gpu, int64_t milli_cpu = 0, int64_t memory = 0) {
  Resources r;
  r.milli_gpu = milli_gpu;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  return r;
}

UsageParams Window(int64_t window_hours, int64_t half_life_hours = 0) {
  return UsageParams{.half_life_seconds = half_life_hours * kHour,
                     .window_seconds = window_hours * kHour};
}

// ---------------------------------------------------------------------------------------------
// DecayedSeconds.

TEST(DecayedSecondsTest, WithoutDecayAnIntervalInsideTheWindowCountsItsLength) {
  // [now-5h, now-3h) lies inside a 10h window: 2h = 7200 s.
  EXPECT_DOUBLE_EQ(DecayedSeconds(kNow - 5 * kHour, 2 * kHour, kNow, Window(10)), 7200.0);
}

TEST(DecayedSecondsTest, WindowClipsTheOldEndAndNowClipsTheFutureEnd) {
  // [now-12h, now-8h) in a 10h window: only [now-10h, now-8h) counts = 2h.
  EXPECT_DOUBLE_EQ(DecayedSeconds(kNow - 12 * kHour, 4 * kHour, kNow, Window(10)), 2.0 * kHour);
  // [now-1h, now+1h): only [now-1h, now) counts = 1h.
  EXPECT_DOUBLE_EQ(DecayedSeconds(kNow - 1 * kHour, 2 * kHour, kNow, Window(10)), 1.0 * kHour);
  // Entirely before the window, entirely in the future, or empty: 0.
  EXPECT_EQ(DecayedSeconds(kNow - 20 * kHour, 5 * kHour, kNow, Window(10)), 0.0);
  EXPECT_EQ(DecayedSeconds(kNow + 1 * kHour, 5 * kHour, kNow, Window(10)), 0.0);
  EXPECT_EQ(DecayedSeconds(kNow - 5 * kHour, 0, kNow, Window(10)), 0.0);
  // Ending exactly where the window starts: 0.
  EXPECT_EQ(DecayedSeconds(kNow - 12 * kHour, 2 * kHour, kNow, Window(10)), 0.0);
}

TEST(DecayedSecondsTest, HalfLifeWeighsEachInstantByTwoToTheMinusAgeOverHalfLife) {
  // h = 10h, [now-10h, now): integral of 2^(-(now-t)/h) = h/ln2 * (2^0 - 2^-1)
  //   = 10h / 0.693147 * 0.5 = 7.2135 h.
  const double h = 10.0 * kHour;
  EXPECT_NEAR(DecayedSeconds(kNow - 10 * kHour, 10 * kHour, kNow, Window(24, 10)),
              h / std::log(2.0) * 0.5, 1e-6);
  EXPECT_NEAR(DecayedSeconds(kNow - 10 * kHour, 10 * kHour, kNow, Window(24, 10)) / kHour, 7.2135,
              1e-4);
  // An interval one half-life older weighs half as much: [now-20h, now-10h) = 3.6067 h.
  EXPECT_NEAR(DecayedSeconds(kNow - 20 * kHour, 10 * kHour, kNow, Window(24, 10)),
              h / std::log(2.0) * 0.25, 1e-6);
  // Decay and clipping together: [now-30h, now-20h) in a 24h window keeps [now-24h, now-20h):
  //   h/ln2 * (2^-2 - 2^-2.4).
  EXPECT_NEAR(DecayedSeconds(kNow - 30 * kHour, 10 * kHour, kNow, Window(24, 10)),
              h / std::log(2.0) * (0.25 - std::exp2(-2.4)), 1e-6);
  // A very long half-life tends to no decay.
  EXPECT_NEAR(DecayedSeconds(kNow - 2 * kHour, kHour, kNow, Window(24, 1'000'000)), 1.0 * kHour,
              0.01);
}

// ---------------------------------------------------------------------------------------------
// Usage.

TEST(UsageStoreTest, UsageIsGpuHoursOverCapacityHours) {
  // Capacity 10 GPUs x 10h = 100 GPU-hours. team-a: 4 GPUs x 6h = 24 -> 0.24.
  // team-b: 2 GPUs x 3h + 1 GPU x 4h = 10 -> 0.10 (intervals of a queue add up).
  UsageStore store;
  store.RecordCapacity({kNow - 10 * kHour, 10 * kHour, Gpus(10 * kGpu, 100'000, 1000)});
  store.RecordAllocation("team-a", {kNow - 10 * kHour, 6 * kHour, Gpus(4 * kGpu)});
  store.RecordAllocation("team-b", {kNow - 8 * kHour, 3 * kHour, Gpus(2 * kGpu, 50'000)});
  store.RecordAllocation("team-b", {kNow - 4 * kHour, 4 * kHour, Gpus(1 * kGpu, 0, 500)});
  const auto u = store.Usage(kNow, Window(10));
  ASSERT_EQ(u.size(), 2u);
  // Order in QueueUsage: cpu, memory, gpu.
  EXPECT_NEAR(u.at("team-a")[2], 0.24, 1e-12);
  EXPECT_NEAR(u.at("team-b")[2], 0.10, 1e-12);
  // cpu and memory are normalised each against their own capacity:
  //   team-b cpu 50 cores x 3h / (100 cores x 10h) = 0.15; memory 500 x 4h / (1000 x 10h) = 0.2.
  EXPECT_NEAR(u.at("team-b")[0], 0.15, 1e-12);
  EXPECT_NEAR(u.at("team-b")[1], 0.20, 1e-12);
  EXPECT_EQ(u.at("team-a")[0], 0.0);
}

TEST(UsageStoreTest, QueuesWithoutAllocationsAreAbsentAndZeroCapacityGivesZero) {
  UsageStore store;
  EXPECT_TRUE(store.empty());
  store.RecordCapacity({kNow - 10 * kHour, 10 * kHour, Gpus(8 * kGpu)});  // no cpu capacity
  store.RecordAllocation("a", {kNow - 2 * kHour, kHour, Gpus(0, 4000)});
  EXPECT_FALSE(store.empty());
  const auto u = store.Usage(kNow, Window(10));
  EXPECT_EQ(u.count("b"), 0u);
  EXPECT_EQ(u.at("a")[0], 0.0);  // cpu used, but no cpu capacity recorded: 0, never inf/NaN
  EXPECT_EQ(u.at("a")[2], 0.0);
}

TEST(UsageStoreTest, UsageOutsideTheWindowIsForgotten) {
  // A 24-GPU-hour burst 20h ago does not count in a 10h window; 1 GPU for the last 5h does:
  // 5 / (10 x 10) = 0.05.
  UsageStore store;
  store.RecordCapacity({kNow - 30 * kHour, 30 * kHour, Gpus(10 * kGpu)});
  store.RecordAllocation("a", {kNow - 22 * kHour, 2 * kHour, Gpus(10 * kGpu)});
  store.RecordAllocation("a", {kNow - 5 * kHour, 5 * kHour, Gpus(1 * kGpu)});
  EXPECT_NEAR(store.Usage(kNow, Window(10)).at("a")[2], 0.05, 1e-12);
  // In a 30h window it counts: (20 + 5) / (10 x 30) = 0.08333.
  EXPECT_NEAR(store.Usage(kNow, Window(30)).at("a")[2], 25.0 / 300.0, 1e-12);
}

TEST(UsageStoreTest, DecayMakesOlderUsageWeighLess) {
  // Same GPU-hours, one queue early in the window, one late: with a half-life the late one
  // scores higher; without, they are equal (0.24 each).
  UsageStore store;
  store.RecordCapacity({kNow - 10 * kHour, 10 * kHour, Gpus(10 * kGpu)});
  store.RecordAllocation("early", {kNow - 10 * kHour, 6 * kHour, Gpus(4 * kGpu)});
  store.RecordAllocation("late", {kNow - 6 * kHour, 6 * kHour, Gpus(4 * kGpu)});
  const auto flat = store.Usage(kNow, Window(10));
  EXPECT_NEAR(flat.at("early")[2], 0.24, 1e-12);
  EXPECT_NEAR(flat.at("late")[2], 0.24, 1e-12);
  // h = 5h: early = 0.4 (2^-0.8 - 2^-2) / (1 - 2^-2) = 0.17299;
  //         late  = 0.4 (2^0 - 2^-1.2) / (1 - 2^-2)  = 0.30236.
  const auto decayed = store.Usage(kNow, Window(10, 5));
  EXPECT_NEAR(decayed.at("early")[2], 0.4 * (std::exp2(-0.8) - 0.25) / 0.75, 1e-12);
  EXPECT_NEAR(decayed.at("late")[2], 0.4 * (1 - std::exp2(-1.2)) / 0.75, 1e-12);
  EXPECT_LT(decayed.at("early")[2], decayed.at("late")[2]);
}

// ---------------------------------------------------------------------------------------------
// LoadUsageFile.

class UsageFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::path(::testing::TempDir()) /
             ("kai-usage-" + std::to_string(::getpid()) + "-" + info->name() + ".yaml"))
                .string();
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::string Error(const std::string& text) {
    auto r = LoadUsageFile(Write(text));
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : r.error().message;
  }

  std::string path_;
};

TEST_F(UsageFileTest, GoodFileLoadsParamsCapacityAndAllocations) {
  const std::string path = Write(R"(
usageParams: {halfLifePeriod: 5h, windowSize: 10h}
capacity:
  - {start: "2025-01-01T02:00:00Z", duration: 10h, gpu: "10", cpu: "100", memory: 1Ti}
allocations:
  - {queue: team-a, start: "2025-01-01T02:00:00Z", duration: 6h, gpu: "4"}
  - {queue: team-b, start: "2025-01-01T11:00:00Z", duration: 30m, gpu: "500m", cpu: 2500m}
)");
  auto store = LoadUsageFile(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store->params().half_life_seconds, 5 * kHour);
  EXPECT_EQ(store->params().window_seconds, 10 * kHour);
  // Without decay: team-a 24/100 = 0.24; team-b 0.5 GPU x 0.5h / 100 = 0.0025,
  //   cpu 2.5 cores x 0.5h / (100 x 10h) = 0.00125.
  const auto flat = store->Usage(kNow, Window(10));
  EXPECT_NEAR(flat.at("team-a")[2], 0.24, 1e-12);
  EXPECT_NEAR(flat.at("team-b")[2], 0.0025, 1e-12);
  EXPECT_NEAR(flat.at("team-b")[0], 0.00125, 1e-12);
  // With the file's own parameters (h = 5h): 0.172986 (see DecayMakesOlderUsageWeighLess).
  EXPECT_NEAR(store->Usage(kNow, store->params()).at("team-a")[2],
              0.4 * (std::exp2(-0.8) - 0.25) / 0.75, 1e-12);
}

TEST_F(UsageFileTest, DefaultsAreNoDecayAndAOneWeekWindow) {
  auto store = LoadUsageFile(Write(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "1"}
)"));
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store->params().half_life_seconds, 0);
  EXPECT_EQ(store->params().window_seconds, 7 * 24 * kHour);
  EXPECT_TRUE(store->empty());
}

TEST_F(UsageFileTest, BadDurationNamesTheField) {
  const std::string e = Error(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 10h, gpu: "1"}
allocations:
  - {queue: a, start: "2025-01-01T00:00:00Z", duration: ten hours, gpu: "1"}
)");
  EXPECT_NE(e.find("allocations[0]: duration"), std::string::npos) << e;
  EXPECT_NE(e.find("ten hours"), std::string::npos) << e;
}

TEST_F(UsageFileTest, NegativeDurationAndBadHalfLifeAreRejected) {
  EXPECT_NE(Error(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: -1h, gpu: "1"}
)")
                .find("capacity[0]: duration"),
            std::string::npos);
  const std::string e = Error(R"(
usageParams: {halfLifePeriod: soon}
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "1"}
)");
  EXPECT_NE(e.find("usageParams: halfLifePeriod"), std::string::npos) << e;
}

TEST_F(UsageFileTest, NegativeGpuNamesTheField) {
  const std::string e = Error(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 10h, gpu: "1"}
allocations:
  - {queue: a, start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "-1"}
)");
  EXPECT_NE(e.find("allocations[0]: gpu"), std::string::npos) << e;
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
}

TEST_F(UsageFileTest, MalformedQuantityNamesTheField) {
  const std::string e = Error(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 10h, memory: lots}
)");
  EXPECT_NE(e.find("capacity[0]: memory"), std::string::npos) << e;
}

TEST_F(UsageFileTest, MissingQueueNamesTheField) {
  const std::string e = Error(R"(
capacity:
  - {start: "2025-01-01T00:00:00Z", duration: 10h, gpu: "1"}
allocations:
  - {queue: a, start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "1"}
  - {start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "1"}
)");
  EXPECT_NE(e.find("allocations[1]: queue: missing"), std::string::npos) << e;
}

TEST_F(UsageFileTest, BadOrMissingStartNamesTheField) {
  EXPECT_NE(Error(R"(
capacity:
  - {start: yesterday, duration: 10h, gpu: "1"}
)")
                .find("capacity[0]: start"),
            std::string::npos);
  EXPECT_NE(Error(R"(
capacity:
  - {duration: 10h, gpu: "1"}
)")
                .find("capacity[0]: start: missing"),
            std::string::npos);
}

TEST_F(UsageFileTest, MissingCapacityIsAnError) {
  const std::string e = Error(R"(
allocations:
  - {queue: a, start: "2025-01-01T00:00:00Z", duration: 1h, gpu: "1"}
)");
  EXPECT_NE(e.find("capacity"), std::string::npos) << e;
}

TEST(UsageFileMissingTest, UnreadableFileIsAnErrorNamingThePath) {
  auto r = LoadUsageFile("/nonexistent/kai-usage.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/kai-usage.yaml"), std::string::npos);
}

}  // namespace
}  // namespace kai::usage
