// Ray (PG/ray/): a RayCluster, RayJob or RayService is one PodGroup, sized from its RayCluster
// (a RayJob's and a RayService's are named in their status): 1 head plus, per worker group,
// (minReplicas, else replicas) x numOfHosts; suspended groups and groups of 0 are left out.
// SubGroups `headgroup` and one per worker group (by groupName, else worker-group-<i>), each with
// the topology its template's annotations state; no SubGroups while a PodGroup of the older flat
// shape exists. The label ray.io/priority-class-name of the top owner names the priority class.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// The topology of a head or worker group's template; none unless a placement level is set, and
// then the topology must be named too.
Result<std::optional<TopologyConstraint>> TemplateTopology(const Object& rc, const Field& group,
                                                           std::string_view what) {
  TopologyConstraint c;
  for (auto [field, key] : {std::pair{&c.topology, keys::kTopologyAnnotation},
                            {&c.required_level, keys::kTopologyRequiredAnnotation},
                            {&c.preferred_level, keys::kTopologyPreferredAnnotation}}) {
    auto v = NestedString(rc, group, {"template", "metadata", "annotations", key});
    if (!v) return v.error();
    *field = v->value_or("");
  }
  if (c.required_level.empty() && c.preferred_level.empty())
    return std::optional<TopologyConstraint>();
  if (c.topology.empty()) {
    return FieldError(rc, group.path + ".template.metadata.annotations",
                      std::string(keys::kTopologyAnnotation) + " is required for " +
                          std::string(what) + " when a topology placement annotation is set");
  }
  return std::optional<TopologyConstraint>(std::move(c));
}

struct Sizing {
  int min_member = 1;
  std::vector<SubGroupMetadata> sub_groups;
};

// One worker group: its SubGroup, or nullopt when it counts no pod (suspended, or 0 replicas).
Result<std::optional<SubGroupMetadata>> WorkerGroup(const Object& rc, const Field& g, size_t i) {
  if (!g.node.IsMap()) return FieldError(rc, g.path, "expected an object");
  auto suspended = NestedBool(rc, g, {"suspended"});
  if (!suspended) return suspended.error();
  if (suspended->value_or(false)) return std::optional<SubGroupMetadata>();
  auto replicas = NestedInt(rc, g, {"replicas"});
  if (!replicas) return replicas.error();
  auto min_replicas = NestedInt(rc, g, {"minReplicas"});
  if (!min_replicas) return min_replicas.error();
  const int64_t desired = replicas->value_or(0), min = min_replicas->value_or(0);
  if (min > desired) {
    return FieldError(rc, g.path,
                      "replicas (" + std::to_string(desired) +
                          ") may not be less than minReplicas (" + std::to_string(min) + ")");
  }
  if (min == 0 && desired == 0) return std::optional<SubGroupMetadata>();
  auto hosts = NestedInt(rc, g, {"numOfHosts"});
  if (!hosts) return hosts.error();
  const int64_t group_min = (min > 0 ? min : desired) * hosts->value_or(1);
  auto name = NestedString(rc, g, {"groupName"});
  const std::string group_name =
      name && name->has_value() && !(*name)->empty() ? **name : "worker-group-" + std::to_string(i);
  auto topology = TemplateTopology(rc, g, "workerGroupSpecs." + group_name);
  if (!topology) return topology.error();
  return std::optional<SubGroupMetadata>(SubGroupMetadata{
      group_name, std::nullopt, static_cast<int>(group_min), std::nullopt, *topology, {}});
}

Result<Sizing> SizeCluster(const Object& rc) {
  Sizing out;
  std::optional<TopologyConstraint> head_topology;
  auto head = NestedMap(rc, Root(rc), {"spec", "headGroupSpec"});
  if (!head) return head.error();
  if (head->has_value()) {
    auto t = TemplateTopology(rc, **head, "headGroupSpec");
    if (!t) return t.error();
    head_topology = std::move(*t);
  }
  out.sub_groups.push_back({"headgroup", std::nullopt, 1, std::nullopt, head_topology, {}});
  auto groups = NestedSequence(rc, Root(rc), {"spec", "workerGroupSpecs"});
  if (!groups) return groups.error();
  for (size_t i = 0; groups->has_value() && i < (*groups)->size(); ++i) {
    auto sg = WorkerGroup(rc, (**groups)[i], i);
    if (!sg) return sg.error();
    if (!sg->has_value()) continue;
    out.min_member += (*sg)->min_member;
    out.sub_groups.push_back(std::move(**sg));
  }
  return out;
}

