// The command lines KAI's operator writes for its components (pkg/operator/operands/*/resources*.go
// at the commit of tests/flags/kai_component_flags.txt) parse as kai's commands' command lines;
// KAI's names of kai's flags are the same options.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "kai/cmd/command.h"

namespace kai::cmd {
namespace {

struct Parsed {
  CLI::App app;
  std::unique_ptr<Command> command;
  CLI::App* sub = nullptr;
};

// `kai ARGS...` with the one command `make` gives, parsed as main does (Run not called).
std::unique_ptr<Parsed> Parse(CommandMaker make, std::vector<std::string> args) {
  auto p = std::make_unique<Parsed>();
  p->app.require_subcommand(1);
  p->command = make();
  p->sub = p->command->Add(p->app);
  std::vector<const char*> argv{"kai"};
  for (const auto& a : args) argv.push_back(a.c_str());
  p->app.parse(static_cast<int>(argv.size()), argv.data());
  return p;
}

TEST(KaiOperatorArgs, Scheduler) {
  EXPECT_NO_THROW(Parse(
      &MakeSchedulerCommand,
      {"scheduler", "--scheduler-conf=/etc/kai/config.yaml", "--scheduler-name=kai-scheduler",
       "--namespace=kai-scheduler", "--nodepool-label-key=kai.scheduler/node-pool",
       "--partition-label-value=",
       "--resource-reservation-app-label=kai-"
       "resource-reservation",
       "--queue-label-key=kai.scheduler/queue", "--listen-address=:8080", "--metrics-namespace=kai",
       "--full-hierarchy-fairness=false", "--max-consolidation-preemptees=16",
       "--leader-elect=true", "--qps", "50", "--burst", "300", "--log-json", "--v=4"}));
}

TEST(KaiOperatorArgs, Binder) {
  EXPECT_NO_THROW(Parse(&MakeBinderCommand, {"binder",
                                             "--scheduler-name",
                                             "kai-scheduler",
                                             "--resource-reservation-namespace",
                                             "kai-resource-reservation",
                                             "--resource-reservation-service-account",
                                             "kai-resource-reservation",
                                             "--resource-reservation-app-label",
                                             "kai-resource-reservation",
                                             "--resource-reservation-pod-image",
                                             "registry/kai/resource-reservation:v0.18",
                                             "--scale-adjust-namespace",
                                             "kai-scale-adjust",
                                             "--health-probe-bind-address",
                                             ":8081",
                                             "--metrics-bind-address",
                                             ":8080",
                                             "--max-concurrent-reconciles=10",
                                             "--resource-reservation-allocation-timeout=40",
                                             "--plugins",
                                             "{}",
                                             "--fake-gpu-nodes",
                                             "--leader-elect",
                                             "--qps",
                                             "50",
                                             "--burst",
                                             "300",
                                             "--runtime-class-name=nvidia",
                                             "--zap-devel=false"}));
}

TEST(KaiOperatorArgs, PodGrouper) {
  EXPECT_NO_THROW(Parse(&MakePodGrouperCommand, {"podgrouper",
                                                 "--scheduler-name",
                                                 "kai-scheduler",
                                                 "--queue-label-key",
                                                 "kai.scheduler/queue",
                                                 "--nodepool-label-key",
                                                 "kai.scheduler/node-pool",
                                                 "--knative-gang-schedule=true",
                                                 "--generic-karta-fallback=true",
                                                 "--qps",
                                                 "50",
                                                 "--burst",
                                                 "300",
                                                 "--max-concurrent-reconciles",
                                                 "10",
                                                 "--leader-elect",
                                                 "--default-priorities-configmap-name",
                                                 "p",
                                                 "--default-priorities-configmap-namespace",
                                                 "kai-scheduler",
                                                 "--namespace-label-selector",
                                                 "",
                                                 "--pod-label-selector",
                                                 ""}));
}

TEST(KaiOperatorArgs, Admission) {
  EXPECT_NO_THROW(Parse(&MakeAdmissionCommand, {"admission",
                                                "--scheduler-name",
                                                "kai-scheduler",
                                                "--webhook-addr",
                                                "9443",
                                                "--health-probe-bind-address",
                                                ":8081",
                                                "--metrics-bind-address",
                                                ":8080",
                                                "--gpu-sharing-enabled=true",
                                                "--hami-core-enabled=true",
                                                "--block-nvidia-visible-devices=true",
                                                "--leader-elect",
                                                "--gpu-fraction-runtime-class-name",
                                                "nvidia",
                                                "--gpu-pod-runtime-class-name",
                                                "nvidia",
                                                "--qps",
                                                "50",
                                                "--burst",
                                                "300"}));
}

// KAI's operator adds --hami-core-enabled=true when the binder's hamicore plugin is on.
TEST(KaiOperatorArgs, AdmissionTakesHamiCore) {
  for (const auto& [args, on] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{"admission"}, false},
           {{"admission", "--hami-core-enabled"}, true},
           {{"admission", "--hami-core-enabled=true"}, true},
           {{"admission", "--hami-core-enabled=false"}, false}}) {
    auto p = Parse(&MakeAdmissionCommand, args);
    EXPECT_EQ(p->sub->get_option("--hami-core-enabled")->as<bool>(), on) << args.back();
  }
}

