// Grove (PG/grove/grove_grouper.go): a PodCliqueSet (or the older PodGangSet) runs its pods in
// gangs; Grove writes one scheduler.grove.io PodGang per gang and labels each pod with its name
// (grove.io/podgang). The PodGroup is the PodGang's: the default grouper's PodGroup for the PodGang
// (name, owner, queue), a SubGroup per spec.podgroups entry (minMember = its minReplicas, its pod
// references as members), a parent SubGroup per spec.topologyConstraintGroupConfigs entry
// (minSubGroup = the number of PodGang groups it names), and minMember the sum of the
// minReplicas. The workload (the top owner) lends its labels and annotations the PodGang lacks,
// and with them the priority class, preemptibility, preemption delay and topology.
//
// Validation follows KAI's: every error names the PodGang (or the pod) and the field at fault;
// a pod reference to another namespace is refused.
#include <map>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/go_duration.h"
#include "kai/core/podgrouper/grove.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

constexpr std::string_view kPodGangApiVersion = "scheduler.grove.io/v1alpha1";
constexpr std::string_view kPodGangKind = "PodGang";
constexpr std::string_view kPodGangLabel = "grove.io/podgang";
constexpr std::string_view kGroveTopologyAnnotation = "grove.io/topology-name";

Result<Object> FetchPodGang(const GroupingInput& in) {
  const std::string* name = in.pod.Label(kPodGangLabel);
  if (name == nullptr) {
    return FieldError(in.pod, "metadata.labels." + std::string(kPodGangLabel),
                      "missing (a Grove pod names its PodGang there)");
  }
  ObjectKey key{std::string(kPodGangApiVersion), std::string(kPodGangKind), in.pod.ns, *name};
  Fetched f = in.env.reader().Get(key);
  if (f.status == FetchStatus::kFound) return std::move(f.object);
  return Error{"reading PodGang " + in.pod.ns + "/" + *name + " (named by " + in.pod.Ref() +
               "): " + (f.message.empty() ? std::string("not found") : f.message)};
}

// The topology every constraint of the PodGang refers to: grove.io/topology-name, else
// kai.scheduler/topology.
std::string GangTopologyName(const Object& gang) {
  if (const std::string* v = gang.Annotation(kGroveTopologyAnnotation)) return *v;
  if (const std::string* v = gang.Annotation(keys::kTopologyAnnotation)) return *v;
  return "";
}

// <from>.topologyConstraint.packConstraint: nullopt when it states neither level.
Result<std::optional<TopologyConstraint>> PackConstraint(const Object& gang, const Field& from,
                                                         const std::string& topology) {
  auto preferred = NestedString(gang, from, {"topologyConstraint", "packConstraint", "preferred"});
  if (!preferred) return preferred.error();
  auto required = NestedString(gang, from, {"topologyConstraint", "packConstraint", "required"});
  if (!required) return required.error();
  if (!preferred->has_value() && !required->has_value()) {
    return std::optional<TopologyConstraint>();
  }
  if (topology.empty()) {
    const std::string path =
        (from.path.empty() ? "" : from.path + ".") + "topologyConstraint.packConstraint";
    return FieldError(gang, path,
                      "a topology constraint needs a topology name (annotation " +
                          std::string(kGroveTopologyAnnotation) + " or " +
                          std::string(keys::kTopologyAnnotation) + ")");
  }
  return std::optional<TopologyConstraint>(
      TopologyConstraint{topology, required->value_or(""), preferred->value_or("")});
}

Result<std::string> RequiredString(const Object& gang, const Field& from, std::string_view key) {
  auto v = NestedString(gang, from, {key});
  if (!v) return v.error();
  if (!v->has_value()) return FieldError(gang, from.path + "." + std::string(key), "missing");
  return std::move(**v);
}

// One spec.podgroups[i].podReferences entry: a pod of the PodGang's own namespace.
Result<std::string> PodReference(const Object& gang, const Field& ref) {
  if (!ref.node.IsMap()) return FieldError(gang, ref.path, "expected an object");
  auto ns = RequiredString(gang, ref, "namespace");
  if (!ns) return ns.error();
  auto name = RequiredString(gang, ref, "name");
  if (!name) return name.error();
  if (*ns != gang.ns) {
    return FieldError(gang, ref.path,
                      "refers to pod " + *ns + "/" + *name +
                          " in another namespace (a PodGang may only name pods of " + gang.ns +
                          ")");
  }
  return std::move(*name);
}

