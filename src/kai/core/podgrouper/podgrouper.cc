#include "kai/core/podgrouper/podgrouper.h"

#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

bool MarkedSkip(const Object& o) {
  const std::string* v = o.Annotation(keys::kSkipPodGrouperAnnotation);
  return v != nullptr && *v == "true";
}

Decision Skip(std::string reason) {
  Decision d;
  d.skip = true;
  d.skip_reason = std::move(reason);
  return d;
}

// KAI's addNodePoolLabel.
void AddNodePoolLabel(PodGroupMetadata& md, const Object& pod, const std::string& key) {
  if (key.empty() || md.labels.contains(key)) return;
  if (const std::string* v = pod.Label(key)) md.labels.insert_or_assign(InternedString(key), *v);
}

}  // namespace

Result<Decision> GroupPod(const Object& pod, const ObjectReader& reader,
                          const GrouperConfig& config, const Hub& hub) {
  const std::string scheduler = ScalarAt(pod, {"spec", "schedulerName"});
  if (scheduler != config.scheduler_name) {
    return Skip("scheduled by " +
                (scheduler.empty() ? std::string("the default scheduler") : scheduler));
  }
  if (MarkedSkip(pod)) return Skip("marked " + std::string(keys::kSkipPodGrouperAnnotation));
  if (const std::string* bg = pod.Label(::kai::keys::kBackgroundLabel); bg && *bg == "true") {
    return Skip("a background pod (" + std::string(::kai::keys::kBackgroundLabel) +
                "): in no PodGroup and no queue");
  }
  if (pod.owner_refs.empty() && pod.Annotation(keys::kPodGroupAnnotation) != nullptr) {
    return Skip("an owner-less pod that names its PodGroup");
  }
  auto chain = WalkOwners(pod, reader);
  if (!chain) {
    if (pod.deleting)
      return Skip("being deleted, and its owners are gone: " + chain.error().message);
    return chain.error();
  }
  return GroupChain(*chain, reader, config, hub);
}

Result<Decision> GroupChain(const OwnerChain& chain, const ObjectReader& reader,
                            const GrouperConfig& config, const Hub& hub) {
  for (const Object& owner : chain.owners) {
    if (MarkedSkip(owner)) {
      return Skip("its owner " + owner.Ref() + " is marked " +
                  std::string(keys::kSkipPodGrouperAnnotation));
    }
  }
  GroupingEnv env(reader, config, hub);
  if (!chain.stopped_at.empty()) {
    env.Note("may not read " + chain.stopped_at + ": grouping under " + chain.top().Ref());
  }
  const std::vector<const Object*> owners = chain.OwnerPointers();
  const Grouper& grouper = hub.For(chain.top());
  auto md = grouper.Group({chain.pod, chain.top(), owners, env});
  if (!md) return md.error();
  Decision d;
  d.metadata = std::move(*md);
  AddNodePoolLabel(d.metadata, chain.pod, config.node_pool_label_key);
  d.notes = env.notes();
  return d;
}

std::optional<PodAssignment> PodAssignmentFor(const Object& pod, const PodGroupMetadata& md) {
  PodAssignment want;
  want.pod_group = md.name;
  if (md.ns == pod.ns) {
    if (const SubGroupMetadata* sg = md.SubGroupOfPod(pod.name)) want.sub_group = sg->name;
  }
  const std::string* pg = pod.Annotation(keys::kPodGroupAnnotation);
  const std::string* sg = pod.Label(keys::kSubGroupLabel);
  if (pg != nullptr && *pg == want.pod_group && (sg == nullptr ? "" : *sg) == want.sub_group) {
    return std::nullopt;
  }
  return want;
}

}  // namespace kai::podgrouper
