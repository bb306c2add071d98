#include "kai/daemons/scheduler/metrics.h"

#include <set>
#include <string_view>
#include <tuple>
#include <unordered_set>

namespace kai::scheduler {
namespace {

using prometheus::Labels;

// KAI's buckets: milliseconds 5 to 2560, and 1 ms to about 33 s for the scenario search.
prometheus::Histogram::BucketBoundaries MillisBuckets() {
  return serve::ExponentialBuckets(5, 2, 10);
}
prometheus::Histogram::BucketBoundaries SearchBuckets() {
  return serve::ExponentialBuckets(0.001, 2, 16);
}

const char* kQueueFamilies[9][2] = {
    {"queue_fair_share_cpu_cores", "CPU fair share of the queue, in cores."},
    {"queue_fair_share_memory_gb", "Memory fair share of the queue, in GB."},
    {"queue_fair_share_gpu", "GPU fair share of the queue, in devices."},
    {"queue_cpu_usage", "Historical CPU usage of the queue (usage store; its units)."},
    {"queue_memory_usage", "Historical memory usage of the queue (usage store; its units)."},
    {"queue_gpu_usage", "Historical GPU usage of the queue (usage store; its units)."},
    {"queue_allocation_cpu_cores", "CPU the queue holds now, in cores (kai)."},
    {"queue_allocation_memory_gb", "Memory the queue holds now, in GB (kai)."},
    {"queue_allocation_gpu", "GPUs the queue holds now, in devices (kai)."},
};

// KAI's three queue labels: queue_name is the displayName when set (its legacy value).
Labels QueueLabels(const SnapQueue& q) {
  const std::string name(q.name);
  const std::string display = q.obj ? q.obj->display_name : "";
  return {{"queue_name", display.empty() ? name : display},
          {"queue_metadata_name", name},
          {"queue_display_name", display}};
}

// cpu cores, memory GB, GPU devices
std::array<double, 3> InUnits(const Resources& r) {
  return {static_cast<double>(r.milli_cpu) / 1000.0, static_cast<double>(r.memory) / 1e9,
          static_cast<double>(r.milli_gpu) / 1000.0};
}

const char* kDisruptiveActions[] = {"reclaim", "preempt", "consolidation"};
const char* kGenerators[] = {"NodeLocalGreedy", "MultiNodeGang"};

}  // namespace

prometheus::Family<prometheus::Gauge>& SchedulerMetrics::Gauges(const std::string& name,
                                                                const std::string& help) {
  return serve::Register(prometheus::BuildGauge(), metrics_, serve::Prefixed(ns_, name), help);
}

prometheus::Family<prometheus::Counter>& SchedulerMetrics::Counters(const std::string& name,
                                                                    const std::string& help) {
  return serve::Register(prometheus::BuildCounter(), metrics_, serve::Prefixed(ns_, name), help);
}

prometheus::Family<prometheus::Histogram>& SchedulerMetrics::Histograms(const std::string& name,
                                                                        const std::string& help) {
  return serve::Register(prometheus::BuildHistogram(), metrics_, serve::Prefixed(ns_, name), help);
}

SchedulerMetrics::SchedulerMetrics(serve::MetricsRegistry& metrics, const std::string& ns)
    : metrics_(metrics),
      ns_(ns),
      e2e_(Gauges("e2e_scheduling_latency_milliseconds",
                  "The last cycle's duration (session and writes), in milliseconds.")
               .Add({})),
      open_(Gauges("open_session_latency_milliseconds",
                   "The last session's opening, plugins included, in milliseconds.")
                .Add({})),
      close_(Gauges("close_session_latency_milliseconds",
                    "The last session's closing, plugins included, in milliseconds.")
                 .Add({})),
      plugin_(Gauges("plugin_scheduling_latency_milliseconds",
                     "Each plugin's session open or close in the last cycle, in milliseconds.")),
      action_(Gauges("action_scheduling_latency_milliseconds",
                     "Each action's run in the last cycle, in milliseconds.")),
      action_jobs_(Gauges("action_pending_jobs",
                          "Pending jobs each action took in the last cycle, by verdict: tried "
                          "(decided), kept (its verdict from the last cycle, nothing it depends on "
                          "having changed) or shared (the verdict of a job of the same shape) "
                          "(kai).")),
      task_latency_(Histograms("task_scheduling_latency_milliseconds",
                               "Pod creation to its bind decision, in milliseconds.")
                        .Add({}, MillisBuckets())),
      bind_latency_(
          Histograms("task_bind_latency_milliseconds", "BindRequest creation, in milliseconds.")
              .Add({}, MillisBuckets())),
      usage_latency_(
          Histograms("usage_query_latency_milliseconds", "A usage database fetch, in milliseconds.")
              .Add({}, MillisBuckets())),
      scheduled_(Counters("podgroups_scheduled_by_action", "PodGroups scheduled, per action.")),
      considered_(Counters("podgroups_acted_on_by_action", "PodGroups tried, per action.")),
      simulated_(Counters("scenarios_simulation_by_action", "Scenarios simulated, per action.")),
      filtered_(Counters("scenarios_filtered_by_action", "Scenarios filtered, per action.")),
      preemption_attempts_(
          Counters("total_preemption_attempts", "Preemptions that found room.").Add({})),
      evicted_(Counters("pod_group_evicted_pods_total", "Pods evicted per PodGroup.")),
      search_jobs_(Counters("scenario_search_jobs_total",
                            "Jobs the scenario search considered, by result.")),
      budget_exhausted_(Counters("scenario_search_action_budget_exhausted_total",
                                 "Searches stopped by the action's budget.")),
      search_scenarios_(Counters("scenario_search_scenarios_total",
                                 "Scenarios of the search, by generator and state.")),
      action_budget_(Gauges("scenario_search_action_budget_configured_seconds",
                            "The configured search budget of each action, in seconds.")),
      generator_budget_(Gauges("scenario_search_generator_budget_configured_seconds",
                               "The configured search budget of each generator, in seconds.")),
      job_budget_(Gauges("scenario_search_job_budget_configured_seconds",
                         "The configured search budget of one job, in seconds.")
                      .Add({})),
      search_duration_(Histograms("scenario_search_duration_seconds",
                                  "A generator's search for one job, in seconds.")),
      cycles_(Counters("scheduling_cycles_total", "Cycles run (kai).").Add({})),
      binds_(Counters("bind_requests_created_total", "BindRequests written (kai).").Add({})),
      evictions_(Counters("evictions_total", "Pods deleted for an eviction (kai).").Add({})),
      write_failures_(
          Counters("write_failures_total", "API writes that failed after retries (kai).").Add({})),
      not_applied_count_(Gauges("shard_settings_not_applied",
                                "Settings of the SchedulingShard kai did not apply (kai).")
                             .Add({})),
      not_applied_(metrics.registry(), serve::Prefixed(ns, "shard_setting_not_applied"),
                   "Each such setting, by field (kai).") {
  for (const auto& [name, help] : kQueueFamilies) {
    queues_.push_back(
        std::make_unique<serve::GaugeSet>(metrics.registry(), serve::Prefixed(ns, name), help));
  }
}

void SchedulerMetrics::ObserveCycle(std::chrono::steady_clock::duration d) {
  e2e_.Set(static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()));
  cycles_.Increment();
}

