#pragma once
// The cluster as Kubernetes objects: what manifests and the API server describe. Plain data,
// decoded by k8s/decode.h; the per-cycle dense form lives in snapshot/.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/model/defaults.h"
#include "kai/core/model/dra.h"
#include "kai/core/model/labels.h"
#include "kai/core/model/node_selector.h"
#include "kai/core/model/numa.h"
#include "kai/core/model/storage.h"
#include "kai/core/resource/resources.h"
#include "kai/core/util/compact_vector.h"
#include "kai/core/util/interned_string.h"
#include "kai/core/util/time.h"

namespace kai {

// Memory layout: the object model holds the whole cluster (bench/memory_bench.cc measures bytes
// per object). Strings that repeat across objects (kinds, namespaces, phases, scheduler, priority
// class, queue and node names, label keys) are InternedString (8 bytes; pooled text freed with
// its last handle, so names that come and go do not accumulate); per-object names and uids stay
// std::string. Fields that are usually empty are CompactVector (8 bytes, nothing allocated while
// empty).

struct Taint {
  std::string key, value, effect;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key, op, value, effect;  // op: Equal (default) or Exists
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

struct LabelSelector {
  Labels match_labels;
  std::vector<SelectorRequirement> match_expressions;
  bool matches_nothing = false;  // an absent selector (Kubernetes: nil selects no object)
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

struct PodAffinityTerm {
  LabelSelector selector;
  std::vector<std::string> namespaces;  // empty: the namespace of the pod stating the term
  bool all_namespaces = false;          // namespaceSelector: {} (every namespace)
  std::string topology_key;
  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

struct WeightedPodAffinityTerm {
  int weight = 0;  // 1..100
  PodAffinityTerm term;
  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

// How a node with MIG serves GPU requests (its nvidia.com/mig.strategy label).
enum class MigStrategy : uint8_t { kNone, kSingle, kMixed };

struct NodeObject {
  ObjectMeta meta;
  Resources allocatable;
  Resources capacity;
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready = true;
  CompactVector<std::string> bad_conditions;  // e.g. MemoryPressure, NotReady
  // Read from the labels (k8s/typed_labels.h): nvidia.com/gpu.memory (per device, MiB floored to
  // a multiple of 100), nvidia.com/gpu.count, node-role.kubernetes.io/mig-enabled and
  // nvidia.com/mig.strategy.
  std::optional<int64_t> gpu_memory_mib;
  std::optional<int64_t> gpu_count;
  std::optional<bool> mig_enabled;
  MigStrategy mig_strategy = MigStrategy::kNone;
  friend bool operator==(const NodeObject&, const NodeObject&) = default;
};

struct GpuSharingRequest {
  int64_t fraction_milli = 0;  // gpu-fraction, in milli-GPU (0 when absent)
  int64_t memory_mib = 0;      // gpu-memory
  int64_t num_devices = 1;     // gpu-fraction-num-devices
  bool IsShared() const { return fraction_milli > 0 || memory_mib > 0; }
  friend bool operator==(const GpuSharingRequest&, const GpuSharingRequest&) = default;
};

struct PodObject {
  ObjectMeta meta;
  InternedString scheduler_name;
  InternedString node_name;
  InternedString phase = "Pending";
  InternedString priority_class_name;
  std::optional<int> priority;
  Resources request;  // effective pod request (Kubernetes rules), `pods` = 1
  Labels node_selector;
  CompactVector<NodeSelectorTerm> required_node_affinity;  // ORed terms; empty = none
  CompactVector<Toleration> tolerations;
  CompactVector<PodAffinityTerm> required_pod_affinity;
  CompactVector<PodAffinityTerm> required_pod_anti_affinity;
  CompactVector<WeightedPodAffinityTerm> preferred_pod_affinity;
  CompactVector<WeightedPodAffinityTerm> preferred_pod_anti_affinity;
  bool scheduling_gated = false;
  InternedString nominated_node;
  GpuSharingRequest gpu_sharing;
  CompactVector<std::string> gpu_groups;  // from runai-gpu-group labels
  std::string pod_group;                  // pod-group-name annotation
  InternedString sub_group;               // kai.scheduler/subgroup-name label ("" = default)
  // Read from the labels and annotations (k8s/typed_labels.h):
  std::optional<int64_t> task_priority;  // kai.scheduler/task-priority, when an integer
  bool task_priority_invalid = false;    // that label is set but not an integer
  int8_t role_rank = 2;                  // 0: kubeflow master/launcher, 1: ray head, 2: others
  bool reservation = false;              // app=kai-resource-reservation (the binder's pods)
  bool background = false;               // kai.scheduler/background=true (a maintenance pod)
  // MIG instances asked by annotation (KAI's legacy MIG pods), in annotation order.
  CompactVector<std::pair<std::string, int64_t>> legacy_mig;
  CompactVector<PodClaimRef> resource_claims;  // spec.resourceClaims (DRA, model/dra.h)
  // The containers' extended resources (names with a domain), for DRA-backed extended resources.
  CompactVector<ContainerExtendedRequest> extended_requests;
  // Zero or one: what the kubelet would NUMA-align, for pods that may need it (model/numa.h).
  CompactVector<PodNumaRequest> numa;
  CompactVector<PodVolumeClaim> volume_claims;  // spec.volumes that are claims (model/storage.h)
  CompactVector<HostPort> host_ports;           // containers' ports with a hostPort
  friend bool operator==(const PodObject&, const PodObject&) = default;
};

// spec.topologyConstraint of a PodGroup or of one of its SubGroups. Levels are node labels or
// Topology level aliases, resolved against the named Topology when the snapshot is built.
struct TopologyConstraintSpec {
  InternedString topology;
  InternedString required_level;
  InternedString preferred_level;
  friend bool operator==(const TopologyConstraintSpec&, const TopologyConstraintSpec&) = default;
};

// One entry of spec.subGroups: a node of the PodGroup's SubGroup tree. Entries with children are
// SubGroupSets (min_sub_group applies); entries without are PodSets (min_member applies; pods join
// them by the kai.scheduler/subgroup-name label).
struct SubGroupSpec {
  std::string name, parent;  // parent "" = the PodGroup itself (the root)
  std::optional<int> min_member;
  std::optional<int> min_sub_group;
  std::optional<TopologyConstraintSpec> topology_constraint;
  friend bool operator==(const SubGroupSpec&, const SubGroupSpec&) = default;
};

struct PodGroupObject {
  ObjectMeta meta;
  InternedString queue;
  InternedString priority_class_name;
  InternedString preemptibility;  // "", preemptible, non-preemptible, semi-preemptible
  std::optional<int> min_member;
  std::optional<int> min_sub_group;
  CompactVector<SubGroupSpec> sub_groups;
  std::optional<TopologyConstraintSpec> topology_constraint;  // only when its topology is set
  std::optional<int64_t> preemption_delay_seconds;
  std::optional<int64_t> staleness_grace_seconds;
  std::optional<UnixSeconds> last_start;
  std::optional<UnixSeconds> stale_since;
  std::optional<UnixSeconds> last_eviction;
  bool has_scheduling_conditions = false;  // status.schedulingConditions is not empty
  friend bool operator==(const PodGroupObject&, const PodGroupObject&) = default;
};

// One resource of a queue. Amounts in kai units (milli-GPU, millicores, bytes); -1 = unlimited.
struct QueueResource {
  int64_t quota = 0;
  int64_t limit = 0;
  int64_t weight_milli = 0;  // overQuotaWeight * 1000
  friend bool operator==(const QueueResource&, const QueueResource&) = default;
};

struct QueueObject {
  ObjectMeta meta;
  std::string parent;
  std::string display_name;  // spec.displayName (metrics labels)
  std::optional<int> priority;
  bool has_resources = false;
  QueueResource gpu, cpu, memory;
  std::optional<int64_t> preempt_min_runtime;
  std::optional<int64_t> reclaim_min_runtime;
  friend bool operator==(const QueueObject&, const QueueObject&) = default;
};

struct PriorityClassObject {
  ObjectMeta meta;
  int value = 0;
  bool global_default = false;
  friend bool operator==(const PriorityClassObject&, const PriorityClassObject&) = default;
};

struct TopologyLevel {
  std::string node_label, alias;
  friend bool operator==(const TopologyLevel&, const TopologyLevel&) = default;
};

struct TopologyObject {
  ObjectMeta meta;
  std::vector<TopologyLevel> levels;
  friend bool operator==(const TopologyObject&, const TopologyObject&) = default;
};

// A NodeResourceTopology (topology.node.k8s.io/v1alpha2): one node's NUMA zones (model/numa.h).
struct NodeTopologyObject {
  ObjectMeta meta;  // metadata.name is the node's name
  NumaPolicy policy = NumaPolicy::kNone;
  NumaScope scope = NumaScope::kContainer;
  std::vector<NumaZoneObject> zones;
  friend bool operator==(const NodeTopologyObject&, const NodeTopologyObject&) = default;
};

struct BindRequestObject {
  ObjectMeta meta;
  std::string pod_name;
  std::string selected_node;
  std::string received_resource_type;
  std::vector<std::string> selected_gpu_groups;
  int gpu_count = 0;                               // spec.receivedGPU.count
  std::string gpu_portion;                         // spec.receivedGPU.portion, as written ("0.50")
  std::vector<ClaimAllocation> claim_allocations;  // spec.resourceClaimAllocations
  std::optional<ExtendedClaimAllocation> extended_allocation;  // spec.extendedResource...
  std::string phase;                                           // "", Pending, Succeeded, Failed
  std::optional<int> backoff_limit;  // spec.backoffLimit (kai's scheduler, like KAI's, sets none)
  int failed_attempts = 0;           // status.failedAttempts
  NumaPlacementRecord numa_zones;    // spec.predictedNUMAZones
  friend bool operator==(const BindRequestObject&, const BindRequestObject&) = default;
};

struct PluginSetting {
  std::string name;
  std::optional<bool> enabled;
  std::optional<int> priority;
  std::map<std::string, std::string> arguments;
  bool has_arguments = false;
  friend bool operator==(const PluginSetting&, const PluginSetting&) = default;
};

struct ActionSetting {
  std::string name;
  std::optional<bool> enabled;
  std::optional<int> priority;
  friend bool operator==(const ActionSetting&, const ActionSetting&) = default;
};

// spec.scenarioSearchBudgets of a SchedulingShard (KAI's alpha time budgets of the victim-scenario
// search), kept as written: the values are Go durations, checked by ConfigFromShard.
struct SearchBudgetsSetting {
  std::map<std::string, std::string> max_action;     // maxActionSearchDuration, by action name
  std::map<std::string, std::string> max_generator;  // maxGeneratorSearchDuration, by generator
  std::optional<std::string> max_job, min_job;       // max/minJobSearchDuration
  friend bool operator==(const SearchBudgetsSetting&, const SearchBudgetsSetting&) = default;
};

struct ShardObject {
  ObjectMeta meta;
  std::vector<ActionSetting> actions;
  std::vector<PluginSetting> plugins;
  std::string placement_gpu, placement_cpu;
  std::string partition_label_value;  // spec.partitionLabelValue ("" = the node-pool label absent)
  std::map<std::string, std::string> args;
  std::optional<SearchBudgetsSetting> search_budgets;  // spec.scenarioSearchBudgets
  // spec.queueDepthPerAction, spec.minRuntime.{preempt,reclaim}MinRuntime and spec.kValue, kept
  // as written: ConfigFromShard checks them.
  std::map<std::string, std::string> queue_depth_per_action;
  std::optional<std::string> preempt_min_runtime, reclaim_min_runtime;
  std::optional<std::string> k_value;
  friend bool operator==(const ShardObject&, const ShardObject&) = default;
};

struct ClusterState {
  std::vector<NodeObject> nodes;
  std::vector<PodObject> pods;
  std::vector<PodGroupObject> pod_groups;
  std::vector<QueueObject> queues;
  std::vector<PriorityClassObject> priority_classes;
  std::vector<TopologyObject> topologies;
  std::vector<BindRequestObject> bind_requests;
  std::vector<NodeTopologyObject> node_topologies;
  std::optional<ShardObject> shard;
  DraObjects dra;          // ResourceClaims, templates, DeviceClasses, ResourceSlices
  StorageObjects storage;  // PersistentVolumes, claims, StorageClasses, CSINodes
  std::vector<std::string> warnings;
  // Pods whose spec.schedulerName is this are scheduled; others only occupy their nodes.
  std::string scheduler_name = "kai-scheduler";
};

}  // namespace kai
