// A Kubeflow MPIJob (PG/kubeflow/mpi/mpi-grouper.go): Launcher and Worker replica types required.
// With launcherCreationPolicy WaitForWorkersReady the launcher pod is created once the workers
// run, so while no live launcher pod exists the launcher does not count towards minMember.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"
#include "kai/core/podgrouper/kubeflow.h"

namespace kai::podgrouper {
namespace {

constexpr std::string_view kRequired[] = {"Launcher", "Worker"};

Result<bool> LauncherPodExists(const GroupingInput& in) {
  const Object& job = in.top_owner;
  Labels selector;
  selector.insert_or_assign(InternedString(keys::kKubeflowJobName), job.name);
  selector.insert_or_assign(InternedString(keys::kKubeflowJobRole), "launcher");
  auto pods = in.env.reader().List("v1", "Pod", job.ns, selector);
  if (!pods)
    return Error{"listing the launcher pods of " + job.Ref() + ": " + pods.error().message};
  for (const Object& pod : *pods) {
    if (!pod.deleting) return true;
  }
  return false;
}

class MpiGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "MPI Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    auto md = KubeflowDistributedMetadata(in, "mpiReplicaSpecs", kRequired);
    if (!md) return md.error();
    const Object& job = in.top_owner;
    auto policy = NestedString(job, Root(job), {"spec", "launcherCreationPolicy"});
    if (!policy) return policy.error();
    if (policy->value_or("") != "WaitForWorkersReady") return md;
    auto launcher = LauncherPodExists(in);
    if (!launcher) return launcher.error();
    if (*launcher) return md;
    auto replicas = NestedInt(job, Root(job), {"spec", "mpiReplicaSpecs", "Launcher", "replicas"});
    if (!replicas || !replicas->has_value() || **replicas == 0) {
      return FieldError(job, "spec.mpiReplicaSpecs.Launcher.replicas", "must be set and not 0");
    }
    md->min_member -= static_cast<int>(**replicas);
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeMpiJobGrouper() { return std::make_unique<MpiGrouper>(); }

}  // namespace kai::podgrouper