void SchedulerMetrics::ObserveSession(const SessionMetrics& m) {
  if (m.open_millis >= 0) open_.Set(static_cast<double>(m.open_millis));
  if (m.close_millis >= 0) close_.Set(static_cast<double>(m.close_millis));
  for (const PluginTiming& p : m.plugins) {
    plugin_.Add({{"plugin", p.plugin}, {"OnSession", p.open ? "OnSessionOpen" : "OnSessionClose"}})
        .Set(static_cast<double>(p.millis));
  }
  for (const ActionMetrics& a : m.actions) ObserveAction(a);
}

void SchedulerMetrics::ObserveAction(const ActionMetrics& a) {
  const Labels action{{"action", a.action}};
  if (a.millis >= 0) action_.Add(action).Set(static_cast<double>(a.millis));
  const std::pair<const char*, int64_t> verdicts[] = {
      {"tried", a.jobs_tried}, {"kept", a.jobs_kept}, {"shared", a.jobs_shared}};
  for (const auto& [verdict, n] : verdicts) {
    action_jobs_.Add({{"action", a.action}, {"verdict", verdict}}).Set(static_cast<double>(n));
  }
  const std::pair<prometheus::Family<prometheus::Counter>*, int64_t> counts[] = {
      {&scheduled_, a.podgroups_scheduled},
      {&considered_, a.podgroups_considered},
      {&simulated_, a.scenarios_simulated},
      {&filtered_, a.scenarios_filtered}};
  for (const auto& [family, n] : counts) {
    if (n > 0) family->Add(action).Increment(static_cast<double>(n));
  }
  if (a.preemption_attempts > 0) {
    preemption_attempts_.Increment(static_cast<double>(a.preemption_attempts));
  }
  for (const JobSearch& s : a.searches) ObserveSearch(a.action, s);
}

