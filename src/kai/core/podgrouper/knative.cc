// A Knative Service's pod (PG/knative/knative.go), grouped by its Revision (the pod's
// serving.knative.dev/revision label). With --knative-gang-schedule (the default) one PodGroup
// per Revision, owned by it, minMember = its autoscaling.knative.dev/min-scale (1); revisions
// whose pods were grouped one by one (by an older pod grouper) stay so. Otherwise one PodGroup per
// pod, minMember 1, priority class inference.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// The revision's pods, for KAI's isBCRevision.
Result<bool> GroupedPerPod(const GroupingInput& in, const Object& rev) {
  Labels selector;
  selector.insert_or_assign(InternedString(keys::kKnativeRevisionLabel), rev.name);
  auto pods = in.env.reader().List("v1", "Pod", rev.ns, selector);
  if (!pods) return Error{"listing the pods of " + rev.Ref() + ": " + pods.error().message};
  return GroupedOnePerPod(in.env, rev, *pods);
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
