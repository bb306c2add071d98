// A CronJob's pod (PG/cronjobs/crobjob-grouper.go): grouped per run, under the pod's Job (the
// first owner reference of kind Job), never under the CronJob.
#include "kai/core/podgrouper/default_grouper.h"

namespace kai::podgrouper {
namespace {

class CronJobGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "CronJob Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const OwnerReference* job_ref = nullptr;
    for (const OwnerReference& ref : in.pod.owner_refs) {
      if (ref.kind == "Job") {
        job_ref = &ref;
        break;
      }
    }
    if (job_ref == nullptr) {
      return FieldError(in.pod, "metadata.ownerReferences", "no owner reference of kind Job");
    }
    const Fetched job = in.env.reader().Get({"batch/v1", "Job", in.pod.ns, job_ref->name});
    if (job.status != FetchStatus::kFound) {
      return Error{"failed to get Job " + in.pod.ns + "/" + job_ref->name + " of " +
                   in.top_owner.Ref() + ": " + job.message};
    }
    return DefaultMetadata(in, job.object, {});
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeCronJobGrouper() { return std::make_unique<CronJobGrouper>(); }

}  // namespace kai::podgrouper