void SchedulerMetrics::ObserveSearch(const std::string& action, const JobSearch& s) {
  search_jobs_
      .Add({{"action", action}, {"result", std::string(s.result)}, {"reduced_budget", "false"}})
      .Increment();
  if (s.action_budget_exhausted) budget_exhausted_.Add({{"action", action}}).Increment();
  for (const GeneratorPass& p : s.passes) {
    const std::string generator(p.generator);
    const std::pair<const char*, int64_t> states[] = {
        {"simulated", p.simulated}, {"filtered", p.filtered}, {"duplicate", p.duplicates}};
    for (const auto& [state, n] : states) {
      if (n == 0) continue;
      search_scenarios_.Add({{"action", action}, {"generator", generator}, {"state", state}})
          .Increment(static_cast<double>(n));
    }
    if (p.millis < 0) continue;
    search_duration_
        .Add({{"action", action}, {"generator", generator}, {"result", std::string(p.result)}},
             SearchBuckets())
        .Observe(static_cast<double>(p.millis) / 1000.0);
  }
}

void SchedulerMetrics::ObserveBudgets(const SchedulerConfig& c) {
  for (const char* action : kDisruptiveActions) {
    if (std::find(c.actions.begin(), c.actions.end(), action) == c.actions.end()) continue;
    action_budget_.Add({{"action", action}})
        .Set(static_cast<double>(c.search_time.Action(action).millis) / 1000.0);
  }
  job_budget_.Set(static_cast<double>(c.search_time.job_millis) / 1000.0);
  for (const char* generator : kGenerators) {
    generator_budget_.Add({{"generator", generator}})
        .Set(static_cast<double>(c.search_time.Generator(generator).millis) / 1000.0);
  }
}

void SchedulerMetrics::ObserveQueues(const Snapshot& snap) {
  std::vector<std::vector<std::pair<Labels, double>>> series(queues_.size());
  for (const SnapQueue& q : snap.queues) {
    const Labels labels = QueueLabels(q);
    const std::array<double, 3> fair = InUnits(q.fair_share), held = InUnits(q.allocated);
    for (size_t r = 0; r < 3; ++r) {
      series[r].push_back({labels, fair[r]});
      series[3 + r].push_back({labels, q.usage[r]});
      series[6 + r].push_back({labels, held[r]});
    }
  }
  for (size_t i = 0; i < queues_.size(); ++i) queues_[i]->Replace(series[i]);
}

void SchedulerMetrics::ClearQueues() {
  for (auto& q : queues_) q->Clear();
}

void SchedulerMetrics::ObserveBinds(const Decisions& d, const ClusterState& world,
                                    UnixSeconds now) {
  if (d.binds.empty()) return;
  std::unordered_set<std::string_view> bound;
  for (const BindDecision& b : d.binds) bound.insert(b.pod.uid);
  for (const PodObject& p : world.pods) {
    if (!p.meta.creation || !bound.count(p.meta.uid)) continue;
    task_latency_.Observe(static_cast<double>(now - *p.meta.creation) * 1000.0);
  }
}

