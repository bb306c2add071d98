// A batch/v1 Job (PG/job/job_grouper.go): one PodGroup per Job, minMember 1 or the Job's
// kai.scheduler/batch-min-member annotation. With --search-legacy-pg, a PodGroup under the name
// older versions gave each pod (pg-<pod>-<job uid>) is kept, so running pods are not re-parented.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// The legacy per-pod name when such a PodGroup exists (KAI's calcPodGroupName).
Result<std::optional<std::string>> LegacyName(const GroupingInput& in) {
  if (!in.env.config().search_for_legacy_pod_groups) return std::optional<std::string>();
  const std::string legacy = "pg-" + in.pod.name + "-" + in.top_owner.uid;
  if (legacy == PodGroupName(in.top_owner)) return std::optional<std::string>();
  const Fetched f =
      in.env.reader().Get({"scheduling.run.ai/v2alpha2", "PodGroup", in.pod.ns, legacy});
  switch (f.status) {
    case FetchStatus::kFound:
      return std::optional<std::string>(legacy);
    case FetchStatus::kNotFound:
      return std::optional<std::string>();
    default:
      return Error{"while searching for the legacy PodGroup " + in.pod.ns + "/" + legacy + " of " +
                   in.top_owner.Ref() + ": " + f.message};
  }
}

class BatchJobGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "BatchJob Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    auto legacy = LegacyName(in);
    if (!legacy) return legacy.error();
    if (legacy->has_value()) {
      md.name = **legacy;
      md.min_member = 1;
      return md;
    }
    auto min = MinMemberAnnotation(in.top_owner, keys::kMinMemberOverrideAnnotation);
    if (!min) return min.error();
    if (*min) md.min_member = **min;
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeBatchJobGrouper() { return std::make_unique<BatchJobGrouper>(); }

}  // namespace kai::podgrouper
