#include "kai/cmd/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kai::cmd {
namespace {

// The logger options a daemon gets from `args` (its defaults: --v 3, capital levels).
Result<serve::LogOptions> Parse(std::vector<std::string> args) {
  CLI::App app;
  LogFlags flags;
  flags.Add(&app, 3, true);
  std::vector<const char*> argv{"kai"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return flags.Options();
}

TEST(LogFlags, DefaultsAreConsoleAtTheComponentsVerbosity) {
  auto o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->json);
  EXPECT_EQ(o->verbosity, 3);
  EXPECT_TRUE(o->capital_levels);
  EXPECT_EQ(o->min_level, serve::LogLevel::kDebug);
}

TEST(LogFlags, KaiSchedulerFlags) {
  auto o = Parse({"--v", "5", "--log-json"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->verbosity, 5);
}

TEST(LogFlags, ControllerRuntimeProductionModeLogsJson) {
  // KAI's operator passes --zap-devel=false to its controller-runtime components for JSON logs.
  EXPECT_TRUE(Parse({"--zap-devel=false"})->json);
  EXPECT_FALSE(Parse({"--zap-devel=false", "--zap-encoder", "console"})->json);
  EXPECT_TRUE(Parse({"--zap-encoder=json"})->json);
}

TEST(LogFlags, ZapLogLevels) {
  EXPECT_EQ(Parse({"--v", "0", "--zap-log-level", "debug"})->verbosity, 1);
  EXPECT_EQ(Parse({"--zap-log-level", "7"})->verbosity, 7);
  EXPECT_EQ(Parse({"--zap-log-level", "error"})->min_level, serve::LogLevel::kError);
  EXPECT_EQ(Parse({"--zap-log-level", "info"})->verbosity, 3);
  auto bad = Parse({"--zap-log-level", "loud"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--zap-log-level"), std::string::npos);
  EXPECT_NE(bad.error().message.find("\"loud\""), std::string::npos);
  EXPECT_FALSE(Parse({"--zap-log-level", "11"}).ok());
}

TEST(LogFlags, OutOfRangeVerbosityIsRefusedByTheParser) {
  EXPECT_THROW(Parse({"--v", "11"}), CLI::ValidationError);
  EXPECT_THROW(Parse({"--zap-encoder", "xml"}), CLI::ValidationError);
}

}  // namespace
}  // namespace kai::cmd
