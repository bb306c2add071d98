#include "kai/daemons/scheduler/scheduler.h"

#include <unistd.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>
#include <tuple>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/encode.h"
#include "kai/core/sim/output.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/compare.h"
#include "kai/daemons/scheduler/commit.h"
#include "kai/daemons/scheduler/decisions.h"
#include "kai/daemons/scheduler/metrics.h"
#include "kai/daemons/scheduler/shard_status.h"
#include "kai/daemons/scheduler/usage_recorder.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/runtime/server.h"

namespace kai::scheduler {
namespace {

namespace res = k8s::resources;

std::string SelectorFor(const std::string& key, const std::string& value) {
  // KAI's rule: an empty partition value means the node-pool label is absent.
  return "labelSelector=" + k8s::UrlEscape(value.empty() ? "!" + key : key + "=" + value);
}

// The kinds the scheduler watches. Nodes, Queues, PodGroups and BindRequests are the shard's
// (by node-pool label); pods are all watched (other schedulers' pods occupy nodes), except
// Failed ones, which hold nothing (KAI's filter). DRA objects and NodeResourceTopologies are
// optional: a cluster that does not serve them (or does not grant them) has none, and the
// reflectors look again every minute.
std::vector<informer::WatchSpec> WatchesFor(const SchedulerOptions& o, const std::string& pool) {
  const std::string sel = SelectorFor(o.node_pool_key, pool);
  std::vector<informer::WatchSpec> specs = {
      {res::kNode, sel},
      {res::kPod, "fieldSelector=" + k8s::UrlEscape("status.phase!=Failed")},
      {res::kPodGroup, sel},
      {res::kQueue, sel},
      {res::kPriorityClass, ""},
      {res::kTopology, ""},
      {res::kBindRequest, sel},
      {res::kDeviceClass, "", true},
      {res::kResourceClaim, "", true},
      {res::kResourceClaimTemplate, "", true},
      {res::kResourceSlice, "", true},
      {res::kNodeResourceTopology, "", true},
      // Volumes in placement (predicates plugin): every cluster serves these.
      {res::kPersistentVolume, ""},
      {res::kPersistentVolumeClaim, ""},
      {res::kStorageClass, ""},
      {res::kCsiNode, ""},
  };
  if (!o.shard.empty()) {
    specs.push_back({res::kShard, "fieldSelector=" + k8s::UrlEscape("metadata.name=" + o.shard)});
  }
  return specs;
}

// The shard, read once before the watches start: they filter by its partition value, and its
// usageDBConfig is read at start (as KAI's scheduler reads it from its config file). An empty
// document without a shard.
Result<doc::Document> ReadShard(const k8s::ApiClient& client, const std::string& shard) {
  if (shard.empty()) return doc::Document();
  const std::string path = k8s::ObjectPath(res::kShard, "", shard);
  const k8s::HttpResponse r = client.Get(path);
  if (r.status == 404) return Error{"--shard: SchedulingShard \"" + shard + "\" not found"};
  if (!r.ok()) return Error{k8s::Describe({"GET", path}, r)};
  auto d = doc::ParseJson(r.body);
  if (!d.ok()) return Error{path + ": " + d.error().message};
  return std::move(d.value());
}

doc::Node ShardSpec(const doc::Document& shard) {
  const auto roots = shard.Roots();
  return roots.empty() ? doc::Node() : roots.front()["spec"];
}

// The node pool scheduled: --partition-label-value, else the shard's partitionLabelValue.
std::string PoolOf(const SchedulerOptions& o, const doc::Document& shard) {
  if (!o.partition_label_value.empty()) return o.partition_label_value;
  return std::string(ShardSpec(shard)["partitionLabelValue"].Scalar());
}

// The shard with the scheduler arguments of the command line under its own spec.args.
std::optional<ShardObject> WithFlagArgs(const SchedulerOptions& o,
                                        const std::optional<ShardObject>& shard) {
  if (o.args.empty()) return shard;
  ShardObject s = shard.value_or(ShardObject{});
  for (const auto& [key, value] : o.args) s.args.emplace(key, value);
  return s;
}

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Print(const sim::CycleReport& report, UnixSeconds now, const std::string& format,
           std::ostream& out) {
  const std::vector<sim::CycleReport> one{report};
  if (format == "json") {
    sim::WriteJson(one, out, FormatRfc3339(now));
  } else if (format == "yaml") {
    sim::WriteYaml(one, out);
  } else {
    sim::WriteTable(one, out);
  }
}

class Loop final : public runtime::Component {
 public:
  Loop(const SchedulerOptions& o, runtime::Manager& m, std::ostream& out)
      : o_(o), m_(m), client_(m.client()), out_(out) {
    registry_.AddSource([this] { return WatchMetrics(); });
  }

