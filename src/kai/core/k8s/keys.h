#pragma once
// Every label, annotation and well-known name that kai reads or writes, in one place.
#include <string_view>

#include "kai/core/model/defaults.h"

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
// A maintenance pod (value "true"): in no queue, its place free for workloads, evicted when taken.
inline constexpr std::string_view kBackgroundLabel = "kai.scheduler/background";
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

// The binder's GPU sharing (B/binding/resourcereservation/, B/common/).
inline constexpr std::string_view kAppLabel = "app";
inline constexpr std::string_view kReservationNamespace = "kai-resource-reservation";
inline constexpr std::string_view kScaleAdjustNamespace = "kai-scale-adjust";
inline constexpr std::string_view kReservationPodPrefix = "gpu-reservation";
inline constexpr std::string_view kReservedGpuAnnotation = "run.ai/reserve_for_gpu_index";
inline constexpr std::string_view kMultiGpuGroupLabelPrefix = "runai-gpu-group/";
inline constexpr std::string_view kGpuFractionContainerName = "gpu-fraction-container-name";
inline constexpr std::string_view kSharedGpuConfigMapAnnotation = "runai/shared-gpu-configmap";
inline constexpr std::string_view kNumaPlacementPredicted =
    "kai.scheduler/numa-placement-predicted";
inline constexpr std::string_view kNumaPlacementObserved = "kai.scheduler/numa-placement-observed";
inline constexpr std::string_view kDoNotDisrupt = "karpenter.sh/do-not-disrupt";
inline constexpr std::string_view kNvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES";
inline constexpr std::string_view kRunaiVisibleDevices = "RUNAI-VISIBLE-DEVICES";  // legacy
inline constexpr std::string_view kGpuPortionEnv = "GPU_PORTION";
inline constexpr std::string_view kRunaiNumOfGpusEnv = "RUNAI_NUM_OF_GPUS";  // legacy
// HAMi-core's per-container GPU memory limit ("<MiB>m"), from the capabilities ConfigMap.
inline constexpr std::string_view kCudaDeviceMemoryLimitEnv = "CUDA_DEVICE_MEMORY_LIMIT";
inline constexpr std::string_view kCdiDevicePrefix = "k8s.device-plugin.nvidia.com/gpu=";
inline constexpr std::string_view kSelectedNodeAnnotation = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kDefaultStorageClassAnnotation =
    "storageclass.kubernetes.io/is-default-class";
// A StorageClass whose volumes are made by hand (local volumes): nothing provisions a claim.
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";
using ::kai::kMigResourcePrefix;

// KAI's defaults (model/defaults.h).
using ::kai::kDefaultJobPriority;
using ::kai::kDefaultQueuePriority;
using ::kai::kNonPreemptiblePriority;
using ::kai::kStuckInReleasingSeconds;

}  // namespace kai::keys
