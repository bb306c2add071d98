#pragma once
// kai podgrouper's decision for one pod (KAI's pkg/podgrouper/pod_controller.go Reconcile, less
// the writes): skip it, or the PodGroup it belongs to. The caller (the front end) then applies the
// PodGroup (podgroup.h PlanApply) and labels the pod (PodAssignmentFor).
#include <optional>
#include <string>
#include <vector>

#include "kai/core/podgrouper/grouper.h"
#include "kai/core/podgrouper/hub.h"
#include "kai/core/podgrouper/metadata.h"
#include "kai/core/podgrouper/object.h"
#include "kai/core/podgrouper/owners.h"
#include "kai/core/podgrouper/reader.h"

namespace kai::podgrouper {

struct Decision {
  bool skip = false;
  std::string skip_reason;         // when skipped
  PodGroupMetadata metadata;       // when not skipped
  std::vector<std::string> notes;  // what KAI only logs (ignored labels, fallbacks)
};

// Skips a pod of another scheduler, one marked kai.scheduler/skip-podgrouper: "true" (or whose
// owner is), an owner-less pod that already names a PodGroup, and a pod being deleted whose owners
// are gone. Otherwise walks the owners, groups by the top owner's kind, and gives the PodGroup the
// pod's node-pool label when the grouper set none. An error (a missing owner, a malformed
// workload) names the object and field.
Result<Decision> GroupPod(const Object& pod, const ObjectReader& reader,
                          const GrouperConfig& config, const Hub& hub = DefaultHub());
// The same from a walked owner chain (the skip rules on the owners included).
Result<Decision> GroupChain(const OwnerChain& chain, const ObjectReader& reader,
                            const GrouperConfig& config, const Hub& hub = DefaultHub());

// What the pod must carry to be in its PodGroup: the pod-group-name annotation, and the
// kai.scheduler/subgroup-name label of the SubGroup the grouper placed it in ("" when none: the
// label is then left as it is). nullopt when the pod already carries both.
struct PodAssignment {
  std::string pod_group;
  std::string sub_group;
};
std::optional<PodAssignment> PodAssignmentFor(const Object& pod, const PodGroupMetadata& md);

}  // namespace kai::podgrouper