  Status Start() override {
    auto shard = AwaitShard();
    if (!shard.ok()) return shard.error();
    if (m_.Stopping()) return Ok();
    pool_ = PoolOf(o_, *shard);
    if (auto e = OpenUsage(ShardSpec(*shard))) return Error{*e};
    informer::InformerOptions io;
    io.hub = o_.watch_hub;
    io.log = m_.Logger();
    io.recheck_absent = o_.unserved_recheck;
    informer_ = std::make_unique<informer::Informer>(client_, WatchesFor(o_, pool_), io);
    informer_->Start();
    return Ok();
  }

  Status Sync(std::chrono::milliseconds timeout) override {
    if (!informer_->WaitForFirstLists(timeout)) {
      return Error{
          "the caches did not sync within the time-out (is the API server reachable and are "
          "kai's CRDs installed? see deploy/crds)"};
    }
    CommitOptions co;
    co.scheduler_name = o_.scheduler_name;
    co.node_pool_key = o_.node_pool_key;
    co.node_pool_value = pool_;
    co.max_in_flight = o_.max_in_flight;
    co.background_deferral = o_.status_write_deferral;
    co.update_pod_eviction_condition = o_.update_pod_eviction_condition;
    co.log = m_.Logger();
    committer_ = std::make_unique<Committer>(client_, informer_.get(), co);
    world_.scheduler_name = o_.scheduler_name;
    return Ok();
  }

  bool Synced() const override { return informer_ && informer_->Synced(); }

  // A standby decides every cycle too (it takes over warm) and writes nothing.
  bool DecidesAsStandby() const override { return true; }

  int Run() override {
    if (m_.electing() && o_.once) {
      // --once writes its one cycle: it waits to lead (a standby would decide and write nothing).
      const auto deadline =
          std::chrono::steady_clock::now() + o_.lease_duration * 2 + o_.sync_timeout;
      while (!m_.Leading() && !m_.Stopping() && std::chrono::steady_clock::now() < deadline) {
        m_.Sleep(std::chrono::milliseconds(20));
      }
      if (!m_.Leading()) return Fail(1, "--once: did not become the leader in time");
    }
    return Cycles();
  }

  // Queued status writes and events get a few seconds to go out; the rest are dropped (and
  // counted): a restarted scheduler writes the statuses again from what it reads. A standby's,
  // and all of them after a lost lease, are dropped (the fence would refuse them anyway).
  void Stop(bool lease_lost) override {
    if (committer_ && !lease_lost && Leading() &&
        !committer_->FlushBackground(std::chrono::seconds(5))) {
      Log("stopping with status writes or events unwritten");
    }
    if (committer_ && (lease_lost || !Leading())) committer_->Abandon();
    if (usage_) usage_->Close();
    if (informer_) informer_->Stop();
  }

  // A copy under the lock, encoded after it: the cycle waits for a copy, not for the YAML.
  std::function<std::string()> DebugSnapshot() override {
    return [this] {
      ClusterState copy;
      {
        std::lock_guard<std::mutex> lock(world_mu_);
        copy = world_;
      }
      return EncodeManifests(copy);  // what `kai simulate -f` reads
    };
  }

 private:
  int Fail(int code, const std::string& msg) {
    Log("error: " + msg);
    return code;
  }
  void Log(const std::string& l) { m_.Log(l); }

