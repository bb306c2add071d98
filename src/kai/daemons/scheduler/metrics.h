#pragma once
// The scheduler's metrics on the process registry (serve/metrics.h), with KAI's names, labels
// and units (KAI's pkg/scheduler/metrics; kai-semantics §8.2), each name prefixed with
// --metrics-namespace ("kai"):
//   e2e_scheduling_latency_milliseconds, open_session_latency_milliseconds,
//   close_session_latency_milliseconds, plugin_scheduling_latency_milliseconds{plugin,OnSession},
//   action_scheduling_latency_milliseconds{action}: gauges, the last cycle's;
//   task_scheduling_latency_milliseconds (pod creation to its bind decision),
//   task_bind_latency_milliseconds (a BindRequest's creation), usage_query_latency_milliseconds:
//   histograms; podgroups_scheduled_by_action, podgroups_acted_on_by_action,
//   scenarios_simulation_by_action, scenarios_filtered_by_action {action},
//   total_preemption_attempts, pod_group_evicted_pods_total{podgroup,namespace,uid,nodepool,
//   action}: counters; the scenario_search_* family; queue_fair_share_{cpu_cores,memory_gb,gpu}
//   and queue_{cpu,memory,gpu}_usage (the historical usage of the usage store, as in KAI), with
//   kai's queue_allocation_{gpu,cpu_cores,memory_gb} (what each queue holds now), labelled
//   queue_name (the displayName, else the name), queue_metadata_name, queue_display_name.
//   The queue gauges are the leader's: a standby exports none.
// And kai's own: scheduling_cycles_total, bind_requests_created_total, evictions_total,
// write_failures_total, shard_settings_not_applied, shard_setting_not_applied{field}.
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/session_metrics.h"
#include "kai/daemons/scheduler/commit.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/serve/metrics.h"

namespace kai::scheduler {

class SchedulerMetrics {
 public:
  // `ns`: --metrics-namespace ("" for bare names).
  SchedulerMetrics(serve::MetricsRegistry& metrics, const std::string& ns);

  void ObserveCycle(std::chrono::steady_clock::duration d);
  void ObserveSession(const SessionMetrics& m);
  // The configured scenario search budgets (spec.scenarioSearchBudgets) of the disruptive
  // actions the configuration runs.
  void ObserveBudgets(const SchedulerConfig& c);
  // Fair share, historical usage and allocation per queue, from the closed session's snapshot.
  void ObserveQueues(const Snapshot& snap);
  void ClearQueues();  // a standby exports no queue gauges
  // Pod creation to bind decision, for every pod the cycle binds (`now`: wall clock).
  void ObserveBinds(const Decisions& d, const ClusterState& world, UnixSeconds now);
  void ObserveCommit(const Decisions& d, const CommitResult& r);
  void ObserveUsageQuery(double millis);
  // Drops evicted-pods series of PodGroups that no longer exist (bounded memory).
  void KeepPodGroups(const std::vector<PodGroupObject>& pod_groups);
  // The fields of the SchedulingShard kai did not apply (framework/config.h ApplyShard).
  void ObserveShardSettings(const std::vector<std::string>& not_applied_fields);

 private:
  prometheus::Family<prometheus::Gauge>& Gauges(const std::string& name, const std::string& help);
  prometheus::Family<prometheus::Counter>& Counters(const std::string& name,
                                                    const std::string& help);
  prometheus::Family<prometheus::Histogram>& Histograms(const std::string& name,
                                                        const std::string& help);
  void ObserveAction(const ActionMetrics& a);
  void ObserveSearch(const std::string& action, const JobSearch& s);

  serve::MetricsRegistry& metrics_;
  const std::string ns_;
  prometheus::Gauge &e2e_, &open_, &close_;
  prometheus::Family<prometheus::Gauge>&plugin_, &action_, &action_jobs_;
  prometheus::Histogram &task_latency_, &bind_latency_, &usage_latency_;
  prometheus::Family<prometheus::Counter>&scheduled_, &considered_, &simulated_, &filtered_;
  prometheus::Counter& preemption_attempts_;
  prometheus::Family<prometheus::Counter>& evicted_;
  prometheus::Family<prometheus::Counter>&search_jobs_, &budget_exhausted_, &search_scenarios_;
  prometheus::Family<prometheus::Gauge>&action_budget_, &generator_budget_;
  prometheus::Gauge& job_budget_;
  prometheus::Family<prometheus::Histogram>& search_duration_;
  // Fair share, usage, allocation, each cpu, memory, gpu.
  std::vector<std::unique_ptr<serve::GaugeSet>> queues_;
  prometheus::Counter &cycles_, &binds_, &evictions_, &write_failures_;
  prometheus::Gauge& not_applied_count_;
  serve::GaugeSet not_applied_;
  std::mutex mu_;  // guards evicted_series_ and node_pool_
  // podgroup, namespace, uid, nodepool, action -> the series
  std::map<std::array<std::string, 5>, prometheus::Counter*> evicted_series_;
  std::string node_pool_ = "default";
};

// kai's own, read at scrape time: the optional kinds the cluster does not serve
// (informer_kinds_absent, informer_kind_absent{api_version,kind}) ...
std::vector<prometheus::MetricFamily> AbsentKindsMetrics(
    const std::string& ns, const std::vector<k8s::ResourceType>& absent);
// ... and the informer's and background writers' counters (informer_*_total,
// background_writes_*_total).
std::vector<prometheus::MetricFamily> WatchAndWriteMetrics(const std::string& ns,
                                                           const informer::InformerStats& st,
                                                           const runtime::WriteStats& bg);

}  // namespace kai::scheduler
