#include "kai/kube/serve/log.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kai/core/util/time.h"

namespace kai::serve {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ParseLogLine, ComponentPrefixNamesTheComponent) {
  const LogRecord r = ParseLogLine("kai binder: bound default/p0 to n1", "run");
  EXPECT_EQ(r.component, "binder");
  EXPECT_EQ(r.message, "bound default/p0 to n1");
  EXPECT_EQ(r.level, LogLevel::kInfo);
}

TEST(ParseLogLine, BareKaiPrefixKeepsTheDefaultComponent) {
  const LogRecord r = ParseLogLine("kai: warning: no usage history yet\r", "scheduler");
  EXPECT_EQ(r.component, "scheduler");
  EXPECT_EQ(r.level, LogLevel::kWarning);
  EXPECT_EQ(r.message, "no usage history yet");
}

TEST(ParseLogLine, ErrorAfterTheComponent) {
  const LogRecord r = ParseLogLine("kai podgrouper: error: list pods: 403", "podgrouper");
  EXPECT_EQ(r.level, LogLevel::kError);
  EXPECT_EQ(r.message, "list pods: 403");
}

TEST(ParseLogLine, AnythingElseIsAnInfoLineAsWritten) {
  for (const char* line : {"cycle 3: 2 binds", "kai run watch a: b", "kai : x", "kai x"}) {
    const LogRecord r = ParseLogLine(line, "run");
    EXPECT_EQ(r.component, "run") << line;
    EXPECT_EQ(r.message, line);
    EXPECT_EQ(r.level, LogLevel::kInfo);
  }
}

TEST(FormatLogRecord, ConsoleIsTimeLevelComponentMessage) {
  const LogRecord r{LogLevel::kWarning, "binder", "slow write"};
  EXPECT_EQ(FormatLogRecord(r, {}, "2026-01-02T03:04:05.006Z"),
            "2026-01-02T03:04:05.006Z\tWARN\tbinder\tslow write");
}

TEST(FormatLogRecord, JsonHasKaiKeysAndEscapes) {
  const LogRecord r{LogLevel::kError, "scheduler", "bad \"x\"\n\ttab \x01"};
  LogOptions o;
  o.json = true;
  const std::string text = FormatLogRecord(r, o, "2026-01-02T03:04:05.006Z");
  EXPECT_EQ(text.find('\n'), std::string::npos);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["level"].GetString(), "error");
  EXPECT_STREQ(d["ts"].GetString(), "2026-01-02T03:04:05.006Z");
  EXPECT_STREQ(d["logger"].GetString(), "scheduler");
  EXPECT_EQ(std::string(d["msg"].GetString()), r.message);
  o.capital_levels = true;
  d.Parse(FormatLogRecord(r, o, "t").c_str());
  EXPECT_STREQ(d["level"].GetString(), "ERROR");
}

TEST(Logger, StreamLinesBecomeRecordsWithAnIsoUtcTime) {
  std::ostringstream sink;
  Logger logger(sink, "scheduler", {});
  {
    LogStream err(logger);
    err << "kai scheduler: cycle " << 1 << ": 0 binds\n"
        << "kai: error: boom\n"
        << "partial";
    EXPECT_EQ(Lines(sink.str()).size(), 2u);  // a partial line waits for its newline
  }
  const auto lines = Lines(sink.str());
  ASSERT_EQ(lines.size(), 3u);  // ... or for the stream's end
  const std::regex record(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\t(INFO|ERROR)\tscheduler\t.*)");
  for (const auto& l : lines) EXPECT_TRUE(std::regex_match(l, record)) << l;
  EXPECT_TRUE(lines[0].ends_with("\tINFO\tscheduler\tcycle 1: 0 binds"));
  EXPECT_TRUE(lines[1].ends_with("\tERROR\tscheduler\tboom"));
  EXPECT_TRUE(lines[2].ends_with("\tpartial"));
}

TEST(Logger, VerbosityAndMinimumLevelFilter) {
  std::ostringstream sink;
  LogOptions o;
  o.verbosity = 3;
  o.min_level = LogLevel::kWarning;
  Logger logger(sink, "binder", o);
  logger.Write({LogLevel::kWarning, "", "kept"}, 3);
  logger.Write({LogLevel::kWarning, "", "too verbose"}, 4);
  logger.Write({LogLevel::kInfo, "", "below the level"}, 0);
  const auto lines = Lines(sink.str());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].ends_with("\tWARN\tbinder\tkept"));
  EXPECT_TRUE(logger.Enabled(3));
  EXPECT_FALSE(logger.Enabled(4));
}

TEST(Logger, ThreadsWritingOneStreamKeepTheirLinesWhole) {
  std::ostringstream sink;
  Logger logger(sink, "run", {});
  LogStream err(logger);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&err, t] {
      for (int i = 0; i < 200; ++i) err << "kai w" << t << ": line " << i << " of " << t << "\n";
    });
  }
  for (auto& w : writers) w.join();
  const auto lines = Lines(sink.str());
  ASSERT_EQ(lines.size(), 800u);
  const std::regex whole(R"(.*\tINFO\tw(\d)\tline \d+ of (\d))");
  for (const auto& l : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, whole)) << l;
    EXPECT_EQ(m[1], m[2]) << l;
  }
}

TEST(Logger, AnEndlessLineIsCutIntoBoundedRecords) {
  std::ostringstream sink;
  Logger logger(sink, "admission", {});
  {
    LogStream err(logger);
    err << std::string(200 * 1024, 'x');
  }
  const auto lines = Lines(sink.str());
  ASSERT_EQ(lines.size(), 4u);  // 64 + 64 + 64 + 8 KiB
  EXPECT_LT(lines[0].size(), 64 * 1024 + 64);
}

TEST(FormatRfc3339WithFraction, PadsTheFractionToItsDigits) {
  EXPECT_EQ(FormatRfc3339WithFraction(1767322845, 7, 3), "2026-01-02T03:00:45.007Z");
  EXPECT_EQ(FormatRfc3339WithFraction(0, 123456, 6), "1970-01-01T00:00:00.123456Z");
}

TEST(LogTraceSink, WritesDebugRecordsOnlyAtItsVerbosity) {
  std::ostringstream sink;
  LogOptions o;
  o.verbosity = 3;
  Logger logger(sink, "scheduler", o);
  LogTraceSink quiet(logger, kTraceVerbosity);
  quiet.Line("not shown");
  LogTraceSink always(logger, 0);
  always.Line("scenario 1: 2 victims");
  const auto lines = Lines(sink.str());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].ends_with("\tDEBUG\tscheduler\tscenario 1: 2 victims"));
}

}  // namespace
}  // namespace kai::serve
