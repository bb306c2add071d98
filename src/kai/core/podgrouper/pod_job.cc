// A pod that is its own top owner (PG/podjob/podjob.go), or a Spark pod (PG/spark/spark.go):
// Spark's executors are owned by the driver pod, and every pod of one application (driver and
// executors) joins the PodGroup named by its spark-app-selector label.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

bool IsSparkPod(const Object& pod) {
  return pod.Label(keys::kSparkAppNameLabel) != nullptr &&
         pod.Label(keys::kSparkAppSelectorLabel) != nullptr;
}

class PodJobGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Pod Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    if (IsSparkPod(in.pod)) md.name = *in.pod.Label(keys::kSparkAppSelectorLabel);
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakePodJobGrouper() { return std::make_unique<PodJobGrouper>(); }

}  // namespace kai::podgrouper