// KAI's shouldUseSubGroups: false only when the PodGroup exists without SubGroups.
bool UseSubGroups(const GroupingInput& in, const PodGroupMetadata& md) {
  const Fetched f = in.env.reader().Get({"scheduling.run.ai/v2alpha2", "PodGroup", md.ns, md.name});
  if (f.status != FetchStatus::kFound) {
    if (f.status != FetchStatus::kNotFound) {
      in.env.Note("reading PodGroup " + md.ns + "/" + md.name + " failed (" + f.message +
                  "): grouping with SubGroups");
    }
    return true;
  }
  return f.object.node["spec"]["subGroups"].size() > 0;
}

class RayGrouper : public Grouper {
 public:
  // `cluster_name_paths`: where the top owner's status names its RayCluster (none: the top owner
  // is the RayCluster).
  RayGrouper(std::string_view name, std::vector<std::vector<std::string_view>> cluster_name_paths)
      : name_(name), paths_(std::move(cluster_name_paths)) {}
  std::string_view Name() const override { return name_; }

  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const Object& top = in.top_owner;
    auto cluster = RayCluster(in);
    if (!cluster) return cluster.error();
    PodGroupMetadata md = DefaultMetadata(in, top, {});
    auto sizing = SizeCluster(*cluster);
    if (!sizing) return sizing.error();
    md.min_member = sizing->min_member;
    if (UseSubGroups(in, md)) md.sub_groups = std::move(sizing->sub_groups);
    if (const std::string* v = top.Label(keys::kRayPriorityClassLabel)) md.priority_class_name = *v;
    if (!md.sub_groups.empty()) {
      const std::string* group = in.pod.Label(keys::kRayNodeGroupLabel);
      SubGroupMetadata* sg = group == nullptr ? nullptr : md.FindSubGroup(*group);
      if (sg != nullptr) {
        sg->pods.push_back(in.pod.name);
      } else {
        // KAI only logs this: the pod joins the PodGroup without a SubGroup.
        in.env.Note(in.pod.Ref() + ": " +
                    (group == nullptr ? "no " + std::string(keys::kRayNodeGroupLabel) + " label"
                                      : "no SubGroup " + *group + " in " + top.Ref()));
      }
    }
    return md;
  }

 private:
  Result<Object> RayCluster(const GroupingInput& in) const {
    const Object& top = in.top_owner;
    if (paths_.empty()) return top;
    std::optional<std::string> name;
    std::string where;
    for (const auto& path : paths_) {
      Field at = Root(top);
      bool found = true;
      for (std::string_view key : path) {
        auto next = NestedField(top, at, {key});
        if (!next) return next.error();
        if (!next->has_value()) {
          found = false;
          break;
        }
        at = **next;
      }
      if (!found) continue;
      if (!at.node.IsScalar()) return FieldError(top, at.path, "expected a string");
      name = std::string(at.node.Scalar());
      break;
    }
    if (!name || name->empty()) {
      return FieldError(top, "status",
                        "names no RayCluster yet (is the ray operator up, and has it created the "
                        "cluster?)");
    }
    const Fetched f = in.env.reader().Get({top.api_version, "RayCluster", top.ns, *name});
    if (f.status != FetchStatus::kFound) {
      return Error{"failed to get RayCluster " + top.ns + "/" + *name + " of " + top.Ref() + ": " +
                   f.message};
    }
    return f.object;
  }

  std::string_view name_;
  std::vector<std::vector<std::string_view>> paths_;
};

}  // namespace

std::unique_ptr<Grouper> MakeRayClusterGrouper() {
  return std::make_unique<RayGrouper>("RayCluster Grouper",
                                      std::vector<std::vector<std::string_view>>{});
}
std::unique_ptr<Grouper> MakeRayJobGrouper() {
  return std::make_unique<RayGrouper>(
      "RayJob Grouper", std::vector<std::vector<std::string_view>>{{"status", "rayClusterName"}});
}
std::unique_ptr<Grouper> MakeRayServiceGrouper() {
  return std::make_unique<RayGrouper>("RayService Grouper",
                                      std::vector<std::vector<std::string_view>>{
                                          {"status", "activeServiceStatus", "rayClusterName"},
                                          {"status", "pendingServiceStatus", "rayClusterName"}});
}

}  // namespace kai::podgrouper
