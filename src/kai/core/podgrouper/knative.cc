// A Knative Service's pod (PG/knative/knative.go), grouped by its Revision (the pod's
// serving.knative.dev/revision label). With --knative-gang-schedule (the default) one PodGroup
// per Revision, owned by it, minMember = its autoscaling.knative.dev/min-scale (1); revisions
// whose pods were grouped one by one (by an older pod grouper) stay so. Otherwise one PodGroup per
// pod, minMember 1, priority class inference.
#include <set>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// KAI's isBCRevision: the revision's pods already have one PodGroup each.
Result<bool> GroupedPerPod(const GroupingInput& in, const Object& rev) {
  Labels selector;
  selector.insert_or_assign(InternedString(keys::kKnativeRevisionLabel), rev.name);
  auto pods = in.env.reader().List("v1", "Pod", rev.ns, selector);
  if (!pods) return Error{"listing the pods of " + rev.Ref() + ": " + pods.error().message};
  std::set<std::string> groups;
  for (const Object& pod : *pods) {
    const std::string* pg = pod.Annotation(keys::kPodGroupAnnotation);
    if (pg == nullptr) continue;
    if (!groups.insert(*pg).second) return false;  // two pods in one PodGroup: a gang
  }
  if (groups.size() > 1) return true;
  if (groups.empty()) return false;
  const std::string& name = *groups.begin();
  const Fetched f = in.env.reader().Get({"scheduling.run.ai/v2alpha2", "PodGroup", rev.ns, name});
  if (f.status == FetchStatus::kNotFound) return false;
  if (f.status != FetchStatus::kFound) {
    return Error{"failed to get PodGroup " + rev.ns + "/" + name + ", the only one of " +
                 rev.Ref() + ": " + f.message};
  }
  if (f.object.owner_refs.empty()) return FieldError(f.object, "metadata.ownerReferences", "empty");
  const std::string& owner_kind = f.object.owner_refs.front().kind;
  if (owner_kind == rev.kind) return false;
  if (owner_kind == "Pod") return true;
  return FieldError(f.object, "metadata.ownerReferences[0]", "unexpected owner kind " + owner_kind);
}

class KnativeGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "KNative Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const std::string key(keys::kKnativeRevisionLabel);
    const std::string* revision = in.pod.Label(key);
    if (revision == nullptr) {
      return FieldError(in.pod, "metadata.labels." + key, "missing on a Knative Service's pod");
    }
    const Fetched rev =
        in.env.reader().Get({"serving.knative.dev/v1", "Revision", in.pod.ns, *revision});
    if (rev.status != FetchStatus::kFound) {
      return Error{"failed to get Revision " + in.pod.ns + "/" + *revision + " of " + in.pod.Ref() +
                   ": " + rev.message};
    }
    if (!in.env.config().knative_gang_schedule) return PerPod(in, rev.object);
    auto per_pod = GroupedPerPod(in, rev.object);
    if (!per_pod) return per_pod.error();
    return *per_pod ? PerPod(in, rev.object) : PerRevision(in, rev.object);
  }

 private:
  static PodGroupMetadata Common(const GroupingInput& in, const Object& rev) {
    PodGroupMetadata md;
    md.annotations = PodGroupAnnotations(rev, in.pod);
    md.labels = PodGroupLabels(rev, in.pod);
    md.queue = PodGroupQueue(rev, in.pod, in.env.config());
    return md;
  }

  static PodGroupMetadata PerRevision(const GroupingInput& in, const Object& rev) {
    PodGroupMetadata md = Common(in, rev);
    md.priority_class_name = PriorityClassOfTop(in.env, rev, in.pod, keys::kInferencePriorityClass);
    md.ns = rev.ns;
    md.name = PodGroupName(rev);
    md.owner = RefTo(rev);
    md.min_member = 1;
    if (const std::string* v = rev.Annotation(keys::kKnativeMinScaleAnnotation)) {
      if (const auto scale = Atoi(*v); scale && *scale >= INT32_MIN && *scale <= INT32_MAX) {
        md.min_member = static_cast<int>(*scale);
      } else {
        in.env.Note(rev.Ref() + ": invalid " + std::string(keys::kKnativeMinScaleAnnotation) +
                    " \"" + *v + "\", using 1");
      }
    }
    return md;
  }

  static PodGroupMetadata PerPod(const GroupingInput& in, const Object& rev) {
    PodGroupMetadata md = Common(in, rev);
    md.priority_class_name = std::string(keys::kInferencePriorityClass);
    md.ns = in.pod.ns;
    md.name = PodGroupName(in.pod);
    md.owner = RefTo(in.pod);
    md.min_member = 1;
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeKnativeServiceGrouper() { return std::make_unique<KnativeGrouper>(); }

}  // namespace kai::podgrouper