  std::vector<prometheus::MetricFamily> WatchMetrics() const {
    if (!informer_) return {};
    const std::string& ns = o_.metrics_namespace;
    auto out =
        WatchAndWriteMetrics(ns, informer_->stats(),
                             committer_ ? committer_->background_stats() : runtime::WriteStats{});
    for (auto& f : AbsentKindsMetrics(ns, informer_->AbsentKinds())) out.push_back(std::move(f));
    if (usage_) {
      for (auto& f : usage_->Metrics(ns)) out.push_back(std::move(f));
    }
    return out;
  }

  // A long-running scheduler waits for its SchedulingShard (a fresh installation creates it
  // after the CRDs serve: `kai controllers --create-defaults`); --once and --dry-run do not.
  Result<doc::Document> AwaitShard() {
    for (bool said = false;; said = true) {
      auto shard = ReadShard(client_, o_.shard);
      const bool missing = !shard.ok() && shard.error().message.ends_with("not found");
      if (!missing || o_.once || o_.dry_run) {
        if (said && shard.ok()) Log("found SchedulingShard " + o_.shard);
        return shard;
      }
      if (!said) Log(shard.error().message + "; waiting for it");
      m_.Sleep(std::chrono::milliseconds(2000));
      if (m_.Stopping()) return doc::Document();
    }
  }

  std::optional<std::string> OpenUsage(const doc::Node& spec) {
    UsageOptions uo;
    uo.usage_dir = o_.usage_dir;
    uo.prometheus_url = o_.usage_prometheus_url;
    uo.save_interval = o_.usage_save_interval;
    uo.log = m_.Logger();
    uo.env = k8s::ProcessEnv();
    uo.on_fetch_millis = [this](double ms) { metrics_.ObserveUsageQuery(ms); };
    auto r = UsageRecorder::Open(uo, spec, "SchedulingShard " + o_.shard,
                                 o_.now.value_or(WallClockSeconds()));
    if (!r.ok()) return r.error().message;
    usage_ = std::move(r.value());
    return std::nullopt;
  }

  bool Leading() const { return m_.Leading(); }

  std::chrono::milliseconds Period(const SchedulerConfig& c) const {
    if (c.schedule_period_millis) return std::chrono::milliseconds(*c.schedule_period_millis);
    return o_.period.value_or(std::chrono::milliseconds(1000));
  }

  int Cycles() {
    for (int cycle = 1; !m_.Stopping(); ++cycle) {
      const auto started = std::chrono::steady_clock::now();
      {
        std::lock_guard<std::mutex> lock(world_mu_);
        informer_->Apply(world_, changes_);
      }
      if (!o_.shard.empty() && !world_.shard)
        return Fail(2, "--shard: SchedulingShard \"" + o_.shard + "\" not found");
      const UnixSeconds now = o_.now.value_or(WallClockSeconds());
      auto config = CycleConfig(now);
      if (!config.ok()) return Fail(2, config.error().message);
      config->trace = o_.trace;
      auto outcome = OneCycle(*config, now, cycle);
      if (!outcome.ok()) {
        if (o_.once || o_.dry_run) return Fail(2, outcome.error().message);
        Log(outcome.error().message);
      }
      metrics_.ObserveCycle(std::chrono::steady_clock::now() - started);
      if (m_.LeaseLost()) return 0;  // the runtime exits into a restart
      if (o_.once || o_.dry_run) return 0;
      if (o_.max_cycles > 0 && cycle >= o_.max_cycles) return 0;
      m_.Sleep(Period(*config) - (std::chrono::steady_clock::now() - started));
    }
    return 0;
  }

