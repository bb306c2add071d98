#include "kai/core/whatif/trace.h"

#include <gtest/gtest.h>

#include "kai/core/whatif/rng.h"

namespace kai::whatif {
namespace {

TEST(WhatIfTrace, ParsesColumnsInAnyOrderWithDefaults) {
  const auto jobs = ParseTraceCsv(
      "# a comment\n"
      "queue,submit,duration,gpu,pods,name\n"
      "team-a,1h,30m,2,4,big\n"
      "\n"
      "team-b,90,1d,0.5,,\n",
      "t.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 2u);
  const TraceJob& b = (*jobs)[0];  // sorted by submit: 90 s first
  EXPECT_EQ(b.submit, 90);
  EXPECT_EQ(b.duration, 86400);
  EXPECT_EQ(b.gpu_milli, 500);
  EXPECT_EQ(b.pods, 1);
  EXPECT_EQ(b.min_member, 1);
  EXPECT_EQ(b.ns, "team-b");
  EXPECT_EQ(b.name, "job-5");
  const TraceJob& a = (*jobs)[1];
  EXPECT_EQ(a.name, "big");
  EXPECT_EQ(a.submit, 3600);
  EXPECT_EQ(a.gpu_milli, 2000);
  EXPECT_EQ(a.min_member, 4);
}

TEST(WhatIfTrace, ErrorsNameLineColumnAndField) {
  const char* header = "submit,duration,queue,gpu\n";
  auto e = ParseTraceCsv(std::string(header) + "0,soon,q,1\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message.rfind("t.csv:2:2 (duration): expected a duration", 0), 0u)
      << e.error().message;
  e = ParseTraceCsv(std::string(header) + "0,1,q,1.5\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("t.csv:2:4 (gpu)"), std::string::npos) << e.error().message;
  e = ParseTraceCsv(std::string(header) + "0,1,q\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("t.csv:2: 3 fields, the header has 4"), std::string::npos);
  e = ParseTraceCsv("submit,duration,queue,gpu,colour\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("t.csv:1:5: unknown column \"colour\""), std::string::npos);
  e = ParseTraceCsv("submit,duration,gpu\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("no \"queue\" column"), std::string::npos);
  e = ParseTraceCsv("submit,duration,queue,gpu,pods,min_member\n0,1,q,1,2,3\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("(min_member): 3 exceeds pods (2)"), std::string::npos);
  e = ParseTraceCsv("name,submit,duration,queue,gpu\nx,0,1,q,1\nx,0,1,q,1\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("t.csv:3: job q/x repeats line 2"), std::string::npos);
}

TEST(WhatIfTrace, SpansAcceptSecondsGoDurationsAndDays) {
  EXPECT_EQ(ParseSpan("90"), 90);
  EXPECT_EQ(ParseSpan("1h30m"), 5400);
  EXPECT_EQ(ParseSpan("7d"), 7 * 86400);
  EXPECT_EQ(ParseSpan("1d12h"), 36 * 3600);
  EXPECT_FALSE(ParseSpan("soon").has_value());
  EXPECT_FALSE(ParseSpan("").has_value());
}

constexpr const char* kSpec = R"(duration: 2d
queues:
- queue: team-a
  arrivalsPerHour: 3
  pods: {"1": 3, "4": 1}
  gpu: {"1": 1, "0.25": 1}
  runtime: {distribution: exponential, mean: 2h, max: 1d}
- queue: team-b
  namespace: b-ns
  priorityClass: train
  arrivalsPerHour: 1
  gpu: 8
  minMember: 1
  runtime: {distribution: lognormal, median: 30m, sigma: 1}
)";

TEST(WhatIfTrace, GeneratorIsSeededAndDeterministic) {
  const auto a = GenerateTrace(kSpec, "g.yaml", 7);
  const auto b = GenerateTrace(kSpec, "g.yaml", 7);
  const auto c = GenerateTrace(kSpec, "g.yaml", 8);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  // About 3 + 1 jobs an hour for 48 hours.
  EXPECT_GT(a->size(), 120u);
  EXPECT_LT(a->size(), 260u);
  for (const TraceJob& j : *a) {
    EXPECT_GE(j.submit, 0);
    EXPECT_LT(j.submit, 2 * 86400);
    EXPECT_GE(j.duration, 1);
    if (j.queue == "team-a") {
      EXPECT_TRUE(j.pods == 1 || j.pods == 4);
      EXPECT_TRUE(j.gpu_milli == 1000 || j.gpu_milli == 250);
      EXPECT_LE(j.duration, 86400);
    } else {
      EXPECT_EQ(j.ns, "b-ns");
      EXPECT_EQ(j.priority_class, "train");
      EXPECT_EQ(j.gpu_milli, 8000);
      EXPECT_EQ(j.min_member, 1);
    }
  }
  for (size_t i = 1; i < a->size(); ++i) EXPECT_LE((*a)[i - 1].submit, (*a)[i].submit);
}

TEST(WhatIfTrace, GeneratorErrorsNameTheField) {
  auto e = GenerateTrace(
      "duration: 1d\nqueues:\n- queue: a\n  arrivalsPerHour: 1\n  gpu: 1\n"
      "  runtime: {distribution: pareto}\n",
      "g.yaml", 1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("g.yaml: queues[0].runtime.distribution"), std::string::npos)
      << e.error().message;
  e = GenerateTrace(
      "duration: 1d\nqueues:\n- queue: a\n  arrivalsPerHour: fast\n  gpu: 1\n"
      "  runtime: 1h\n",
      "g.yaml", 1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("queues[0].arrivalsPerHour"), std::string::npos);
}

TEST(WhatIfTrace, ParseTraceTellsSpecFromCsv) {
  EXPECT_TRUE(ParseTrace(kSpec, "g.yaml", 1).ok());
  const auto csv = ParseTrace("submit,duration,queue,gpu\n0,1,q,1\n", "t.csv", 1);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->size(), 1u);
}

TEST(WhatIfRng, FixedSequenceForASeed) {
  // std::mt19937_64's sequence is fixed by the standard, and these distributions are ours, so
  // the same seed gives the same draws everywhere.
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.Uniform01(), b.Uniform01());
  Rng r(1);
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = r.UniformInt(3, 5);
    EXPECT_GE(v, 3);
    EXPECT_LE(v, 5);
  }
  double sum = 0;
  for (int i = 0; i < 20000; ++i) sum += r.Exponential(10);
  EXPECT_NEAR(sum / 20000, 10, 0.5);
}

}  // namespace
}  // namespace kai::whatif
