#pragma once
// The PodGroup a pod belongs to, as KAI's pod grouper computes it (pkg/podgrouper/podgroup/
// metadata.go): what a grouper returns. podgroup.h turns it into the PodGroup object written to
// the API server.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/model/labels.h"
#include "kai/core/podgrouper/object.h"

namespace kai::podgrouper {

// spec.topologyConstraint (of the PodGroup or of a SubGroup); levels are node labels or aliases.
struct TopologyConstraint {
  std::string topology, required_level, preferred_level;
  bool empty() const {
    return topology.empty() && required_level.empty() && preferred_level.empty();
  }
  friend bool operator==(const TopologyConstraint&, const TopologyConstraint&) = default;
};

struct SubGroupMetadata {
  std::string name;
  std::optional<std::string> parent;  // nullopt: a child of the PodGroup itself
  // KAI's MinAvailable: written as minMember unless min_sub_group is set (a SubGroup with children
  // states minSubGroup; the webhook rejects minMember there).
  int min_member = 0;
  std::optional<int> min_sub_group;
  std::optional<TopologyConstraint> topology;
  // The pods the grouper placed in this SubGroup: the pod being grouped, when it belongs here. The
  // pod grouper labels that pod kai.scheduler/subgroup-name=<name>.
  std::vector<std::string> pods;
  friend bool operator==(const SubGroupMetadata&, const SubGroupMetadata&) = default;
};

struct PodGroupMetadata {
  std::string name, ns;
  Labels labels, annotations;
  OwnerReference owner;  // the PodGroup's one owner reference
  std::string queue;
  std::string priority_class_name;
  std::string preemptibility;  // "", preemptible or non-preemptible
  std::optional<int64_t> preemption_delay_ns;
  std::optional<int64_t> staleness_grace_period_ns;
  int min_member = 1;  // KAI's MinAvailable: written as minMember unless min_sub_group is set
  std::optional<int> min_sub_group;
  std::vector<SubGroupMetadata> sub_groups;
  TopologyConstraint topology;  // spec.topologyConstraint (written even when empty, as KAI does)

  // The SubGroup this metadata places `pod_name` in; nullptr when none.
  const SubGroupMetadata* SubGroupOfPod(std::string_view pod_name) const;
  SubGroupMetadata* FindSubGroup(std::string_view name);
  friend bool operator==(const PodGroupMetadata&, const PodGroupMetadata&) = default;
};

}  // namespace kai::podgrouper
