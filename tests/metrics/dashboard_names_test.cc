// Every metric name the dashboards read (KAI's docs/metrics dashboards and kai's own, as
// tests/metrics/*_dashboards_metric_names.txt list them) is exported by a kai component, or
// listed in excluded_metric_names.txt as another program's. The registries are built as the
// daemons build them, with one observation each so that every family has a series (a family
// without one is not exported, as with Prometheus' Go client).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kai/daemons/binder/controller.h"
#include "kai/daemons/controllers/queue_metrics.h"
#include "kai/daemons/scheduler/metrics.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai {
namespace {

std::set<std::string> Listed(const std::string& file) {
  std::ifstream in(std::string(KAI_SOURCE_DIR) + "/tests/metrics/" + file);
  EXPECT_TRUE(in) << file;
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.insert(name);
  }
  return names;
}

// The sample names a scrape carries (a histogram's _bucket, _sum and _count).
std::set<std::string> Exported(const serve::MetricsRegistry& r) {
  std::set<std::string> names;
  for (const prometheus::MetricFamily& f : r.Collect()) {
    if (f.metric.empty()) continue;
    names.insert(f.name);
    if (f.type == prometheus::MetricType::Histogram) {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(f.name + suffix);
    }
  }
  return names;
}

SessionMetrics OneOfEach() {
  SessionMetrics m;
  m.open_millis = m.close_millis = 1;
  m.plugins.push_back({"proportion", true, 1});
  ActionMetrics a{.action = "preempt", .millis = 2};
  a.podgroups_considered = a.podgroups_scheduled = a.scenarios_simulated = 1;
  a.scenarios_filtered = a.preemption_attempts = 1;
  GeneratorPass pass{.generator = "NodeLocalGreedy", .result = "solved", .simulated = 1};
  pass.millis = 3;
  a.searches.push_back({"solved", true, {pass}});
  m.actions.push_back(a);
  return m;
}

void BuildScheduler(serve::MetricsRegistry& r, scheduler::SchedulerMetrics& m) {
  m.ObserveSession(OneOfEach());
  SchedulerConfig config;
  config.actions = {"allocate", "reclaim", "preempt", "consolidation"};
  m.ObserveBudgets(config);
  QueueObject queue;
  queue.meta.name = "q";
  queue.display_name = "Q";
  Snapshot snap;
  snap.queues.push_back(SnapQueue{.obj = &queue, .name = "q"});
  m.ObserveQueues(snap);
  scheduler::Decisions d;
  d.evictions.push_back({.pod_group = {"ns", "pg", "uid"}, .action = "reclaim"});
  m.ObserveCommit(d, {});
  m.ObserveShardSettings({"spec.args.x"});
  r.AddSource([] {
    auto out = scheduler::WatchAndWriteMetrics("kai", {}, {});
    for (auto& f : scheduler::AbsentKindsMetrics("kai", {k8s::resources::kDeviceClass})) {
      out.push_back(std::move(f));
    }
    return out;
  });
}

TEST(DashboardNames, EveryDashboardNameIsExportedOrExcluded) {
  std::set<std::string> exported;
  {
    serve::MetricsRegistry scheduler;
    scheduler::SchedulerMetrics m(scheduler, "kai");
    BuildScheduler(scheduler, m);
    exported.merge(Exported(scheduler));
  }
  {
    serve::MetricsRegistry controllers;
    serve::WorkQueueMetrics queue(controllers, "controllers");  // lives as long as its scrapes
    queue.Added("k", 1);
    queue.Retried();
    serve::ReconcileMetrics reconciles(controllers, "queue", 1);
    reconciles.Observe(std::chrono::milliseconds(1), serve::ReconcileMetrics::Result::kError);
    controllers::QueueMetrics q;
    q.name = "q";
    controllers.AddSource([q] { return controllersd::QueueMetricFamilies({q}, "kai"); });
    exported.merge(Exported(controllers));
  }
  {
    serve::MetricsRegistry binder;
    binder.AddSource([] { return binder::BinderMetricFamilies({}); });
    exported.merge(Exported(binder));
  }
  const std::set<std::string> excluded = Listed("excluded_metric_names.txt");
  for (const char* file : {"kai_dashboards_metric_names.txt", "own_dashboards_metric_names.txt"}) {
    for (const std::string& name : Listed(file)) {
      EXPECT_TRUE(exported.count(name) || excluded.count(name))
          << name << " (" << file << ") is neither exported nor excluded";
      EXPECT_FALSE(exported.count(name) && excluded.count(name))
          << name << " is exported: it should not be listed as excluded";
    }
  }
}

TEST(DashboardNames, TheExcludedNamesAreDashboardNames) {
  std::set<std::string> used = Listed("kai_dashboards_metric_names.txt");
  used.merge(Listed("own_dashboards_metric_names.txt"));
  for (const std::string& name : Listed("excluded_metric_names.txt")) {
    EXPECT_TRUE(used.count(name)) << name << " is excluded but no dashboard reads it";
  }
}

TEST(DashboardNames, EveryProcessServesTheProcessMetrics) {
  serve::MetricsRegistry r;
  const std::set<std::string> names = Exported(r);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

}  // namespace
}  // namespace kai
