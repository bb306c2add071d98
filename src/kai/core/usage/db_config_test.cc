#include "kai/core/usage/db_config.h"

#include <gtest/gtest.h>

namespace kai::usage {
namespace {

Result<std::optional<UsageDbConfig>> Parse(const std::string& yaml) {
  auto d = doc::ParseYaml(yaml);
  EXPECT_TRUE(d.ok());
  return ParseUsageDbConfig(d->Roots().at(0), "SchedulingShard default");
}

TEST(UsageDbConfigTest, AbsentIsNoneAndAnEmptyOneHasKaisDefaults) {
  auto none = Parse("partitionLabelValue: x\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  auto c = Parse("usageDBConfig: {clientType: prometheus}\n");
  ASSERT_TRUE(c.ok() && *c);
  EXPECT_EQ((*c)->params.window_seconds, 7 * 86400);
  EXPECT_EQ((*c)->params.half_life_seconds, 0);
  EXPECT_EQ((*c)->fetch_interval_seconds, 60);
  EXPECT_EQ((*c)->staleness_seconds, 300);
  EXPECT_EQ((*c)->query_timeout_millis, 10000);
  EXPECT_EQ((*c)->allocation_metrics[2], "kai_queue_allocated_gpus");
}

TEST(UsageDbConfigTest, UsageParamsAreRead) {
  auto c = Parse(R"(usageDBConfig:
  clientType: prometheus
  connectionString: http://prom:9090
  usageParams:
    halfLifePeriod: 12h
    windowSize: 2d12h
    windowType: sliding
    fetchInterval: 10m
    stalenessPeriod: 1m
    extraParams: {usageQueryTimeout: 3s, queryResolution: 30s, gpuAllocationMetric: my_gpus}
)");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ((*c)->connection_string, "http://prom:9090");
  EXPECT_EQ((*c)->params.half_life_seconds, 12 * 3600);
  EXPECT_EQ((*c)->params.window_seconds, 60 * 3600);
  EXPECT_EQ((*c)->window_text, "2d12h");
  EXPECT_EQ((*c)->fetch_interval_seconds, 600);
  EXPECT_EQ((*c)->staleness_seconds, 600);  // raised to the fetch interval, as KAI does
  EXPECT_EQ((*c)->query_timeout_millis, 3000);
  EXPECT_EQ((*c)->query_resolution_seconds, 30);
  EXPECT_EQ((*c)->allocation_metrics[2], "my_gpus");
}

TEST(UsageDbConfigTest, TumblingAndCronWindowsAndBadValuesAreRefusedNamingTheField) {
  EXPECT_EQ(Parse("usageDBConfig: {clientType: prometheus, usageParams: {windowType: tumbling}}")
                .error()
                .message,
            "SchedulingShard default: spec.usageDBConfig.usageParams.windowType: \"tumbling\" is "
            "not supported by kai (only sliding windows are)");
  EXPECT_NE(Parse("usageDBConfig: {clientType: p, usageParams: {windowSize: 1x}}")
                .error()
                .message.find("usageParams.windowSize: expected a duration such as 1w"),
            std::string::npos);
  EXPECT_NE(Parse("usageDBConfig: {clientType: p, usageParams: {halfLifePeriod: soon}}")
                .error()
                .message.find("usageParams.halfLifePeriod"),
            std::string::npos);
  EXPECT_NE(Parse("usageDBConfig: {clientType: p, connectionString: a, connectionStringEnvVar: b}")
                .error()
                .message.find("both set"),
            std::string::npos);
}

TEST(UsageDbConfigTest, PrometheusDurations) {
  EXPECT_EQ(ParsePrometheusDuration("1w"), 7 * 86400);
  EXPECT_EQ(ParsePrometheusDuration("1h30m"), 5400);
  EXPECT_EQ(ParsePrometheusDuration("90s"), 90);
  EXPECT_EQ(ParsePrometheusDuration("1500ms"), 1);
  EXPECT_EQ(ParsePrometheusDuration("0"), 0);
  EXPECT_FALSE(ParsePrometheusDuration("30m1h"));  // largest unit first
  EXPECT_FALSE(ParsePrometheusDuration("1h1h"));
  EXPECT_FALSE(ParsePrometheusDuration("h"));
  EXPECT_FALSE(ParsePrometheusDuration(""));
}

TEST(UsageDbConfigTest, TheQueryIsKaisSlidingWindowWithItsDecay) {
  UsageDbConfig c;
  EXPECT_EQ(SlidingWindowQuery(c, "kai_queue_allocated_gpus", 1000),
            "sum_over_time((kai_queue_allocated_gpus)[1w:60s])");
  c.params.half_life_seconds = 3600;
  EXPECT_EQ(SlidingWindowQuery(c, "m", 1000),
            "sum_over_time((((m) * (0.5^((1000 - time()) / 3600.000000))))[1w:60s])");
}

TEST(UsageDbConfigTest, VectorAnswersAndErrors) {
  auto v = ParseVectorAnswer(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"queue_name":"a"},"value":[1,"2.5"]},{"metric":{},"value":[1,"7"]}]}})");
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].queue, "a");
  EXPECT_DOUBLE_EQ((*v)[0].value, 2.5);
  EXPECT_DOUBLE_EQ((*v)[1].value, 7);
  EXPECT_EQ(ParseVectorAnswer(R"({"status":"error","errorType":"bad_data","error":"parse"})")
                .error()
                .message,
            "Prometheus query failed: bad_data: parse");
  EXPECT_FALSE(ParseVectorAnswer(R"({"status":"success","data":{"resultType":"matrix"}})").ok());
  EXPECT_FALSE(ParseVectorAnswer("<html>").ok());
}

}  // namespace
}  // namespace kai::usage
