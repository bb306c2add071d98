#pragma once
// A Queue's status as KAI's queue controller computes it, and its queue metrics.
//   allocated, allocatedNonPreemptible, requested: the sums of its child queues' statuses and of
//     its PodGroups' status.resourcesStatus, as the server holds them (a parent's totals follow
//     its children's once those are written);
//   childQueues: the queues naming it as parent, sorted by name.
// Metrics (KAI's pkg/queuecontroller/metrics, prefix kai_; exported by controllersd/): queue_info
// (1), queue_deserved_gpus (spec GPU quota), queue_quota_cpu_cores (CPU quota / 1000, -1 stays),
// queue_quota_memory_bytes (memory quota x 10^6, -1 stays), queue_allocated_gpus (the first
// allocated resource named */gpu), queue_allocated_cpu_cores, queue_allocated_memory_bytes
// (allocated cpu and memory, rounded to 4 decimals), labelled queue_name, queue_metadata_name
// (both the queue's name) and queue_display_name.
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/controllers/objects.h"

namespace kai::controllers {

// `children`: the queues whose parent is `queue`; `pod_groups`: the PodGroups in it.
QueueStatusValue ComputeQueueStatus(const QueueFacts& queue,
                                    const std::vector<const QueueFacts*>& children,
                                    const std::vector<const PodGroupFacts*>& pod_groups);

// The merge patch of the status subresource that turns `held` into `next` ("{}" when equal).
std::string QueueStatusPatch(const QueueStatusValue& held, const QueueStatusValue& next);

struct QueueMetrics {
  std::string name, display_name;
  double deserved_gpus = 0, quota_cpu_cores = 0, quota_memory_bytes = 0;
  double allocated_gpus = 0, allocated_cpu_cores = 0, allocated_memory_bytes = 0;
  friend bool operator==(const QueueMetrics&, const QueueMetrics&) = default;
};
QueueMetrics QueueMetricsOf(const QueueFacts& queue, const QueueStatusValue& status);

}  // namespace kai::controllers
