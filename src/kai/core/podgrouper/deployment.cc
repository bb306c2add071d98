// A Deployment's pod (PG/deployment/deployment_grouper.go): one PodGroup per pod, owned by the
// pod (pg-<pod>-<pod uid>), so that replicas come and go one by one; priority class inference.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

class DeploymentGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Deployment Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    md.owner = RefTo(in.pod);
    md.priority_class_name =
        PriorityClassOfTop(in.env, in.top_owner, in.pod, keys::kInferencePriorityClass);
    md.name = PodGroupName(in.pod);
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeDeploymentGrouper() { return std::make_unique<DeploymentGrouper>(); }

}  // namespace kai::podgrouper