TEST(KaiOperatorArgs, Controllers) {
  // The queue controller's and the pod group controller's, both to kai controllers.
  EXPECT_NO_THROW(Parse(&MakeControllersCommand,
                        {"controllers", "--metrics-listen-address", ":8080", "--leader-elect",
                         "--metrics-namespace", "kai", "--queue-label-to-metric-label", "", "--qps",
                         "50", "--burst", "300", "--zap-devel=false"}));
  EXPECT_NO_THROW(Parse(&MakeControllersCommand,
                        {"controllers", "--scheduler-name", "kai-scheduler",
                         "--max-concurrent-reconciles", "10", "--leader-elect", "--log-level", "3",
                         "--enable-podgroup-webhook=false", "--enable-webhook=true"}));
}

TEST(KaiOperatorArgs, ScaleAdjusterAndResourceReservation) {
  EXPECT_NO_THROW(
      Parse(&MakeScaleAdjusterCommand,
            {"scale-adjuster", "--scheduler-name", "kai-scheduler", "--scaling-pod-service-account",
             "sa", "--scaling-pod-image", "img", "--scale-adjust-namespace", "kai-scale-adjust",
             "--gpu-memory-to-fraction-ratio", "0.1", "--qps", "50", "--burst", "300"}));
  EXPECT_NO_THROW(
      Parse(&MakeResourceReservationCommand, {"resource-reservation", "--zap-devel=false",
                                              "--zap-time-encoding", "iso8601", "--qps", "5"}));
}

TEST(KaiOperatorArgs, NumaExporter) {
  // The DaemonSet's container (KAI's operand: Go's Duration.String() writes 1m0s).
  EXPECT_NO_THROW(
      Parse(&MakeNumaExporterCommand,
            {"numa-exporter", "--podresources-socket=/var/lib/kubelet/pod-resources/kubelet.sock",
             "--sysfs-root=/host/sys", "--poll-interval=1s", "--drift-resync-interval=1m0s",
             "--node-name", "n1", "--qps", "50", "--burst", "100", "--zap-devel=false"}));
}

TEST(KaiFlagAliases, AreTheSameOptions) {
  const struct {
    CommandMaker make;
    const char* command;
    const char* kai;
    const char* alias;
  } aliases[] = {
      {&MakeBinderCommand, "binder", "--max-concurrent", "--max-concurrent-reconciles"},
      {&MakePodGrouperCommand, "podgrouper", "--max-concurrent", "--max-concurrent-reconciles"},
      {&MakeSchedulerCommand, "scheduler", "--node-pool-label-key", "--nodepool-label-key"},
      {&MakeControllersCommand, "controllers", "--metrics-bind-address",
       "--metrics-listen-address"},
      {&MakeControllersCommand, "controllers", "--v", "--log-level"},
  };
  for (const auto& a : aliases) {
    auto p = Parse(a.make, {a.command, std::string(a.alias) + "=7"});
    CLI::Option* o = p->sub->get_option(a.kai);
    EXPECT_EQ(o, p->sub->get_option(a.alias)) << a.alias;
    EXPECT_EQ(o->as<std::string>(), "7") << a.alias;
  }
}

TEST(KaiFlags, ValuesKaiRefusesStopTheComponentBeforeItConnects) {
  const struct {
    CommandMaker make;
    std::vector<std::string> args;
  } refused[] = {
      {&MakeSchedulerCommand, {"scheduler", "--full-hierarchy-fairness=maybe"}},
      {&MakeSchedulerCommand, {"scheduler", "--restrict-node-scheduling"}},
      {&MakeSchedulerCommand, {"scheduler", "--queue-label-key", "team"}},
      {&MakePodGrouperCommand, {"podgrouper", "--pod-label-selector", "a=b"}},
      {&MakeControllersCommand, {"controllers", "--queue-label-to-metric-label", "a=b"}},
      {&MakeBinderCommand, {"binder", "--resource-reservation-allocation-timeout=0"}},
  };
  for (const auto& r : refused) {
    auto p = Parse(r.make, r.args);
    EXPECT_EQ(p->command->Run(), 2) << r.args[1];
  }
}

TEST(KaiFlags, UnknownFlagIsStillAnError) {
  EXPECT_THROW(Parse(&MakeBinderCommand, {"binder", "--no-such-flag"}), CLI::ParseError);
}

}  // namespace
}  // namespace kai::cmd
