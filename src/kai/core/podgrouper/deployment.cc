// A Deployment's pod (PG/deployment/deployment_grouper.go, KAI v0.18): one PodGroup per
// Deployment, owned by it (pg-<deployment>-<uid>), minMember 1 or the Deployment's
// kai.scheduler/min-member, so that the replicas share a PodGroup (semi-preemptible quota,
// one status). A Deployment whose pods an older pod grouper put in a PodGroup each keeps that
// (KAI's rule for Knative revisions), as does every Deployment with
// --pod-group-per-deployment=false: one PodGroup per pod, owned by the pod. Priority class
// inference either way.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// spec.selector.matchLabels; empty when the selector has only expressions.
Result<Labels> MatchLabels(const Object& deployment) {
  auto match = NestedMap(deployment, Root(deployment), {"spec", "selector", "matchLabels"});
  if (!match) return match.error();
  Labels out;
  if (!*match) return out;
  for (const doc::Node::Entry& e : (*match)->node.Entries()) {
    if (!e.second.IsScalar()) {
      return FieldError(deployment, (*match)->path + "." + std::string(e.first.Scalar()),
                        "expected a string");
    }
    out.insert_or_assign(InternedString(e.first.Scalar()), std::string(e.second.Scalar()));
  }
  return out;
}

// A pod of `deployment`: its controller is one of the Deployment's ReplicaSets, which the
// Deployment controller names <deployment>-<pod-template-hash>.
bool OwnedBy(const Object& pod, const Object& deployment) {
  if (pod.owner_refs.empty() || pod.owner_refs.front().kind != "ReplicaSet") return false;
  const std::string* hash = pod.Label(keys::kPodTemplateHashLabel);
  return hash != nullptr && pod.owner_refs.front().name == deployment.name + "-" + *hash;
}

Result<bool> GroupedPerPod(const GroupingInput& in, const Object& deployment) {
  auto selector = MatchLabels(deployment);
  if (!selector) return selector.error();
  auto listed = in.env.reader().List("v1", "Pod", deployment.ns, *selector);
  if (!listed)
    return Error{"listing the pods of " + deployment.Ref() + ": " + listed.error().message};
  std::vector<Object> pods;
  for (Object& pod : *listed) {
    if (OwnedBy(pod, deployment)) pods.push_back(std::move(pod));
  }
  return GroupedOnePerPod(in.env, deployment, pods);
}

class DeploymentGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Deployment Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    md.priority_class_name =
        PriorityClassOfTop(in.env, in.top_owner, in.pod, keys::kInferencePriorityClass);
    bool per_pod = !in.env.config().pod_group_per_deployment;
    if (!per_pod) {
      auto legacy = GroupedPerPod(in, in.top_owner);
      if (!legacy) return legacy.error();
      per_pod = *legacy;
    }
    if (per_pod) {
      md.owner = RefTo(in.pod);
      md.name = PodGroupName(in.pod);
      return md;
    }
    auto min = MinMemberAnnotation(in.top_owner, keys::kMinMemberAnnotation);
    if (!min) return min.error();
    if (*min) md.min_member = **min;
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeDeploymentGrouper() { return std::make_unique<DeploymentGrouper>(); }

}  // namespace kai::podgrouper