void SchedulerMetrics::ObserveCommit(const Decisions& d, const CommitResult& r) {
  binds_.Increment(r.binds);
  evictions_.Increment(r.evictions);
  write_failures_.Increment(r.failed);
  for (double ms : r.bind_millis) bind_latency_.Observe(ms);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& e : d.evictions) {
    std::array<std::string, 5> key{e.pod_group.name, e.pod_group.ns, e.pod_group.uid, node_pool_,
                                   e.action};
    prometheus::Counter*& c = evicted_series_[key];
    if (!c) {
      c = &evicted_.Add({{"podgroup", key[0]},
                         {"namespace", key[1]},
                         {"uid", key[2]},
                         {"nodepool", key[3]},
                         {"action", key[4]}});
    }
    c->Increment();
  }
}

void SchedulerMetrics::ObserveUsageQuery(double millis) { usage_latency_.Observe(millis); }

void SchedulerMetrics::KeepPodGroups(const std::vector<PodGroupObject>& pod_groups) {
  std::lock_guard<std::mutex> lock(mu_);
  if (evicted_series_.empty()) return;
  // One pass over the world and one over the series (uids are unique).
  std::set<std::string_view> series_uids, live;
  for (const auto& [k, c] : evicted_series_) series_uids.insert(k[2]);
  for (const PodGroupObject& pg : pod_groups) {
    if (series_uids.count(pg.meta.uid)) live.insert(pg.meta.uid);
  }
  std::erase_if(evicted_series_, [&](const auto& kv) {
    if (live.count(kv.first[2])) return false;
    evicted_.Remove(kv.second);
    return true;
  });
}

void SchedulerMetrics::ObserveShardSettings(const std::vector<std::string>& not_applied_fields) {
  not_applied_count_.Set(static_cast<double>(not_applied_fields.size()));
  std::vector<std::pair<Labels, double>> series;
  for (const std::string& field : not_applied_fields) series.push_back({{{"field", field}}, 1});
  not_applied_.Replace(series);
}

// The optional kinds not served now: their count, and one labelled sample each.
std::vector<prometheus::MetricFamily> AbsentKindsMetrics(
    const std::string& ns, const std::vector<k8s::ResourceType>& absent) {
  std::vector<serve::Sample> kinds;
  for (const k8s::ResourceType& t : absent) {
    kinds.push_back(
        {{{"api_version", std::string(t.api_version)}, {"kind", std::string(t.kind)}}, 1});
  }
  return {serve::GaugeOf(serve::Prefixed(ns, "informer_kinds_absent"),
                         "Optional kinds the cluster does not serve (kai).",
                         static_cast<double>(absent.size())),
          serve::GaugeFamily(serve::Prefixed(ns, "informer_kind_absent"), "Each such kind (kai).",
                             std::move(kinds))};
}

// The informer's and the background writers' counters (kai's own).
std::vector<prometheus::MetricFamily> WatchAndWriteMetrics(const std::string& ns,
                                                           const informer::InformerStats& st,
                                                           const runtime::WriteStats& bg) {
  std::vector<prometheus::MetricFamily> out;
  for (const auto& [name, help, v] :
       std::initializer_list<std::tuple<const char*, const char*, int64_t>>{
           {"informer_lists_total", "Lists the informer made (kai).", st.lists},
           {"informer_relists_gone_total", "Lists after a watch expired (kai).", st.relists_gone},
           {"informer_watches_total", "Watches the informer opened (kai).", st.watches},
           {"informer_watch_errors_total", "Watches that failed (kai).", st.watch_errors},
           {"informer_events_total", "Watch events applied (kai).", st.events},
           {"informer_decode_errors_total", "Objects that did not decode (kai).", st.decode_errors},
           {"informer_lists_absent_total", "Lists of a kind not served (kai).", st.lists_absent},
           {"background_writes_sent_total", "Status writes and events sent (kai).", bg.sent},
           {"background_writes_dropped_total", "Status writes and events dropped (kai).",
            bg.dropped},
           {"background_writes_failed_total", "Status writes and events failed (kai).", bg.failed},
           {"background_writes_replaced_total", "Queued writes a newer one replaced (kai).",
            bg.replaced}}) {
    out.push_back(serve::CounterOf(serve::Prefixed(ns, name), help, static_cast<double>(v)));
  }
  return out;
}

}  // namespace kai::scheduler
