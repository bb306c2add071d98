#include "kai/daemons/controllers/queue_metrics.h"

namespace kai::controllersd {
namespace {

struct QueueFamily {
  const char* name;
  const char* help;
  double controllers::QueueMetrics::*value;  // null: 1 (queue_info)
};

constexpr QueueFamily kFamilies[] = {
    {"queue_info", "Queues info", nullptr},
    {"queue_deserved_gpus", "Queue deserved GPUs", &controllers::QueueMetrics::deserved_gpus},
    {"queue_quota_cpu_cores", "Queue quota CPU", &controllers::QueueMetrics::quota_cpu_cores},
    {"queue_quota_memory_bytes", "Queue quota memory",
     &controllers::QueueMetrics::quota_memory_bytes},
    {"queue_allocated_gpus", "Queue allocated GPUs", &controllers::QueueMetrics::allocated_gpus},
    {"queue_allocated_cpu_cores", "Queue allocated CPUs",
     &controllers::QueueMetrics::allocated_cpu_cores},
    {"queue_allocated_memory_bytes", "Queue allocated memory",
     &controllers::QueueMetrics::allocated_memory_bytes},
};

}  // namespace

std::vector<prometheus::MetricFamily> QueueMetricFamilies(
    const std::vector<controllers::QueueMetrics>& queues, const std::string& ns) {
  std::vector<prometheus::MetricFamily> out;
  for (const QueueFamily& f : kFamilies) {
    std::vector<serve::Sample> samples;
    for (const controllers::QueueMetrics& q : queues) {
      samples.push_back({{{"queue_name", q.name},
                          {"queue_metadata_name", q.name},
                          {"queue_display_name", q.display_name}},
                         f.value ? q.*(f.value) : 1.0});
    }
    out.push_back(serve::GaugeFamily(serve::Prefixed(ns, f.name), f.help, std::move(samples)));
  }
  return out;
}

}  // namespace kai::controllersd
