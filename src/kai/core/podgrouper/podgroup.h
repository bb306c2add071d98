#pragma once
// The PodGroup object the pod grouper writes (KAI's pkg/podgrouper/podgroup/handler.go,
// updater.go): built from the metadata, and on update merged with the PodGroup that exists so that
// what others set on it is kept:
//  - spec.queue, spec.markUnschedulable and spec.schedulingBackoff stay as they are (the user's or
//    the admission webhook's choice);
//  - the node-pool label stays as it is (removed from the desired labels when the PodGroup has
//    none), and so does the queue label when set;
//  - spec.topologyConstraint stays when the workload states none;
//  - labels and annotations merge (the grouper's win, others stay: the scheduler's timestamps);
//  - the rest of the spec and the owner reference are the grouper's.
// No write is planned when the PodGroup already says all that.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/model/labels.h"
#include "kai/core/podgrouper/grouper.h"
#include "kai/core/podgrouper/metadata.h"
#include "kai/core/podgrouper/object.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

struct SubGroupSpec {
  std::string name;
  std::optional<std::string> parent;
  std::optional<int> min_member, min_sub_group;
  std::optional<TopologyConstraint> topology;
  friend bool operator==(const SubGroupSpec&, const SubGroupSpec&) = default;
};

struct PodGroupSpec {
  std::optional<int> min_member, min_sub_group;
  std::string queue, priority_class_name, preemptibility;
  TopologyConstraint topology;
  std::vector<SubGroupSpec> sub_groups;
  std::optional<bool> mark_unschedulable;
  std::optional<int> scheduling_backoff;
  std::optional<int64_t> preemption_delay_ns, staleness_grace_period_ns;
  friend bool operator==(const PodGroupSpec&, const PodGroupSpec&) = default;
};

// A scheduling.run.ai/v2alpha2 PodGroup as the pod grouper writes and reads it (status aside).
struct PodGroupManifest {
  std::string name, ns;
  std::string resource_version;  // of the PodGroup read back; an update carries it
  Labels labels, annotations;
  std::vector<OwnerReference> owner_refs;
  PodGroupSpec spec;
  friend bool operator==(const PodGroupManifest&, const PodGroupManifest&) = default;
};

// KAI's createPodGroupForMetadata: minMember unless minSubGroup is set, likewise per SubGroup.
PodGroupManifest NewPodGroup(const PodGroupMetadata& md);
// An existing PodGroup (API JSON or manifest YAML); errors name the PodGroup and field.
Result<PodGroupManifest> DecodePodGroupManifest(const Object& o);

struct ApplyPlan {
  enum class Action { kNone, kCreate, kUpdate };
  Action action = Action::kNone;
  PodGroupManifest object;  // to create, or the existing one updated (its resourceVersion kept)
};
ApplyPlan PlanApply(const std::optional<PodGroupManifest>& existing, const PodGroupMetadata& md,
                    const GrouperConfig& config);

// The object as API JSON (apiVersion, kind, metadata, spec), durations in Go's notation.
std::string EncodePodGroupJson(const PodGroupManifest& pg);

}  // namespace kai::podgrouper
