#include "kai/cmd/flags.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kai/cmd/command.h"

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

// A fresh app with `add` declaring its flags, parsed from `args`. Flag groups keep pointers to
// the app's options, so the caller keeps the app while it reads them.
template <class F>
std::unique_ptr<CLI::App> ParseWith(F add, std::vector<std::string> args) {
  auto app = std::make_unique<CLI::App>();
  add(app.get());
  std::vector<const char*> argv{"kai"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app->parse(static_cast<int>(argv.size()), argv.data());
  return app;
}

TEST(LogFlags, ControllerRuntimeFlagsWithoutAnEffectAreWarned) {
  CLI::App app;
  LogFlags flags;
  flags.Add(&app, 0, false);
  const char* argv[] = {"kai", "--zap-time-encoding=epoch", "--zap-stacktrace-level", "error"};
  app.parse(4, argv);
  const auto w = flags.inert().Warnings();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("--zap-stacktrace-level has no effect in kai"), std::string::npos);
  EXPECT_NE(w[1].find("--zap-time-encoding has no effect in kai"), std::string::npos);
}

TEST(LogFlags, VerbosityAlias) {
  CLI::App app;
  LogFlags flags;
  flags.Add(&app, 0, false, "--log-level");
  const char* argv[] = {"kai", "--log-level", "4"};
  app.parse(3, argv);
  EXPECT_EQ(flags.Options()->verbosity, 4);
}

TEST(KaiOnlyFlags, InertFlagsParseAndWarnOnlyWhenGiven) {
  KaiOnlyFlags k;
  const auto add = [&k](CLI::App* c) {
    k.Inert(c, "profiler-port", "Go's profiler");
    k.Inert(c, "enable-profiler", "Go's profiler", true);
  };
  auto app = ParseWith(add, {});
  EXPECT_TRUE(k.Warnings().empty());
  EXPECT_FALSE(k.Check());
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--enable-profiler", "--profiler-port", "6060"},
                                             {"--enable-profiler=false", "--profiler-port=6060"}}) {
    KaiOnlyFlags fresh;
    k = fresh;
    app = ParseWith(add, args);
    const auto w = k.Warnings();
    ASSERT_EQ(w.size(), 2u) << args[0];
    EXPECT_EQ(w[0], "warning: --profiler-port has no effect in kai: Go's profiler");
    EXPECT_EQ(w[1], "warning: --enable-profiler has no effect in kai: Go's profiler");
  }
  std::ostringstream log;
  k.Warn(log);
  EXPECT_EQ(log.str().rfind("kai: warning: --profiler-port", 0), 0u);
}

TEST(KaiOnlyFlags, OnlyValueTakesKaisValueAndRefusesAnother) {
  for (const auto& [args, ok] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{}, true},
           {{"--hami-core-enabled=false"}, true},
           {{"--hami-core-enabled"}, false},
           {{"--hami-core-enabled=true"}, false},
           {{"--pod-label-selector", ""}, true},
           {{"--pod-label-selector", "a=b"}, false}}) {
    KaiOnlyFlags k;
    const auto app = ParseWith(
        [&k](CLI::App* c) {
          k.OnlyValue(c, "hami-core-enabled", "false", "no HAMi-core", true);
          k.OnlyValue(c, "pod-label-selector", "", "no selector");
        },
        args);
    const auto e = k.Check();
    EXPECT_EQ(!e.has_value(), ok) << (args.empty() ? "" : args[0]);
    if (e) {
      EXPECT_EQ(e->rfind("--" + args[0].substr(2, args[0].find('=') - 2), 0), 0u) << *e;
    }
    EXPECT_TRUE(k.Warnings().empty());
  }
}

TEST(RateFlags, QpsAndBurst) {
  double qps = 0;
  int burst = 300;
  ParseWith([&](CLI::App* c) { AddRateFlags(c, qps, burst); }, {"--qps", "50", "--burst=100"});
  EXPECT_EQ(qps, 50);
  EXPECT_EQ(burst, 100);
  EXPECT_THROW(ParseWith([&](CLI::App* c) { AddRateFlags(c, qps, burst); }, {"--qps", "-1"}),
               CLI::ValidationError);
  EXPECT_THROW(ParseWith([&](CLI::App* c) { AddRateFlags(c, qps, burst); }, {"--burst", "0"}),
               CLI::ValidationError);
}

TEST(SecondsOrDuration, KaisWholeSecondsAndGoDurations) {
  std::chrono::milliseconds out{0};
  EXPECT_FALSE(ParseSecondsOrDurationFlag("--t", "40", out));
  EXPECT_EQ(out, std::chrono::seconds(40));
  EXPECT_FALSE(ParseSecondsOrDurationFlag("--t", "1m30s", out));
  EXPECT_EQ(out, std::chrono::seconds(90));
  EXPECT_EQ(ParseSecondsOrDurationFlag("--t", "0", out)->rfind("--t: ", 0), 0u);
  EXPECT_EQ(ParseSecondsOrDurationFlag("--t", "soon", out)->rfind("--t: ", 0), 0u);
}

TEST(SplitEmptyValues, AnEmptyValueStaysEmptyAndTheNextFlagStaysAFlag) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("serve");
  std::string metrics = ":8080", health = ":8081";
  bool json = false;
  AddServerFlags(sub, metrics, health);
  sub->add_flag("--log-json", json);
  const char* argv[] = {
      "kai",         "serve",     "--metrics-bind-address=", "--health-probe-bind-address=",
      "--log-json=", "--unknown="};
  const auto args = SplitEmptyValues(app, 6, argv);
  EXPECT_EQ(args, (std::vector<std::string>{"serve", "--metrics-bind-address", "",
                                            "--health-probe-bind-address", "",
                                            "--log-json=", "--unknown="}));
  std::vector<const char*> split{"kai"};
  for (const std::string& a : args) split.push_back(a.c_str());
  split.pop_back();  // the unknown one would be refused
  app.parse(static_cast<int>(split.size()), split.data());
  EXPECT_EQ(metrics, "");
  EXPECT_EQ(health, "");
}

// --fips-mode: every command that talks to an API server takes it, for the whole process.
TEST(FipsModeFlag, EveryCommandOfTheApiServerTakesIt) {
  const std::pair<const char*, CommandMaker> commands[] = {
      {"scheduler", &MakeSchedulerCommand},
      {"binder", &MakeBinderCommand},
      {"resource-reservation", &MakeResourceReservationCommand},
      {"admission", &MakeAdmissionCommand},
      {"podgrouper", &MakePodGrouperCommand},
      {"controllers", &MakeControllersCommand},
      {"scale-adjuster", &MakeScaleAdjusterCommand},
      {"numa-exporter", &MakeNumaExporterCommand},
      {"operator", &MakeOperatorCommand},
      {"run", &MakeRunCommand},
      {"queues", &MakeQueuesCommand},
      {"explain", &MakeExplainCommand}};
  for (const auto& [name, make] : commands) {
    for (const char* value : {"--fips-mode", "--fips-mode=false"}) {
      CLI::App app;
      auto command = make();
      command->Add(app);
      std::vector<const char*> argv = {"kai", name, value};
      if (std::string(name) == "explain") argv.insert(argv.end(), {"pod", "default/x"});
      ASSERT_NO_THROW(app.parse(static_cast<int>(argv.size()), argv.data()))
          << name << " " << value;
      EXPECT_EQ(FipsModeRequested(), std::string(value) == "--fips-mode") << name << " " << value;
    }
  }
}

}  // namespace
}  // namespace kai::cmd
