// Wrapper kinds whose next owner is the workload (PG/skiptopowner/skiptopowner.go): an Argo
// Workflow, Run:ai's workloads, a Kubeflow TrainJob, a Dynamo DynamoGraphDeployment. The owner
// below the wrapper (the pod itself when the wrapper owns it directly) is grouped by its own
// kind's grouper, after it takes the wrapper's labels and annotations it lacks, and the wrapper
// kind's default priority class and preemptibility (from the defaults ConfigMap) as labels.
#include <vector>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/hub.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

void AddMissing(Labels& to, const Labels& from) {
  for (const auto& [k, v] : from) to.emplace(k, v);
}

// The wrapper kind's defaults: its priority class (only when it exists) and preemptibility.
void ApplyWrapperDefaults(const GroupingEnv& env, const Object& wrapper, Object& o) {
  const TypeDefault* d = DefaultsForKind(env.Defaults(), wrapper.GroupKind(), wrapper.kind);
  if (d == nullptr) return;
  if (env.PriorityClassExists(d->priority_name)) {
    o.labels.emplace(InternedString(keys::kPriorityClassLabel), d->priority_name);
  }
  if (!d->preemptibility.empty()) {
    o.labels.emplace(InternedString(keys::kPreemptibilityLabel), d->preemptibility);
  }
}

class SkipTopOwnerGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "SkipTopOwner Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const Object& wrapper = in.top_owner;
    // KAI's lastOwner: the owner below the wrapper, else the pod.
    const bool pod_is_next = in.owners.size() <= 1;
    const Object& next = pod_is_next ? in.pod : *in.owners[in.owners.size() - 2];
    // The next owner as its grouper sees it: with the wrapper's defaults, then its metadata.
    Object top = next;
    ApplyWrapperDefaults(in.env, wrapper, top);
    AddMissing(top.labels, wrapper.labels);
    AddMissing(top.annotations, wrapper.annotations);
    // The owners below the wrapper; the next one carries the defaults (not the wrapper's labels).
    std::vector<const Object*> owners;
    Object next_with_defaults = next;
    if (!pod_is_next) {
      ApplyWrapperDefaults(in.env, wrapper, next_with_defaults);
      owners.assign(in.owners.begin(), in.owners.end() - 1);
      owners.back() = &next_with_defaults;
    }
    const Grouper* grouper = in.env.hub().FindExact(top.Group(), top.Version(), top.kind);
    if (grouper == nullptr) grouper = &in.env.hub().Default();
    return grouper->Group({in.pod, top, owners, in.env});
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeSkipTopOwnerGrouper() {
  return std::make_unique<SkipTopOwnerGrouper>();
}

}  // namespace kai::podgrouper
