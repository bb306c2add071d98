#pragma once
// Every label, annotation and well-known name that kai reads or writes, in one place.
#include <string_view>

#include "kai/model/defaults.h"

namespace kai::keys {

inline constexpr std::string_view kSchedulerName = "kai-scheduler";
inline constexpr std::string_view kQueueLabel = "kai.scheduler/queue";
inline constexpr std::string_view kPodGroupAnnotation = "pod-group-name";
inline constexpr std::string_view kSubGroupLabel = "kai.scheduler/subgroup-name";
using ::kai::kDefaultSubGroup;
inline constexpr std::string_view kTaskPriorityLabel = "kai.scheduler/task-priority";
inline constexpr std::string_view kGpuFraction = "gpu-fraction";
inline constexpr std::string_view kGpuMemory = "gpu-memory";
inline constexpr std::string_view kGpuFractionNumDevices = "gpu-fraction-num-devices";
inline constexpr std::string_view kGpuGroupLabel = "runai-gpu-group";
inline constexpr std::string_view kReceivedResourceType = "received-resource-type";
inline constexpr std::string_view kLastStartTimestamp = "kai.scheduler/last-start-timestamp";
inline constexpr std::string_view kStaleTimestamp = "kai.scheduler/stale-podgroup-timestamp";
inline constexpr std::string_view kLastEvictionTimestamp = "kai.scheduler/last-eviction-timestamp";
inline constexpr std::string_view kStalenessGracePeriod = "kai.scheduler/staleness-grace-period";
inline constexpr std::string_view kPreemptibilityLabel = "kai.scheduler/preemptibility";
inline constexpr std::string_view kNodeGpuMemory = "nvidia.com/gpu.memory";
inline constexpr std::string_view kNodeGpuCount = "nvidia.com/gpu.count";
inline constexpr std::string_view kMigEnabledLabel = "node-role.kubernetes.io/mig-enabled";
inline constexpr std::string_view kMigStrategyLabel = "nvidia.com/mig.strategy";
inline constexpr std::string_view kKubeflowJobRole = "training.kubeflow.org/job-role";
inline constexpr std::string_view kRayNodeType = "ray.io/node-type";
// Root topology constraint of a workload (KAI's pod grouper copies them to the PodGroup spec).
inline constexpr std::string_view kTopologyAnnotation = "kai.scheduler/topology";
inline constexpr std::string_view kTopologyRequiredAnnotation =
    "kai.scheduler/topology-required-placement";
inline constexpr std::string_view kTopologyPreferredAnnotation =
    "kai.scheduler/topology-preferred-placement";

// Label app=<this> marks the binder's GPU reservation pods (KAI IsKaiUtilityPod).
inline constexpr std::string_view kReservationAppLabel = "kai-resource-reservation";

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
using ::kai::kMigResourcePrefix;

// KAI's defaults (model/defaults.h).
using ::kai::kDefaultJobPriority;
using ::kai::kDefaultQueuePriority;
using ::kai::kNonPreemptiblePriority;
using ::kai::kStuckInReleasingSeconds;

}  // namespace kai::keys