Result<std::vector<std::string>> PodReferences(const Object& gang, const Field& group) {
  auto refs = NestedSequence(gang, group, {"podReferences"});
  if (!refs) return refs.error();
  if (!refs->has_value()) return FieldError(gang, group.path + ".podReferences", "missing");
  std::vector<std::string> pods;
  for (const Field& ref : **refs) {
    auto name = PodReference(gang, ref);
    if (!name) return name.error();
    pods.push_back(std::move(*name));
  }
  return pods;
}

Result<int> MinReplicas(const Object& gang, const Field& group) {
  auto v = NestedInt(gang, group, {"minReplicas"});
  if (!v) return v.error();
  const std::string path = group.path + ".minReplicas";
  if (!v->has_value()) return FieldError(gang, path, "missing");
  if (**v <= 0) return FieldError(gang, path, "must be greater than 0, got " + std::to_string(**v));
  return static_cast<int>(**v);
}

// One spec.podgroups entry as a leaf SubGroup (its parent is set by the caller).
Result<SubGroupMetadata> LeafSubGroup(const Object& gang, const Field& group,
                                      const std::string& topology) {
  if (!group.node.IsMap()) return FieldError(gang, group.path, "expected an object");
  SubGroupMetadata sg;
  auto name = RequiredString(gang, group, "name");
  if (!name) return name.error();
  sg.name = std::move(*name);
  auto min = MinReplicas(gang, group);
  if (!min) return min.error();
  sg.min_member = *min;
  auto pods = PodReferences(gang, group);
  if (!pods) return pods.error();
  sg.pods = std::move(*pods);
  auto constraint = PackConstraint(gang, group, topology);
  if (!constraint) return constraint.error();
  sg.topology = std::move(*constraint);
  return sg;
}

Result<std::vector<std::string>> StringList(const Object& gang, const Field& from,
                                            std::string_view key) {
  auto items = NestedSequence(gang, from, {key});
  if (!items) return items.error();
  std::vector<std::string> out;
  if (!items->has_value()) return out;
  for (const Field& f : **items) {
    if (!f.node.IsScalar()) return FieldError(gang, f.path, "expected a string");
    out.emplace_back(f.node.Scalar());
  }
  return out;
}

struct Parents {
  std::vector<SubGroupMetadata> sub_groups;
  std::map<std::string, std::string> parent_of;  // PodGang group name -> parent SubGroup
};

// spec.topologyConstraintGroupConfigs: a parent SubGroup per entry that names PodGang groups.
Result<Parents> ParentSubGroups(const Object& gang, const std::string& topology) {
  auto configs = NestedSequence(gang, Root(gang), {"spec", "topologyConstraintGroupConfigs"});
  if (!configs) return configs.error();
  Parents out;
  if (!configs->has_value()) return out;
  for (const Field& config : **configs) {
    if (!config.node.IsMap()) return FieldError(gang, config.path, "expected an object");
    auto name = RequiredString(gang, config, "name");
    if (!name) return name.error();
    auto members = StringList(gang, config, "podGroupNames");
    if (!members) return members.error();
    if (members->empty()) continue;
    for (const std::string& m : *members) out.parent_of[m] = *name;
    auto constraint = PackConstraint(gang, config, topology);
    if (!constraint) return constraint.error();
    SubGroupMetadata sg;
    sg.name = std::move(*name);
    sg.min_sub_group = static_cast<int>(members->size());
    sg.topology = std::move(*constraint);
    out.sub_groups.push_back(std::move(sg));
  }
  return out;
}

// spec.podgroups, each under its parent; adds each minReplicas to `min_member`.
Result<std::vector<SubGroupMetadata>> LeafSubGroups(const Object& gang, const Parents& parents,
                                                    const std::string& topology, int& min_member) {
  auto groups = NestedSequence(gang, Root(gang), {"spec", "podgroups"});
  if (!groups) return groups.error();
  std::vector<SubGroupMetadata> out;
  min_member = 0;
  if (!groups->has_value()) return out;
  for (const Field& group : **groups) {
    auto sg = LeafSubGroup(gang, group, topology);
    if (!sg) return sg.error();
    if (auto it = parents.parent_of.find(sg->name); it != parents.parent_of.end()) {
      sg->parent = it->second;
    }
    min_member += sg->min_member;
    out.push_back(std::move(*sg));
  }
  return out;
}

