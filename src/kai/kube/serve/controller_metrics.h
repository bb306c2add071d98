#pragma once
// The metrics of a work queue and of the reconciler that drains it, with the names, labels and
// buckets of client-go's workqueue metrics and controller-runtime's reconcile metrics (what
// KAI's controllers export and its controller-runtime dashboard reads):
//   workqueue_depth, workqueue_adds_total, workqueue_retries_total,
//   workqueue_queue_duration_seconds, workqueue_work_duration_seconds (histograms),
//   workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds, labelled
//   name (the queue's);
//   controller_runtime_reconcile_total{controller,result}, controller_runtime_reconcile_errors_
//   total{controller}, controller_runtime_reconcile_time_seconds{controller} (histogram),
//   controller_runtime_active_workers{controller}, controller_runtime_max_concurrent_reconciles
//   {controller}.
// Several queues and controllers share one registry: each adds its own series.
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kai/kube/serve/metrics.h"

namespace kai::serve {

class WorkQueueMetrics {
 public:
  WorkQueueMetrics(MetricsRegistry& metrics, const std::string& name);
  // The queue's events, called under its lock (so in its order). `depth`: ready keys after it.
  void Added(const std::string& key, size_t depth);
  void Taken(const std::string& key, size_t depth);
  void Done(const std::string& key);
  void Retried();

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<prometheus::MetricFamily> InProgress() const;

  const std::string name_;
  prometheus::Gauge& depth_;
  prometheus::Counter &adds_, &retries_;
  prometheus::Histogram &queue_duration_, &work_duration_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> added_, started_;
};

class ReconcileMetrics {
 public:
  enum class Result { kSuccess, kError, kRequeue, kRequeueAfter };
  ReconcileMetrics(MetricsRegistry& metrics, const std::string& controller, int workers);
  void Observe(std::chrono::steady_clock::duration took, Result result);
  // A worker starts (+1) or ends (-1) a reconcile.
  void Active(int delta) { active_.Increment(delta); }

 private:
  prometheus::Family<prometheus::Counter>& total_;
  const std::string controller_;
  prometheus::Counter& errors_;
  prometheus::Histogram& time_;
  prometheus::Gauge& active_;
};

}  // namespace kai::serve
