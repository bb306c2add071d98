#include "kai/kube/serve/controller_metrics.h"

#include <algorithm>

namespace kai::serve {
namespace {

// client-go's workqueue buckets: 10 ns to 10 s, by tens.
prometheus::Histogram::BucketBoundaries QueueBuckets() { return ExponentialBuckets(1e-8, 10, 10); }

// controller-runtime's reconcile_time_seconds buckets.
prometheus::Histogram::BucketBoundaries ReconcileBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3,  0.35, 0.4,  0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5,  3.0,  3.5,  4.0,  4.5, 5.0,
          6.0,   7.0,  8.0,   9.0,  10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0};
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

WorkQueueMetrics::WorkQueueMetrics(MetricsRegistry& m, const std::string& name)
    : name_(name),
      depth_(Register(prometheus::BuildGauge(), m, "workqueue_depth", "Current depth of workqueue")
                 .Add({{"name", name}})),
      adds_(Register(prometheus::BuildCounter(), m, "workqueue_adds_total",
                     "Total number of adds handled by workqueue")
                .Add({{"name", name}})),
      retries_(Register(prometheus::BuildCounter(), m, "workqueue_retries_total",
                        "Total number of retries handled by workqueue")
                   .Add({{"name", name}})),
      queue_duration_(Register(prometheus::BuildHistogram(), m, "workqueue_queue_duration_seconds",
                               "How long in seconds an item stays in workqueue before being "
                               "requested")
                          .Add({{"name", name}}, QueueBuckets())),
      work_duration_(Register(prometheus::BuildHistogram(), m, "workqueue_work_duration_seconds",
                              "How long in seconds processing an item from workqueue takes.")
                         .Add({{"name", name}}, QueueBuckets())) {
  auto& unfinished = Register(prometheus::BuildGauge(), m, "workqueue_unfinished_work_seconds",
                              "How many seconds of work has been done that is in progress.")
                         .Add({{"name", name}});
  auto& longest =
      Register(prometheus::BuildGauge(), m, "workqueue_longest_running_processor_seconds",
               "How many seconds has the longest running processor for workqueue "
               "been running.")
          .Add({{"name", name}});
  m.OnScrape([this, &unfinished, &longest] {
    const Clock::time_point now = Clock::now();
    double total = 0, most = 0;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, since] : started_) {
      const double s = Seconds(now - since);
      total += s;
      most = std::max(most, s);
    }
    unfinished.Set(total);
    longest.Set(most);
  });
}

void WorkQueueMetrics::Added(const std::string& key, size_t depth) {
  adds_.Increment();
  depth_.Set(static_cast<double>(depth));
  std::lock_guard<std::mutex> lock(mu_);
  added_.try_emplace(key, Clock::now());
}

void WorkQueueMetrics::Taken(const std::string& key, size_t depth) {
  depth_.Set(static_cast<double>(depth));
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = added_.find(key); it != added_.end()) {
    queue_duration_.Observe(Seconds(now - it->second));
    added_.erase(it);
  }
  started_[key] = now;
}

void WorkQueueMetrics::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = started_.find(key); it != started_.end()) {
    work_duration_.Observe(Seconds(Clock::now() - it->second));
    started_.erase(it);
  }
}

void WorkQueueMetrics::Retried() { retries_.Increment(); }

ReconcileMetrics::ReconcileMetrics(MetricsRegistry& m, const std::string& controller, int workers)
    : total_(Register(prometheus::BuildCounter(), m, "controller_runtime_reconcile_total",
                      "Total number of reconciliations per controller")),
      controller_(controller),
      errors_(Register(prometheus::BuildCounter(), m, "controller_runtime_reconcile_errors_total",
                       "Total number of reconciliation errors per controller")
                  .Add({{"controller", controller}})),
      time_(Register(prometheus::BuildHistogram(), m, "controller_runtime_reconcile_time_seconds",
                     "Length of time per reconciliation per controller")
                .Add({{"controller", controller}}, ReconcileBuckets())),
      active_(Register(prometheus::BuildGauge(), m, "controller_runtime_active_workers",
                       "Number of currently used workers per controller")
                  .Add({{"controller", controller}})) {
  Register(prometheus::BuildGauge(), m, "controller_runtime_max_concurrent_reconciles",
           "Maximum number of concurrent reconciles per controller")
      .Add({{"controller", controller}})
      .Set(workers);
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    total_.Add({{"controller", controller}, {"result", result}});  // every result from the start
  }
}

void ReconcileMetrics::Observe(std::chrono::steady_clock::duration took, Result result) {
  static const char* const kResults[] = {"success", "error", "requeue", "requeue_after"};
  total_.Add({{"controller", controller_}, {"result", kResults[static_cast<int>(result)]}})
      .Increment();
  if (result == Result::kError) errors_.Increment();
  time_.Observe(Seconds(took));
}

}  // namespace kai::serve