// spec.topologyConstraint.packConstraint of the PodGang replaces the PodGroup's levels.
Status ApplyGangTopology(const Object& gang, const std::string& topology, PodGroupMetadata& md) {
  auto spec = NestedMap(gang, Root(gang), {"spec"});
  if (!spec) return spec.error();
  if (!spec->has_value()) return Ok();
  auto constraint = PackConstraint(gang, **spec, topology);
  if (!constraint) return constraint.error();
  if (constraint->has_value()) md.topology = **constraint;
  return Ok();
}

Status ApplyGangPriority(const Object& gang, PodGroupMetadata& md) {
  auto priority = NestedString(gang, Root(gang), {"spec", "priorityClassName"});
  if (!priority) return priority.error();
  if (priority->has_value()) md.priority_class_name = **priority;
  return Ok();
}

void AddMissing(Labels& to, const Labels& from) {
  for (const auto& [k, v] : from) to.emplace(k, v);
}

// KAI's parseMetadataFromTopOwner: the merged labels and annotations override the priority class,
// preemptibility and preemption delay, and fill the topology fields still empty.
Status ApplyMergedMetadata(const GroupingEnv& env, const Object& gang, PodGroupMetadata& md) {
  if (auto it = md.labels.find(keys::kPriorityClassLabel); it != md.labels.end()) {
    md.priority_class_name = it->second;
  }
  if (auto it = md.labels.find(keys::kPreemptibilityLabel); it != md.labels.end()) {
    const std::string& v = it->second;
    if (!v.empty() && v != "preemptible" && v != "non-preemptible") {
      return FieldError(gang, "metadata.labels." + std::string(keys::kPreemptibilityLabel),
                        "invalid preemptibility \"" + v +
                            "\" (from the workload's labels): want preemptible or "
                            "non-preemptible");
    }
    md.preemptibility = v;
  }
  if (auto it = md.annotations.find(keys::kPreemptionDelayAnnotation); it != md.annotations.end()) {
    const auto d = ParseGoDurationNanos(it->second);
    if (d && *d >= 0) {
      md.preemption_delay_ns = *d;
    } else {
      env.Note(gang.Ref() + ": ignoring invalid " + std::string(keys::kPreemptionDelayAnnotation) +
               " annotation \"" + it->second + "\" of its workload");
    }
  }
  auto fill = [&](std::string& field, std::string_view key) {
    if (!field.empty()) return;
    if (auto it = md.annotations.find(key); it != md.annotations.end()) field = it->second;
  };
  fill(md.topology.preferred_level, keys::kTopologyPreferredAnnotation);
  fill(md.topology.required_level, keys::kTopologyRequiredAnnotation);
  fill(md.topology.topology, keys::kTopologyAnnotation);
  return Ok();
}

Status AddSubGroups(const Object& gang, const std::string& topology, PodGroupMetadata& md) {
  auto parents = ParentSubGroups(gang, topology);
  if (!parents) return parents.error();
  int min_member = 0;
  auto leaves = LeafSubGroups(gang, *parents, topology, min_member);
  if (!leaves) return leaves.error();
  md.sub_groups = std::move(parents->sub_groups);
  for (SubGroupMetadata& sg : *leaves) md.sub_groups.push_back(std::move(sg));
  md.min_member = min_member;
  return Ok();
}

class GroveGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Grove Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    auto gang = FetchPodGang(in);
    if (!gang) return gang.error();
    PodGroupMetadata md = DefaultMetadata(in, *gang, {});
    const std::string topology = GangTopologyName(*gang);
    if (auto s = ApplyGangTopology(*gang, topology, md); !s) return s.error();
    if (auto s = ApplyGangPriority(*gang, md); !s) return s.error();
    AddMissing(md.labels, in.top_owner.labels);
    AddMissing(md.annotations, in.top_owner.annotations);
    if (auto s = ApplyMergedMetadata(in.env, *gang, md); !s) return s.error();
    if (auto s = AddSubGroups(*gang, topology, md); !s) return s.error();
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeGroveGrouper() { return std::make_unique<GroveGrouper>(); }

}  // namespace kai::podgrouper
