#pragma once
// The label and annotation keys only the pod grouper reads or writes (KAI's
// pkg/podgrouper/podgrouper/plugins/constants/constants.go, and the labels the workload operators
// set on their pods), beside the shared ones of k8s/keys.h.
#include <string_view>

#include "kai/core/k8s/keys.h"

namespace kai::podgrouper::keys {

// The shared keys the pod grouper reads, under the same prefix.
using ::kai::keys::kKubeflowJobRole;
using ::kai::keys::kPodGroupAnnotation;
using ::kai::keys::kPreemptibilityLabel;
using ::kai::keys::kQueueLabel;
using ::kai::keys::kSchedulerName;
using ::kai::keys::kStalenessGracePeriod;
using ::kai::keys::kSubGroupLabel;
using ::kai::keys::kTopologyAnnotation;
using ::kai::keys::kTopologyPreferredAnnotation;
using ::kai::keys::kTopologyRequiredAnnotation;

inline constexpr std::string_view kSkipPodGrouperAnnotation = "kai.scheduler/skip-podgrouper";
inline constexpr std::string_view kTopOwnerMetadataAnnotation = "kai.scheduler/top-owner-metadata";
inline constexpr std::string_view kNodePoolLabel = "kai.scheduler/node-pool";
inline constexpr std::string_view kPriorityClassLabel = "priorityClassName";
inline constexpr std::string_view kProjectLabel = "project";
inline constexpr std::string_view kUserLabel = "user";
inline constexpr std::string_view kPreemptionDelayAnnotation = "kai.scheduler/preemption-delay";
inline constexpr std::string_view kMinMemberOverrideAnnotation = "kai.scheduler/batch-min-member";
// A Deployment's minMember when it has one PodGroup (KAI v0.18).
inline constexpr std::string_view kMinMemberAnnotation = "kai.scheduler/min-member";
inline constexpr std::string_view kSegmentSizeAnnotation = "kai.scheduler/segment-size";
inline constexpr std::string_view kSegmentRequiredAnnotation =
    "kai.scheduler/segment-topology-required-placement";
inline constexpr std::string_view kSegmentPreferredAnnotation =
    "kai.scheduler/segment-topology-preferred-placement";
inline constexpr std::string_view kDefaultQueueName = "default-queue";
inline constexpr std::string_view kTrainPriorityClass = "train";
inline constexpr std::string_view kBuildPriorityClass = "build";
inline constexpr std::string_view kInferencePriorityClass = "inference";
inline constexpr std::string_view kKubeflowReplicaType = "training.kubeflow.org/replica-type";
inline constexpr std::string_view kKubeflowReplicaIndex = "training.kubeflow.org/replica-index";
inline constexpr std::string_view kKubeflowJobName = "training.kubeflow.org/job-name";
inline constexpr std::string_view kJobSetReplicatedJobLabel =
    "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr std::string_view kJobSetJobIndexLabel = "jobset.sigs.k8s.io/job-index";
inline constexpr std::string_view kLwsSizeAnnotation = "leaderworkerset.sigs.k8s.io/size";
inline constexpr std::string_view kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
inline constexpr std::string_view kLwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index";
inline constexpr std::string_view kRayNodeGroupLabel = "ray.io/group";
inline constexpr std::string_view kRayPriorityClassLabel = "ray.io/priority-class-name";
inline constexpr std::string_view kKnativeRevisionLabel = "serving.knative.dev/revision";
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";
inline constexpr std::string_view kKnativeMinScaleAnnotation = "autoscaling.knative.dev/min-scale";
inline constexpr std::string_view kSparkAppNameLabel = "spark-app-name";
inline constexpr std::string_view kSparkAppSelectorLabel = "spark-app-selector";

}  // namespace kai::podgrouper::keys