  // The shard's configuration. A long-running scheduler applies what it can and reports the rest
  // (logged once per change, /metrics, the shard's SettingsApplied condition), so that a shard
  // edit never stops scheduling; --once and --dry-run stop on a malformed value, as kai simulate.
  Result<SchedulerConfig> CycleConfig(UnixSeconds now) {
    const std::optional<ShardObject> shard = WithFlagArgs(o_, world_.shard);
    Result<ShardConfig> sc = o_.once || o_.dry_run ? CheckShard(shard) : ApplyShard(shard);
    if (!sc.ok()) return sc.error();
    shard_report_.Observe(sc->not_applied);
    std::vector<std::string> fields;
    for (const NotApplied& n : sc->not_applied) fields.push_back(n.field);
    metrics_.ObserveShardSettings(fields);
    if (!o_.dry_run && Leading()) shard_report_.Write(client_, o_.shard, now);
    return std::move(sc->config);
  }

  Result<bool> OneCycle(const SchedulerConfig& config, UnixSeconds now, int cycle) {
    const auto started = std::chrono::steady_clock::now();
    const bool unchanged = changes_.pods.empty() && !changes_.bind_requests && !changes_.rebuild;
    Snapshot& cached = cache_.Update(world_, now, changes_);
    changes_ = {};
    if (o_.verify_snapshot_cache) {
      const std::string diff = SnapshotDifference(BuildSnapshot(world_, now), cached);
      if (!diff.empty()) {
        Log("cycle " + std::to_string(cycle) +
            ": the incremental snapshot differs from a full build:\n" + diff);
        ++snapshot_mismatches_;
        ClusterChanges rebuild;
        rebuild.rebuild = true;
        cache_.Update(world_, now, rebuild);
      }
    }
    Snapshot snap = cache_.Lend();
    if (usage_) usage_->Apply(snap, now);
    const std::vector<PodStatus> initial = InitialStatuses(snap);
    CycleVerdicts next;
    auto run = sim::RunSession(std::move(snap), config, {}, SteadyMillis,
                               {.previous = &verdicts_,
                                .world_unchanged = unchanged && !o_.verify_snapshot_cache,
                                .next = &next});
    if (!run.ok()) {
      changes_.rebuild = true;  // the snapshot stayed with the failed session
      return run.error();
    }
    Session& s = **run;
    const Decisions d = ExtractDecisions(s, initial, world_);
    // The full report (every pod's line) is printed by --once and --dry-run only.
    std::optional<sim::CycleReport> report;
    if (o_.once || o_.dry_run) report = sim::ReportCycle(s, cycle);
    metrics_.ObserveSession(s.metrics());
    metrics_.ObserveBudgets(config);
    // A standby decides (to stay warm) but exports no queue gauges: the leader's are the ones.
    if (Leading()) {
      metrics_.ObserveQueues(s.snap());
    } else {
      metrics_.ClearQueues();
    }
    if (usage_) usage_->Record(s.snap(), world_, now);
    cache_.Return(s.TakeSnapshot(), s.MovedPods(), s.NodeChanges());
    verdicts_ = std::move(next);
    const auto decided = std::chrono::steady_clock::now();
    if (!o_.dry_run && Leading()) {
      const CommitResult r = committer_->Commit(d, now);
      metrics_.ObserveBinds(d, world_, WallClockSeconds());
      AssumeTimers(d);
      if (!d.binds.empty() || !d.evictions.empty()) {
        using ms = std::chrono::duration<double, std::milli>;
        Log("cycle " + std::to_string(cycle) + ": " + std::to_string(r.binds) + " binds, " +
            std::to_string(r.evictions) + " evictions, " + std::to_string(d.pending.size()) +
            " pending, " + std::to_string(r.failed) + " failed writes; decided in " +
            std::to_string(static_cast<int>(ms(decided - started).count())) + " ms, written in " +
            std::to_string(
                static_cast<int>(ms(std::chrono::steady_clock::now() - decided).count())) +
            " ms");
      }
      for (const auto& e : r.errors) Log(e);
      metrics_.ObserveCommit(d, r);
      metrics_.KeepPodGroups(world_.pod_groups);
    } else if (committer_) {
      committer_->Abandon();  // a standby (or a leader that lost its lease) writes nothing
    }
    if (o_.once && !committer_->FlushBackground(std::chrono::seconds(30))) {
      Log("status writes or events still unwritten after 30 s");
    }
    if (report) Print(*report, now, o_.output, out_);
    return true;
  }

