// kai: one multi-call binary. Exceptions and exit codes live here, at the process edge.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>
#include <cmath>
#include <iomanip>

#include "kai/admission/review.h"
#include "kai/binder/controller.h"
#include "kai/cli/explain_command.h"
#include "kai/cli/flags.h"
#include "kai/cli/whatif_command.h"
#include "kai/controllersd/controllers.h"
#include "kai/explain/queues.h"
#include "kai/framework/config.h"
#include "kai/framework/session.h"
#include "kai/io/manifest_files.h"
#include "kai/io/usage_dir.h"
#include "kai/io/usage_file.h"
#include "kai/k8s/decode.h"
#include "kai/podgrouperd/controller.h"
#include "kai/reservation/reservation.h"
#include "kai/resource/quantity.h"
#include "kai/run/all.h"
#include "kai/run/install_command.h"
#include "kai/scaleadjuster/calculator.h"
#include "kai/scaleadjusterd/controller.h"
#include "kai/scheduler/scheduler.h"
#include "kai/sim/output.h"
#include "kai/sim/simulator.h"
#include "kai/util/time.h"
#include "kai/util/trace.h"
#include "kai/webhook/server.h"

namespace {

constexpr int kExitBadInput = 2;

struct SimulateArgs {
  std::vector<std::string> files;
  std::string now;
  std::string actions;
  int cycles = 1;
  std::string no_recreate;
  std::string output = "table";
  std::string usage_file;
  bool verify_snapshot_cache = false;
};

struct QueuesArgs {
  std::vector<std::string> files;
  std::string now;
  std::string output = "table";
  std::string usage_file;
  // A live cluster instead of files (the scheduler's view: its shard, its watches).
  std::string kubeconfig, context, shard, node_pool_key = "kai.scheduler/node-pool";
  std::string usage_dir;  // the history kai scheduler --usage-dir records
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// KAI_DEBUG=1 traces the disruptive actions' search on stderr (libkai writes through the sink).
class StderrTrace final : public kai::TraceSink {
 public:
  void Line(std::string_view line) override { std::cerr << line << "\n"; }
};

kai::TraceSink* DebugTrace() {
  static StderrTrace sink;
  return std::getenv("KAI_DEBUG") != nullptr ? &sink : nullptr;
}

int Fail(const std::string& message) {
  std::cerr << "kai: " << message << "\n";
  return kExitBadInput;
}

bool ParseNow(const std::string& text, kai::UnixSeconds& now) {
  if (text.empty()) {
    now = static_cast<kai::UnixSeconds>(std::time(nullptr));
    return true;
  }
  auto t = kai::ParseRfc3339(text);
  if (t) now = *t;
  return t.has_value();
}

std::string NowError(const std::string& text) {
  return "--now: expected an RFC 3339 time such as 2025-01-01T12:00:00Z, got \"" + text + "\"";
}

// Sets options.now and, with a usage file, loads it into `usage` and points options at it.
std::optional<std::string> ReadClockAndUsage(const std::string& now, const std::string& usage_file,
                                             kai::sim::SimulateOptions& options,
                                             std::optional<kai::usage::UsageStore>& usage) {
  if (!ParseNow(now, options.now)) return NowError(now);
  if (usage_file.empty()) return std::nullopt;
  auto u = kai::usage::LoadUsageFile(usage_file);
  if (!u.ok()) return u.error().message;
  usage = std::move(u.value());
  options.usage = &*usage;
  return std::nullopt;
}

int RunSimulate(const SimulateArgs& a) {
  kai::sim::SimulateOptions options;
  std::optional<kai::usage::UsageStore> usage;
  if (auto err = ReadClockAndUsage(a.now, a.usage_file, options, usage)) return Fail(*err);
  if (a.cycles < 1) return Fail("--cycles: must be at least 1");
  options.cycles = a.cycles;
  // The environment variable lets test harnesses that cannot add flags (the conformance runner)
  // turn the check on.
  const char* verify = std::getenv("KAI_VERIFY_SNAPSHOT_CACHE");
  options.verify_snapshot_cache =
      a.verify_snapshot_cache || (verify != nullptr && std::string_view(verify) == "1");
  for (const auto& pg : SplitCommas(a.no_recreate)) options.no_recreate.insert(pg);
  auto world = kai::LoadManifests(a.files);
  if (!world.ok()) return Fail(world.error().message);
  for (const auto& w : world->warnings) std::cerr << "kai: warning: " << w << "\n";
  auto config = kai::ConfigFromShard(world->shard);
  if (!config.ok()) return Fail(config.error().message);
  if (!a.actions.empty()) {
    config = kai::WithActions(std::move(config.value()), SplitCommas(a.actions));
    if (!config.ok()) return Fail(config.error().message);
  }
  config->trace = DebugTrace();
  auto cycles = kai::sim::Simulate(std::move(world.value()), config.value(), options);
  if (!cycles.ok()) return Fail(cycles.error().message);
  if (a.output == "json") {
    kai::sim::WriteJson(cycles.value(), std::cout);
  } else if (a.output == "yaml") {
    kai::sim::WriteYaml(cycles.value(), std::cout);
  } else {
    kai::sim::WriteTable(cycles.value(), std::cout);
  }
  return 0;
}

std::string Amount(kai::CoreResource r, int64_t v) {
  return v < 0 ? "unlimited" : kai::FormatAmount(r, v);
}

std::string Saturation(double s) {
  if (std::isinf(s)) return "inf";
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << s;
  return o.str();
}

void PrintQueuesTable(const std::vector<kai::QueueExplanation>& queues) {
  constexpr kai::CoreResource kRes[] = {kai::CoreResource::kCpu, kai::CoreResource::kMemory,
                                        kai::CoreResource::kGpu};
  std::cout << std::left << std::setw(22) << "QUEUE" << std::setw(6) << "PRIO" << std::setw(16)
            << "RESOURCE" << std::setw(12) << "QUOTA" << std::setw(12) << "LIMIT" << std::setw(8)
            << "WEIGHT" << std::setw(14) << "REQUESTED" << std::setw(14) << "ALLOCATED"
            << std::setw(14) << "FAIR SHARE" << std::setw(6) << "SAT"
            << "HOW\n";
  for (const auto& q : queues) {
    for (size_t i = 0; i < q.resources.size(); ++i) {
      const auto& e = q.resources[i];
      const std::string name = i == 0 ? std::string(q.depth * 2, ' ') + q.name : "";
      std::cout << std::setw(22) << name << std::setw(6)
                << (i == 0 ? std::to_string(q.priority) : "") << std::setw(16) << e.resource
                << std::setw(12) << Amount(kRes[i], e.quota) << std::setw(12)
                << Amount(kRes[i], e.limit) << std::setw(8) << kai::FormatMilli(e.weight_milli)
                << std::setw(14) << Amount(kRes[i], e.requested) << std::setw(14)
                << Amount(kRes[i], e.allocated) << std::setw(14) << Amount(kRes[i], e.fair_share)
                << std::setw(6) << Saturation(e.saturation) << e.Summary() << "\n";
    }
  }
}

void PrintQueuesJson(const std::vector<kai::QueueExplanation>& queues) {
  rapidjson::OStreamWrapper os(std::cout);
  rapidjson::Writer<rapidjson::OStreamWrapper> w(os);
  w.StartObject();
  w.Key("queues");
  w.StartArray();
  for (const auto& q : queues) {
    w.StartObject();
    w.Key("name");
    w.String(q.name.c_str());
    w.Key("parent");
    w.String(q.parent.c_str());
    w.Key("priority");
    w.Int(q.priority);
    w.Key("leaf");
    w.Bool(q.leaf);
    w.Key("resources");
    w.StartObject();
    for (const auto& e : q.resources) {
      w.Key(e.resource.c_str());
      w.StartObject();
      const std::pair<const char*, int64_t> fields[] = {{"quota", e.quota},
                                                        {"limit", e.limit},
                                                        {"overQuotaWeightMilli", e.weight_milli},
                                                        {"requested", e.requested},
                                                        {"allocated", e.allocated},
                                                        {"fairShare", e.fair_share},
                                                        {"levelTotal", e.level_total},
                                                        {"deservedPart", e.deserved_part},
                                                        {"surplusPart", e.surplus_part}};
      for (const auto& [k, v] : fields) {
        w.Key(k);
        w.Int64(v);
      }
      w.Key("saturation");
      if (std::isinf(e.saturation)) {
        w.Null();
      } else {
        w.Double(e.saturation);
      }
      w.Key("usage");
      w.Double(e.usage);
      w.Key("cappedBy");
      w.String(e.capped_by.c_str());
      w.Key("explanation");
      w.String(e.Summary().c_str());
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("units");
  w.String("cpu: millicores, memory: bytes, nvidia.com/gpu: milli-GPU; -1: unlimited");
  w.EndObject();
  std::cout << "\n";
}

// The world of `kai queues`: the manifests, or the live cluster as the scheduler lists it.
kai::Result<kai::ClusterState> QueuesWorld(const QueuesArgs& a) {
  if (a.files.empty() == a.kubeconfig.empty()) {
    return kai::Error{"-f or --kubeconfig: give the manifests or a cluster (one of them)"};
  }
  if (!a.files.empty()) return kai::LoadManifests(a.files);
  kai::scheduler::SchedulerOptions o;
  o.kubeconfig = a.kubeconfig;
  o.context = a.context;
  o.shard = a.shard;
  o.node_pool_key = a.node_pool_key;
  return kai::scheduler::ReadLiveWorld(o);
}

// The history kai scheduler recorded under `dir`, with the usage parameters it used.
std::optional<std::string> ReadUsageDir(const std::string& dir,
                                        std::optional<kai::usage::UsageStore>& usage) {
  auto file = kai::usage::UsageDir(dir).Read();
  if (!file.ok()) return file.error().message;
  if (!*file) {
    std::cerr << "kai: warning: --usage-dir: no usage history in " << dir << " yet\n";
    return std::nullopt;
  }
  usage = (*file)->history.ToStore((*file)->params);
  return std::nullopt;
}

int RunQueues(const QueuesArgs& a) {
  kai::sim::SimulateOptions options;
  std::optional<kai::usage::UsageStore> usage;
  if (!a.usage_file.empty() && !a.usage_dir.empty())
    return Fail("--usage and --usage-dir: give one of them");
  if (auto err = ReadClockAndUsage(a.now, a.usage_file, options, usage)) return Fail(*err);
  if (!a.usage_dir.empty()) {
    if (auto err = ReadUsageDir(a.usage_dir, usage)) return Fail(*err);
    if (usage) options.usage = &*usage;
  }
  auto world = QueuesWorld(a);
  if (!world.ok()) return Fail(world.error().message);
  auto config = kai::ConfigFromShard(world->shard);
  if (!config.ok()) return Fail(config.error().message);
  if (!config->Plugin("proportion"))
    return Fail("the proportion plugin is disabled: no fair share");
  kai::Session session(kai::sim::BuildSimSnapshot(world.value(), options), config.value());
  if (auto opened = session.OpenPlugins(); !opened.ok()) return Fail(opened.error().message);
  const auto queues = kai::ExplainQueues(session.snap());
  if (a.output == "json") {
    PrintQueuesJson(queues);
  } else {
    PrintQueuesTable(queues);
  }
  return 0;
}

struct CheckUpdateArgs {
  std::vector<std::string> before, after;
};

// Admission of a manifest update: rules that compare the new objects with the ones they replace.
int RunCheckUpdate(const CheckUpdateArgs& a) {
  auto before = kai::LoadManifests(a.before);
  if (!before.ok()) return Fail(before.error().message);
  auto after = kai::LoadManifests(a.after);
  if (!after.ok()) return Fail(after.error().message);
  const kai::Status valid = kai::ValidateWorldUpdate(before.value(), after.value());
  for (const auto& e : kai::ProblemsOf(valid)) std::cerr << "kai: " << e << "\n";
  if (!valid.ok()) return kExitBadInput;
  std::cout << "update accepted\n";
  return 0;
}

struct SchedulerArgs {
  kai::scheduler::SchedulerOptions o;
  std::string period, now, lease_duration, renew_deadline, retry_period, status_deferral;
  std::string usage_save_interval, unserved_recheck;
  int plugin_server_port = 0;
};

CLI::App* AddSchedulerCommand(CLI::App& app, SchedulerArgs& a) {
  CLI::App* c = app.add_subcommand("scheduler", "schedule a Kubernetes cluster (KAI's scheduler)");
  auto& o = a.o;
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, "
                "~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--scheduler-name", o.scheduler_name, "schedule pods with this schedulerName");
  c->add_option("--shard", o.shard, "SchedulingShard to read config and node pool from");
  c->add_option("--node-pool-label-key", o.node_pool_key, "the node-pool label");
  c->add_option("--schedule-period", a.period, "cycle period, e.g. 1s (the shard's wins)");
  c->add_flag("--once", o.once, "sync, run one cycle, write its decisions, print it and exit");
  c->add_flag("--dry-run", o.dry_run, "sync, run one cycle, print it; write nothing");
  c->add_option("-o,--output", o.output, "table, yaml or json (--once, --dry-run)")
      ->check(CLI::IsMember({"table", "yaml", "json"}));
  c->add_option("--now", a.now, "a fixed clock for every cycle, RFC 3339 (tests)");
  c->add_option("--max-in-flight", o.max_in_flight, "concurrent API writes (default 32)");
  c->add_option("--status-write-deferral", a.status_deferral,
                "how long status writes and events may wait behind a burst of binds "
                "(default 10s; 0s: only while a cycle's writes run)");
  c->add_flag("--update-pod-eviction-condition,!--no-update-pod-eviction-condition",
              o.update_pod_eviction_condition,
              "set the DisruptionTarget condition before deleting an evicted pod (default on; "
              "--update-pod-eviction-condition=false turns it off)");
  c->add_flag("--leader-elect", o.leader_elect, "elect a leader on a Lease; only it writes");
  c->add_option("--leader-elect-namespace", o.leader_elect_namespace, "the Lease's namespace");
  c->add_option("--leader-elect-id", o.leader_elect_id, "the Lease's name");
  c->add_option("--leader-elect-identity", o.identity, "this process's identity (hostname_pid)");
  c->add_option("--leader-elect-lease-duration", a.lease_duration, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", a.renew_deadline, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", a.retry_period, "e.g. 2s");
  c->add_option("--metrics-bind-address", o.metrics_address, "HOST:PORT for /metrics");
  c->add_option("--health-probe-bind-address", o.health_address, "HOST:PORT for /healthz, /readyz");
  c->add_option("--snapshot-bind-address", o.snapshot_address,
                "HOST:PORT for /debug/snapshot (default 127.0.0.1:8083, loopback only; \"\": off)");
  c->add_option("--plugin-server-port", a.plugin_server_port,
                "KAI's name: serve /debug/snapshot on 127.0.0.1:PORT")
      ->check(CLI::Range(1, 65535));
  c->add_option("--usage-dir", o.usage_dir,
                "record each queue's usage here for time-based fair share (usageDBConfig)");
  c->add_option("--usage-prometheus-url", o.usage_prometheus_url,
                "read the usage history from this Prometheus instead (as KAI)");
  c->add_option("--usage-save-interval", a.usage_save_interval,
                "how often the usage history is saved (default 60s, and on shutdown)");
  c->add_option("--unserved-recheck-period", a.unserved_recheck,
                "how often an optional API the cluster does not serve (DRA, "
                "NodeResourceTopology) is looked for again (default 60s)");
  c->add_option("--max-cycles", o.max_cycles, "stop after this many cycles (0: run on)");
  c->add_flag("--verify-snapshot-cache", o.verify_snapshot_cache,
              "check every cycle that the incremental snapshot equals a full build");
  return c;
}

std::optional<std::string> ParseDurationFlag(const std::string& flag, const std::string& text,
                                             std::chrono::milliseconds& out) {
  if (text.empty()) return std::nullopt;
  auto ms = kai::ParseGoDurationMillis(text);
  if (!ms || *ms <= 0)
    return flag + ": expected a positive duration such as 1s, got \"" + text + "\"";
  out = std::chrono::milliseconds(*ms);
  return std::nullopt;
}

void OnSignal(int) { kai::scheduler::RequestStop(); }

int RunSchedulerCommand(SchedulerArgs& a) {
  auto& o = a.o;
  if (a.plugin_server_port != 0)
    o.snapshot_address = "127.0.0.1:" + std::to_string(a.plugin_server_port);
  if (!a.period.empty()) {
    std::chrono::milliseconds p{0};
    if (auto e = ParseDurationFlag("--schedule-period", a.period, p)) return Fail(*e);
    o.period = p;
  }
  if (auto e =
          ParseDurationFlag("--leader-elect-lease-duration", a.lease_duration, o.lease_duration)) {
    return Fail(*e);
  }
  if (auto e =
          ParseDurationFlag("--leader-elect-renew-deadline", a.renew_deadline, o.renew_deadline)) {
    return Fail(*e);
  }
  if (auto e = ParseDurationFlag("--leader-elect-retry-period", a.retry_period, o.retry_period)) {
    return Fail(*e);
  }
  if (a.status_deferral == "0" || a.status_deferral == "0s") {
    o.status_write_deferral = std::chrono::milliseconds(0);
  } else if (auto e = ParseDurationFlag("--status-write-deferral", a.status_deferral,
                                        o.status_write_deferral)) {
    return Fail(*e);
  }
  if (auto e = ParseDurationFlag("--usage-save-interval", a.usage_save_interval,
                                 o.usage_save_interval)) {
    return Fail(*e);
  }
  if (auto e =
          ParseDurationFlag("--unserved-recheck-period", a.unserved_recheck, o.unserved_recheck)) {
    return Fail(*e);
  }
  if (o.renew_deadline >= o.lease_duration) {
    return Fail("--leader-elect-renew-deadline: must be shorter than the lease duration");
  }
  if (!a.now.empty()) {
    kai::UnixSeconds now = 0;
    if (!ParseNow(a.now, now)) return Fail("--now: expected an RFC 3339 time, got " + a.now);
    o.now = now;
  }
  o.trace = DebugTrace();
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  return kai::scheduler::RunScheduler(o, std::cout, std::cerr);
}

struct BinderArgs {
  kai::binder::BinderOptions o;
  std::string reservation_timeout, resync_period, status_deferral, lease_duration, renew_deadline,
      retry_period;
  kai::binder::ReservationPodFlags reservation_pod;
  int base_delay = 1, max_delay = 60;
};

CLI::App* AddBinderCommand(CLI::App& app, BinderArgs& a) {
  CLI::App* c = app.add_subcommand("binder", "bind pods as their BindRequests ask (KAI's binder)");
  auto& o = a.o;
  auto& r = o.reservation;
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--max-concurrent", o.max_concurrent, "binds in flight at once (default 10)")
      ->check(CLI::Range(1, 1000));
  c->add_option("--rate-limiter-base-delay", a.base_delay, "seconds (default 1)")
      ->check(CLI::Range(1, 3600));
  c->add_option("--rate-limiter-max-delay", a.max_delay, "seconds (default 60)")
      ->check(CLI::Range(1, 86400));
  c->add_option(
      "--plugins", o.plugins_json,
      "plugin overrides, JSON: {\"gpusharing\":{\"arguments\":{\"cdiEnabled\":\"true\"}}}");
  c->add_option("--resource-reservation-namespace", r.ns, "namespace of GPU reservation pods");
  c->add_option("--resource-reservation-service-account", r.service_account,
                "their service account");
  c->add_option("--resource-reservation-pod-image", r.image,
                "their image (runs `kai resource-reservation`)");
  c->add_option("--resource-reservation-app-label", r.app_label, "their app label value");
  c->add_option("--resource-reservation-allocation-timeout", a.reservation_timeout,
                "how long a reservation pod may take to report its GPU (default 40s)");
  c->add_option("--resource-reservation-pod-resources", a.reservation_pod.resources,
                "their requests and limits besides the GPU, a JSON ResourceRequirements "
                "(default {\"requests\":{\"cpu\":\"10m\",\"memory\":\"64Mi\"},"
                "\"limits\":{\"cpu\":\"100m\",\"memory\":\"256Mi\"}})");
  c->add_option(
      "--resource-reservation-pod-security-context", a.reservation_pod.pod_security_context,
      "their pod securityContext, JSON (default: non-root 65532, RuntimeDefault seccomp)");
  c->add_option("--resource-reservation-container-security-context",
                a.reservation_pod.container_security_context,
                "their container securityContext, JSON (default: restricted: non-root, no "
                "privilege escalation, every capability dropped, RuntimeDefault seccomp)");
  c->add_option("--scale-adjust-namespace", r.scale_adjust_ns, "namespace of scaling pods");
  c->add_option("--runtime-class-name", r.runtime_class, "runtime class of reservation pods");
  c->add_flag("--fake-gpu-nodes", r.fake_gpu_nodes, "reservation pods only sleep (test clusters)");
  c->add_option("--reservation-resync-period", a.resync_period,
                "how often every GPU group's reservation is checked (default 60s)");
  c->add_option("--status-write-deferral", a.status_deferral,
                "how long conditions and events may wait behind a burst of binds (default 10s)");
  c->add_flag("--leader-elect", o.leader_elect, "elect a leader on a Lease; only it binds");
  c->add_option("--leader-elect-namespace", o.leader_elect_namespace, "the Lease's namespace");
  c->add_option("--leader-elect-id", o.leader_elect_id, "the Lease's name (default kai-binder)");
  c->add_option("--leader-elect-identity", o.identity, "this process's identity (hostname_pid)");
  c->add_option("--leader-elect-lease-duration", a.lease_duration, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", a.renew_deadline, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", a.retry_period, "e.g. 2s");
  c->add_option("--metrics-bind-address", o.metrics_address, "HOST:PORT for /metrics");
  c->add_option("--health-probe-bind-address", o.health_address, "HOST:PORT for /healthz, /readyz");
  return c;
}

void OnBinderSignal(int) { kai::binder::RequestBinderStop(); }

int RunBinderCommand(BinderArgs& a) {
  auto& o = a.o;
  const std::pair<const char*, std::pair<std::string*, std::chrono::milliseconds*>> durations[] = {
      {"--resource-reservation-allocation-timeout",
       {&a.reservation_timeout, &o.reservation.allocation_timeout}},
      {"--reservation-resync-period", {&a.resync_period, &o.resync_period}},
      {"--leader-elect-lease-duration", {&a.lease_duration, &o.lease_duration}},
      {"--leader-elect-renew-deadline", {&a.renew_deadline, &o.renew_deadline}},
      {"--leader-elect-retry-period", {&a.retry_period, &o.retry_period}}};
  for (const auto& [flag, target] : durations) {
    if (auto e = ParseDurationFlag(flag, *target.first, *target.second)) return Fail(*e);
  }
  if (a.status_deferral == "0" || a.status_deferral == "0s") {
    o.status_write_deferral = std::chrono::milliseconds(0);
  } else if (auto e = ParseDurationFlag("--status-write-deferral", a.status_deferral,
                                        o.status_write_deferral)) {
    return Fail(*e);
  }
  if (a.max_delay < a.base_delay) {
    return Fail("--rate-limiter-max-delay: must not be below --rate-limiter-base-delay");
  }
  if (auto s = kai::binder::ApplyReservationPodFlags(a.reservation_pod, o.reservation.shape);
      !s.ok()) {
    return Fail(s.error().message);
  }
  o.rate_limit.base = std::chrono::seconds(a.base_delay);
  o.rate_limit.max = std::chrono::seconds(a.max_delay);
  if (o.renew_deadline >= o.lease_duration) {
    return Fail("--leader-elect-renew-deadline: must be shorter than the lease duration");
  }
  std::signal(SIGTERM, OnBinderSignal);
  std::signal(SIGINT, OnBinderSignal);
  return kai::binder::RunBinder(o, std::cerr);
}

struct ControllersArgs {
  kai::controllersd::ControllersOptions o;
  std::string resync_period, lease_duration, renew_deadline, retry_period;
};

CLI::App* AddControllersCommand(CLI::App& app, ControllersArgs& a) {
  CLI::App* c = app.add_subcommand(
      "controllers", "keep PodGroup and Queue statuses and the queue metrics (KAI's controllers)");
  auto& o = a.o;
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--metrics-bind-address", o.metrics_address,
                "HOST:PORT for /metrics (default :8080; \"\" off)");
  c->add_option("--health-probe-bind-address", o.health_address,
                "HOST:PORT for /healthz, /readyz (default :8081; \"\" off)");
  c->add_option("--resync-period", a.resync_period,
                "how often every status is recomputed (default 10h)");
  c->add_option("--metrics-namespace", o.metrics_namespace, "metric name prefix (default kai)");
  c->add_flag("--create-defaults", o.create_defaults,
              "create the default queue tree and SchedulingShard when absent (never changes them)");
  c->add_flag("--leader-elect", o.leader_elect, "elect a leader on a Lease; only it writes");
  c->add_option("--leader-elect-namespace", o.leader_elect_namespace, "the Lease's namespace");
  c->add_option("--leader-elect-id", o.leader_elect_id,
                "the Lease's name (default kai-controllers)");
  c->add_option("--leader-elect-identity", o.identity, "this process's identity (hostname_pid)");
  c->add_option("--leader-elect-lease-duration", a.lease_duration, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", a.renew_deadline, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", a.retry_period, "e.g. 2s");
  return c;
}

void OnControllersSignal(int) { kai::controllersd::RequestControllersStop(); }

int RunControllersCommand(ControllersArgs& a) {
  auto& o = a.o;
  const std::pair<const char*, std::pair<std::string*, std::chrono::milliseconds*>> durations[] = {
      {"--resync-period", {&a.resync_period, &o.resync_period}},
      {"--leader-elect-lease-duration", {&a.lease_duration, &o.lease_duration}},
      {"--leader-elect-renew-deadline", {&a.renew_deadline, &o.renew_deadline}},
      {"--leader-elect-retry-period", {&a.retry_period, &o.retry_period}}};
  for (const auto& [flag, target] : durations) {
    if (auto e = ParseDurationFlag(flag, *target.first, *target.second)) return Fail(*e);
  }
  if (o.renew_deadline >= o.lease_duration) {
    return Fail("--leader-elect-renew-deadline: must be shorter than the lease duration");
  }
  std::signal(SIGTERM, OnControllersSignal);
  std::signal(SIGINT, OnControllersSignal);
  return kai::controllersd::RunControllers(o, std::cerr);
}

CLI::App* AddResourceReservationCommand(CLI::App& app, kai::reservation::ProgramOptions& o) {
  CLI::App* c = app.add_subcommand(
      "resource-reservation",
      "the GPU reservation pod's program: annotate this pod with its GPU's UUID, then hold it");
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_flag("--print", o.print,
              "only print the GPUs NVML sees (index, UUID, name, memory); no API server");
  return c;
}

void OnReservationSignal(int) { kai::reservation::RequestStop(); }

int RunResourceReservationCommand(const kai::reservation::ProgramOptions& o) {
  std::signal(SIGTERM, OnReservationSignal);
  std::signal(SIGINT, OnReservationSignal);
  return kai::reservation::RunResourceReservation(o, std::cout, std::cerr);
}

struct AdmissionArgs {
  kai::webhook::ServerOptions o;
  bool print_config = false;
  std::string ca_bundle, url;
};

CLI::App* AddAdmissionCommand(CLI::App& app, AdmissionArgs& a) {
  auto& o = a.o;
  CLI::App* c = app.add_subcommand(
      "admission", "the admission webhooks: GPU-sharing pods, Queues and PodGroups (KAI's)");
  c->add_option("--bind-address", o.address, "HOST:PORT to serve HTTPS on (default 0.0.0.0:9443)");
  c->add_option("--tls-cert-file", o.cert_file, "PEM certificate chain (read again on a change)");
  c->add_option("--tls-key-file", o.key_file, "PEM private key of the certificate");
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--scheduler-name", o.admission.scheduler_name,
                "pods of this scheduler are admitted (default kai-scheduler)");
  c->add_flag("--gpu-sharing-enabled,!--no-gpu-sharing-enabled", o.admission.gpu_sharing_enabled,
              "accept GPU fractions and gpu-memory (default on)");
  c->add_flag("--block-nvidia-visible-devices", o.admission.block_nvidia_visible_devices,
              "containers that request no GPU get NVIDIA_VISIBLE_DEVICES=void");
  c->add_option("--gpu-fraction-runtime-class-name", o.admission.gpu_fraction_runtime_class_name,
                "runtime class for GPU-sharing pods that name none (default nvidia; \"\" = none)");
  c->add_flag("--queue-quota-warnings", o.admission.queue_quota_warnings,
              "warn when a queue's quota exceeds its parent's");
  c->add_flag("--print-webhook-config", a.print_config,
              "print the webhook configurations for --url and --ca-bundle, then exit");
  c->add_option("--ca-bundle", a.ca_bundle, "PEM file of the CA that signed the certificate");
  c->add_option("--url", a.url, "https://HOST:PORT the API server reaches the webhooks at");
  return c;
}

// The leader-election flags of a component whose options hold a scheduler::LeaderOptions.
struct LeaderArgs {
  std::string lease_duration, renew_deadline, retry_period;
};

void AddLeaderFlags(CLI::App* c, bool& elect, kai::scheduler::LeaderOptions& lo, LeaderArgs& a) {
  c->add_flag("--leader-elect", elect, "elect a leader on a Lease; only it writes");
  c->add_option("--leader-elect-namespace", lo.ns, "the Lease's namespace");
  c->add_option("--leader-elect-id", lo.name, "the Lease's name (default " + lo.name + ")");
  c->add_option("--leader-elect-identity", lo.identity, "this process's identity (hostname_pid)");
  c->add_option("--leader-elect-lease-duration", a.lease_duration, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", a.renew_deadline, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", a.retry_period, "e.g. 2s");
}

std::optional<std::string> ParseLeaderFlags(const LeaderArgs& a,
                                            kai::scheduler::LeaderOptions& lo) {
  const std::pair<const char*, std::pair<const std::string*, std::chrono::milliseconds*>> flags[] =
      {{"--leader-elect-lease-duration", {&a.lease_duration, &lo.lease_duration}},
       {"--leader-elect-renew-deadline", {&a.renew_deadline, &lo.renew_deadline}},
       {"--leader-elect-retry-period", {&a.retry_period, &lo.retry_period}}};
  for (const auto& [flag, target] : flags) {
    if (auto e = ParseDurationFlag(flag, *target.first, *target.second)) return e;
  }
  if (lo.renew_deadline >= lo.lease_duration) {
    return "--leader-elect-renew-deadline: must be shorter than the lease duration";
  }
  return std::nullopt;
}

struct PodGrouperArgs {
  kai::podgrouperd::PodGrouperOptions o;
  LeaderArgs leader;
};

CLI::App* AddPodGrouperCommand(CLI::App& app, PodGrouperArgs& a) {
  auto& o = a.o;
  auto& g = o.grouper;
  CLI::App* c = app.add_subcommand(
      "podgrouper", "give the kai scheduler's pods their PodGroups from their workloads (KAI's)");
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--scheduler-name", g.scheduler_name, "pods of this scheduler are grouped");
  c->add_option("--queue-label-key", g.queue_label_key, "the label naming a workload's queue");
  c->add_option("--nodepool-label-key", g.node_pool_label_key, "the node-pool label");
  c->add_flag("--search-legacy-pg,!--no-search-legacy-pg", g.search_for_legacy_pod_groups,
              "keep PodGroups named the legacy way (default on)");
  c->add_flag("--knative-gang-schedule,!--no-knative-gang-schedule", g.knative_gang_schedule,
              "one PodGroup per Knative revision (default on)");
  c->add_option("--default-priorities-configmap-name", g.default_priorities_configmap_name,
                "ConfigMap of per-kind default priority classes");
  c->add_option("--default-priorities-configmap-namespace",
                g.default_priorities_configmap_namespace, "its namespace");
  c->add_option("--max-concurrent", o.max_concurrent, "pods grouped at once (default 4)")
      ->check(CLI::PositiveNumber);
  c->add_option("--metrics-bind-address", o.metrics_address, "HOST:PORT for /metrics");
  c->add_option("--health-probe-bind-address", o.health_address, "HOST:PORT for /healthz, /readyz");
  AddLeaderFlags(c, o.leader_elect, o.leader, a.leader);
  return c;
}

void OnPodGrouperSignal(int) { kai::podgrouperd::RequestPodGrouperStop(); }

int RunPodGrouperCommand(PodGrouperArgs& a) {
  if (auto e = ParseLeaderFlags(a.leader, a.o.leader)) return Fail(*e);
  std::signal(SIGTERM, OnPodGrouperSignal);
  std::signal(SIGINT, OnPodGrouperSignal);
  return kai::podgrouperd::RunPodGrouper(a.o, std::cerr);
}

struct ScaleAdjusterArgs {
  kai::scaleadjusterd::ScaleAdjusterOptions o;
  std::string memory_ratio = "0.1";
  LeaderArgs leader;
};

CLI::App* AddScaleAdjusterCommand(CLI::App& app, ScaleAdjusterArgs& a) {
  auto& o = a.o;
  auto& c = o.adjuster;
  CLI::App* s = app.add_subcommand(
      "scale-adjuster",
      "keep whole-GPU scaling pods for unschedulable GPU-fraction pods, so that cluster "
      "autoscalers add nodes (KAI's node scale adjuster)");
  s->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  s->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  s->add_option("--scaling-pod-image", c.image, "the scaling pods' image");
  s->add_option("--scale-adjust-namespace", c.ns, "the scaling pods' namespace");
  s->add_option("--scheduler-name", c.scheduler_name, "pods of this scheduler are adjusted for");
  s->add_option("--scaling-pod-app-label", c.app_label, "the scaling pods' app label");
  s->add_option("--scaling-pod-service-account", c.service_account,
                "the ServiceAccount the scaling pods run as");
  s->add_option("--gpu-memory-to-fraction-ratio", a.memory_ratio,
                "the GPU share a gpu-memory pod counts as (default 0.1)");
  s->add_option("--cool-down-seconds", c.cool_down_seconds,
                "no scaling pod is created this long after one was deleted (default 60)")
      ->check(CLI::NonNegativeNumber);
  s->add_flag("--leader-elect", o.leader_elect, "elect a leader on a Lease; only it writes");
  s->add_option("--leader-elect-namespace", o.leader_elect_namespace, "the Lease's namespace");
  s->add_option("--leader-elect-id", o.leader_elect_id, "the Lease's name");
  s->add_option("--leader-elect-identity", o.identity, "this process's identity (hostname_pid)");
  s->add_option("--leader-elect-lease-duration", a.leader.lease_duration, "e.g. 15s");
  s->add_option("--leader-elect-renew-deadline", a.leader.renew_deadline, "e.g. 10s");
  s->add_option("--leader-elect-retry-period", a.leader.retry_period, "e.g. 2s");
  s->add_option("--metrics-bind-address", o.metrics_address, "HOST:PORT for /metrics");
  s->add_option("--health-probe-bind-address", o.health_address,
                "HOST:PORT for /healthz and /readyz");
  return s;
}

void OnScaleAdjusterSignal(int) { kai::scaleadjusterd::RequestScaleAdjusterStop(); }

int RunScaleAdjusterCommand(ScaleAdjusterArgs& a) {
  auto ratio =
      kai::scaleadjuster::ParseFractionCenti(a.memory_ratio, "--gpu-memory-to-fraction-ratio");
  if (!ratio.ok()) {
    std::cerr << "kai scale-adjuster: " << ratio.error().message << "\n";
    return kExitBadInput;
  }
  a.o.adjuster.memory_fraction_centi = *ratio;
  kai::scheduler::LeaderOptions lo;
  if (auto e = ParseLeaderFlags(a.leader, lo)) {
    std::cerr << "kai scale-adjuster: " << *e << "\n";
    return kExitBadInput;
  }
  a.o.lease_duration = lo.lease_duration;
  a.o.renew_deadline = lo.renew_deadline;
  a.o.retry_period = lo.retry_period;
  std::signal(SIGTERM, OnScaleAdjusterSignal);
  std::signal(SIGINT, OnScaleAdjusterSignal);
  return kai::scaleadjusterd::RunScaleAdjuster(a.o, std::cerr);
}

void OnAdmissionSignal(int) { kai::webhook::RequestAdmissionStop(); }

int RunAdmissionCommand(const AdmissionArgs& a) {
  if (a.print_config) {
    if (a.ca_bundle.empty() || a.url.empty()) {
      return Fail("--print-webhook-config: needs --ca-bundle FILE and --url https://HOST:PORT");
    }
    if (a.url.rfind("https://", 0) != 0) return Fail("--url: must start with https://");
    std::ifstream in(a.ca_bundle, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in || pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return Fail("--ca-bundle " + a.ca_bundle + ": no PEM certificate in it");
    }
    auto config = kai::admission::WebhookConfigYaml(a.url, pem.str(), a.o.admission.scheduler_name);
    if (!config.ok()) return Fail(config.error().message);
    std::cout << *config;
    return 0;
  }
  if (a.o.cert_file.empty() || a.o.key_file.empty()) {
    return Fail("admission: --tls-cert-file and --tls-key-file are required");
  }
  std::signal(SIGTERM, OnAdmissionSignal);
  std::signal(SIGINT, OnAdmissionSignal);
  return kai::webhook::RunAdmission(a.o, std::cerr);
}

CLI::App* AddInstallCommand(CLI::App& app, kai::run::InstallCommandOptions& o, bool& print) {
  CLI::App* c = app.add_subcommand(
      "install", "print kai's installation (CRDs, RBAC, Deployments, webhooks, priority classes)");
  c->add_flag("--print", print, "write it to stdout, for `kubectl apply -f -` (required)")
      ->required();
  c->add_option("--image", o.image, "the kai image the Deployments run (default kai:latest)");
  c->add_option("--tls-dir", o.tls_dir,
                "keep the webhooks' CA and certificate here (reused when present; default: a "
                "new one every time)");
  c->add_flag("--crds,!--no-crds", o.crds, "include deploy/crds (default on)");
  c->add_flag("--defaults-only", o.defaults_only,
              "only the default queue tree and SchedulingShard, for once the CRDs serve "
              "(`kai controllers --create-defaults` creates them too)");
  return c;
}

struct RunArgs {
  kai::run::AllOptions o;
  std::string components;
  std::string identity;
  LeaderArgs leader;
};

CLI::App* AddRunCommand(CLI::App& app, RunArgs& a) {
  auto& o = a.o;
  CLI::App* c = app.add_subcommand(
      "run",
      "every component (scheduler, binder, podgrouper, controllers, scale-adjuster, admission) in "
      "one process");
  c->add_option("--kubeconfig", o.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", o.context, "kubeconfig context (default: its current-context)");
  c->add_option("--components", a.components,
                "comma-separated components to run (default: all; admission with a certificate)");
  c->add_option("--scheduler-name", o.scheduler.scheduler_name, "the pods' schedulerName");
  c->add_option("--shard", o.scheduler.shard, "SchedulingShard of the scheduler");
  c->add_flag("--leader-elect", o.leader_elect, "every component elects a leader on its Lease");
  c->add_option("--leader-elect-identity", a.identity, "every component's identity (hostname_pid)");
  c->add_option("--leader-elect-lease-duration", a.leader.lease_duration, "e.g. 15s");
  c->add_option("--leader-elect-renew-deadline", a.leader.renew_deadline, "e.g. 10s");
  c->add_option("--leader-elect-retry-period", a.leader.retry_period, "e.g. 2s");
  c->add_option("--metrics-bind-address", o.metrics_address,
                "HOST:PORT of the scheduler's /metrics; the next components take the next ports");
  c->add_option("--health-probe-bind-address", o.health_address,
                "HOST:PORT of the scheduler's /healthz; the next components take the next ports");
  c->add_option("--tls-cert-file", o.admission.cert_file, "the admission server's certificate");
  c->add_option("--tls-key-file", o.admission.key_file, "its private key");
  c->add_option("--snapshot-bind-address", o.scheduler.snapshot_address,
                "HOST:PORT of the scheduler's /debug/snapshot (default 127.0.0.1:8083; \"\": off)");
  c->add_option("--admission-bind-address", o.admission.address,
                "HOST:PORT the webhooks are served on (default 0.0.0.0:9443)");
  c->add_option("--resource-reservation-pod-image", o.binder.reservation.image,
                "the GPU reservation pods' image");
  c->add_flag("--fake-gpu-nodes", o.binder.reservation.fake_gpu_nodes,
              "reservation pods only sleep (test clusters)");
  c->add_flag("--update-pod-eviction-condition,!--no-update-pod-eviction-condition",
              o.scheduler.update_pod_eviction_condition,
              "DisruptionTarget on evicted pods before their delete (default on)");
  c->add_flag("--create-defaults", o.controllers.create_defaults,
              "the controllers create the default queue tree and SchedulingShard when absent");
  return c;
}

void OnRunSignal(int) { kai::run::RequestRunStop(); }

int RunRunCommand(RunArgs& a) {
  auto& o = a.o;
  std::stringstream list(a.components);
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) o.components.push_back(name);
  }
  kai::scheduler::LeaderOptions lo;
  if (auto e = ParseLeaderFlags(a.leader, lo)) {
    std::cerr << "kai run: " << *e << "\n";
    return kExitBadInput;
  }
  lo.identity = a.identity;
  auto same_lease = [&lo](auto& c) {
    c.identity = lo.identity;
    c.lease_duration = lo.lease_duration;
    c.renew_deadline = lo.renew_deadline;
    c.retry_period = lo.retry_period;
  };
  same_lease(o.scheduler);
  same_lease(o.binder);
  same_lease(o.controllers);
  same_lease(o.scale_adjuster);
  same_lease(o.podgrouper.leader);
  o.podgrouper.grouper.scheduler_name = o.scheduler.scheduler_name;
  o.admission.admission.scheduler_name = o.scheduler.scheduler_name;
  o.admission.admission.gpu_sharing_enabled = true;
  std::signal(SIGTERM, OnRunSignal);
  std::signal(SIGINT, OnRunSignal);
  return kai::run::RunAll(o, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kai: a KAI-compatible batch scheduler for GPU clusters"};
  app.require_subcommand(1);
  SimulateArgs sim;
  CLI::App* simulate =
      app.add_subcommand("simulate", "run scheduling cycles on manifests in an embedded cluster");
  kai::cli::AddFilesOption(simulate, sim.files)->required();
  simulate->add_option("--now", sim.now, "the simulated clock, RFC 3339 (default: wall clock)");
  simulate->add_option("--actions", sim.actions,
                       "comma-separated actions to run (default: the shard's, else KAI's five)");
  simulate->add_option("--cycles", sim.cycles, "number of scheduling cycles");
  simulate->add_option("--no-recreate", sim.no_recreate,
                       "PodGroups whose evicted pods are not recreated (stay Releasing)");
  simulate->add_option("-o,--output", sim.output, "table, yaml or json")
      ->check(CLI::IsMember({"table", "yaml", "json"}));
  simulate->add_option("--usage", sim.usage_file,
                       "time-based fair share history (YAML: usageParams, capacity, allocations)");
  simulate->add_flag("--verify-snapshot-cache", sim.verify_snapshot_cache,
                     "check every cycle that the incremental snapshot equals a full build "
                     "(also KAI_VERIFY_SNAPSHOT_CACHE=1)");
  QueuesArgs qa;
  CLI::App* queues = app.add_subcommand("queues", "print the queue tree and explain fair shares");
  kai::cli::AddFilesOption(queues, qa.files);
  queues->add_option("--kubeconfig", qa.kubeconfig, "read a live cluster instead of files");
  queues->add_option("--context", qa.context, "kubeconfig context (default: its current-context)");
  queues->add_option("--shard", qa.shard, "SchedulingShard whose node pool and config to read");
  queues->add_option("--node-pool-label-key", qa.node_pool_key, "the node-pool label");
  queues->add_option("--now", qa.now, "the clock, RFC 3339 (default: wall clock)");
  queues->add_option("--usage", qa.usage_file, "time-based fair share history (YAML)");
  queues->add_option("--usage-dir", qa.usage_dir,
                     "the usage history kai scheduler --usage-dir records");
  queues->add_option("-o,--output", qa.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  kai::cli::ExplainArgs ea;
  CLI::App* explain = kai::cli::AddExplainCommand(app, ea);
  CheckUpdateArgs cu;
  CLI::App* check_update = app.add_subcommand(
      "check-update", "check manifests that replace others as admission would (e.g. minMember)");
  check_update->add_option("--before", cu.before, "the current manifests (file or directory)")
      ->required();
  check_update->add_option("--after", cu.after, "the updated manifests (file or directory)")
      ->required();
  SchedulerArgs sa;
  CLI::App* scheduler = AddSchedulerCommand(app, sa);
  BinderArgs ba;
  CLI::App* binder = AddBinderCommand(app, ba);
  kai::reservation::ProgramOptions ra;
  CLI::App* reservation = AddResourceReservationCommand(app, ra);
  AdmissionArgs aa;
  aa.o.admission.gpu_sharing_enabled = true;  // as KAI's operator deploys it
  CLI::App* admission = AddAdmissionCommand(app, aa);
  PodGrouperArgs pga;
  CLI::App* podgrouper = AddPodGrouperCommand(app, pga);
  kai::run::InstallCommandOptions ia;
  bool install_print = false;
  CLI::App* install = AddInstallCommand(app, ia, install_print);
  RunArgs runa;
  CLI::App* run = AddRunCommand(app, runa);
  ControllersArgs ca;
  CLI::App* controllers = AddControllersCommand(app, ca);
  ScaleAdjusterArgs saa;
  CLI::App* scale_adjuster = AddScaleAdjusterCommand(app, saa);
  kai::cli::WhatIfArgs wia;
  CLI::App* whatif = kai::cli::AddWhatIfCommand(app, wia);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*simulate) return RunSimulate(sim);
    if (*queues) return RunQueues(qa);
    if (*explain) return kai::cli::RunExplain(ea, std::cout, std::cerr);
    if (*check_update) return RunCheckUpdate(cu);
    if (*scheduler) return RunSchedulerCommand(sa);
    if (*binder) return RunBinderCommand(ba);
    if (*reservation) return RunResourceReservationCommand(ra);
    if (*admission) return RunAdmissionCommand(aa);
    if (*podgrouper) return RunPodGrouperCommand(pga);
    if (*install) return kai::run::PrintInstall(ia, std::cout, std::cerr);
    if (*run) return RunRunCommand(runa);
    if (*controllers) return RunControllersCommand(ca);
    if (*scale_adjuster) return RunScaleAdjusterCommand(saa);
    if (*whatif) return kai::cli::RunWhatIfCommand(wia);
  } catch (const std::exception& e) {
    std::cerr << "kai: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
