#pragma once
// KAI's queue controller metrics (pkg/queuecontroller/metrics) as Prometheus families, one
// gauge series per live queue: queue_info (1), queue_deserved_gpus, queue_quota_cpu_cores,
// queue_quota_memory_bytes, queue_allocated_gpus, queue_allocated_cpu_cores,
// queue_allocated_memory_bytes, labelled queue_name and queue_metadata_name (both the queue's
// name) and queue_display_name (controllers/queue_status.h computes the values).
#include <string>
#include <vector>

#include "kai/core/controllers/queue_status.h"
#include "kai/kube/serve/metrics.h"

namespace kai::controllersd {

// `ns`: --metrics-namespace ("kai").
std::vector<prometheus::MetricFamily> QueueMetricFamilies(
    const std::vector<controllers::QueueMetrics>& queues, const std::string& ns);

}  // namespace kai::controllersd