  // The PodGroups' new timers count from the next cycle on, as `kai simulate` carries them, while
  // their writes are still queued (the written object is assumed when the server answers).
  void AssumeTimers(const Decisions& d) {
    std::lock_guard<std::mutex> lock(world_mu_);
    for (const PodGroupDecision& g : d.pod_groups) {
      if (g.annotations.empty() || g.world_index >= world_.pod_groups.size()) continue;
      PodGroupObject& pg = world_.pod_groups[g.world_index];
      pg.last_start = g.last_start;
      pg.stale_since = g.stale_since;
      for (const auto& [key, value] : g.annotations) {
        if (value.empty()) {
          pg.meta.annotations.erase(key);
        } else {
          pg.meta.annotations.insert_or_assign(InternedString(key), value);
        }
      }
    }
  }

  const SchedulerOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;  // the manager's, fenced by the lease
  std::ostream& out_;
  std::string pool_;
  serve::MetricsRegistry& registry_ = m_.registry();
  SchedulerMetrics metrics_{registry_, o_.metrics_namespace};
  std::unique_ptr<informer::Informer> informer_;
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<UsageRecorder> usage_;
  ShardSettingsReport shard_report_{m_.Logger()};
  std::mutex world_mu_;  // the world is read by /debug/snapshot between cycles
  ClusterState world_;
  ClusterChanges changes_;
  CycleVerdicts verdicts_;  // the last cycle's verdicts on its pending jobs
  SnapshotCache cache_;
  int snapshot_mismatches_ = 0;
};

}  // namespace

Result<ClusterState> ReadLiveWorld(const SchedulerOptions& o) {
  auto client = runtime::OpenClient(runtime::ClientOptionsOf(o));
  if (!client.ok()) return client.error();
  auto shard = ReadShard(*client, o.shard);
  if (!shard.ok()) return shard.error();
  const std::string pool = PoolOf(o, *shard);
  informer::Informer informer(*client, WatchesFor(o, pool), {});
  informer.Start();
  const bool synced = informer.WaitForFirstLists(o.sync_timeout);
  ClusterState world;
  world.scheduler_name = o.scheduler_name;
  ClusterChanges changes;
  if (synced) informer.Apply(world, changes);
  informer.Stop();
  if (!synced) return Error{"the cluster's objects could not be listed within the time-out"};
  return world;
}

namespace {

std::optional<std::string> CheckOptions(const SchedulerOptions& o) {
  if (o.output != "table" && o.output != "json" && o.output != "yaml") {
    return "-o: expected table, json or yaml, got \"" + o.output + "\"";
  }
  if (o.period && o.period->count() <= 0) return "--schedule-period: must be positive";
  return std::nullopt;
}

runtime::ManagerOptions SchedulerManagerOptions(const SchedulerOptions& o) {
  runtime::ManagerOptions m = runtime::ManagerOptionsOf("scheduler", o);
  m.leader_elect = o.leader_elect && !o.dry_run;
  // One cycle and out: no snapshot to serve.
  m.snapshot_address = o.once || o.dry_run ? "" : o.snapshot_address;
  return m;
}

}  // namespace

int RunScheduler(const SchedulerOptions& options, std::ostream& out, std::ostream& err) {
  if (auto e = CheckOptions(options)) {
    err << "kai: " << *e << "\n";
    return 2;
  }
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), SchedulerManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Loop>(options, m, out); });
}

int RunScheduler(const SchedulerOptions& options, const k8s::ApiClient& client, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>* also_stop) {
  if (auto e = CheckOptions(options)) {
    err << "kai: " << *e << "\n";
    return 2;
  }
  return runtime::RunComponent(
      client, SchedulerManagerOptions(options), err,
      [&](runtime::Manager& m) { return std::make_unique<Loop>(options, m, out); }, also_stop);
}

}  // namespace kai::scheduler
