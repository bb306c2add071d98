// A JobSet (PG/jobset/jobset_grouper.go, legacy_grouper.go): one PodGroup per JobSet, with a
// parent SubGroup per replicatedJob (minSubGroup = its replicas) and a leaf per replica,
// `<replicatedJob>-replica-<i>` (minMember = the Job template's parallelism, or its
// kai.scheduler/batch-min-member annotation). The PodGroup's minSubGroup is the JobSet's
// batch-min-member annotation (at most the number of replicatedJobs), else 1 for the InOrder
// startup policy (the JobSet controller starts one replicatedJob at a time), else all of them.
//
// While a PodGroup of the older flat shape exists for the JobSet (no SubGroups), the older
// handler runs instead: one flat PodGroup, per replicatedJob under InOrder.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

struct ReplicatedJob {
  Field field;
  std::string name;
};

Result<std::vector<ReplicatedJob>> ReplicatedJobs(const Object& js) {
  auto items = NestedSequence(js, Root(js), {"spec", "replicatedJobs"});
  if (!items) return items.error();
  std::vector<ReplicatedJob> out;
  if (!items->has_value()) return out;
  for (const Field& f : **items) {
    if (!f.node.IsMap()) return FieldError(js, f.path, "expected an object");
    auto name = NestedString(js, f, {"name"});
    if (!name) return name.error();
    out.push_back({f, name->value_or("")});
  }
  return out;
}

Result<std::string> StartupOrder(const Object& js) {
  auto order = NestedString(js, Root(js), {"spec", "startupPolicy", "startupPolicyOrder"});
  if (!order) return order.error();
  return order->value_or("AnyOrder");
}

Result<std::string> TemplateAnnotation(const Object& js, const Field& rj, std::string_view key) {
  auto v = NestedString(js, rj, {"template", "metadata", "annotations", key});
  if (!v) return v.error();
  return v->value_or("");
}

// A leaf's minMember: the replicatedJob template's batch-min-member annotation, else its
// parallelism (default 1). The annotation may exceed the parallelism (KAI only logs that).
Result<int> LeafMinMember(const Object& js, const Field& rj) {
  auto parallelism = NestedInt(js, rj, {"template", "spec", "parallelism"});
  if (!parallelism) return parallelism.error();
  auto v = TemplateAnnotation(js, rj, keys::kMinMemberOverrideAnnotation);
  if (!v) return v.error();
  if (v->empty()) return static_cast<int>(parallelism->value_or(1));
  const auto min = ParseInt32(*v);
  const std::string path =
      rj.path + ".template.metadata.annotations." + std::string(keys::kMinMemberOverrideAnnotation);
  if (!min) return FieldError(js, path, "invalid value \"" + *v + "\"");
  if (*min < 1) return FieldError(js, path, "must be at least 1, got " + *v);
  return *min;
}

Result<std::optional<TopologyConstraint>> LeafTopology(const Object& js, const Field& rj) {
  TopologyConstraint c;
  for (auto [field, key] : {std::pair{&c.topology, keys::kTopologyAnnotation},
                            {&c.required_level, keys::kTopologyRequiredAnnotation},
                            {&c.preferred_level, keys::kTopologyPreferredAnnotation}}) {
    auto v = TemplateAnnotation(js, rj, key);
    if (!v) return v.error();
    *field = std::move(*v);
  }
  if (c.topology.empty() || (c.required_level.empty() && c.preferred_level.empty())) {
    return std::optional<TopologyConstraint>();
  }
  return std::optional<TopologyConstraint>(std::move(c));
}

Result<int> PodGroupMinSubGroup(const Object& js, int replicated_jobs) {
  const std::string key(keys::kMinMemberOverrideAnnotation);
  if (const std::string* v = js.Annotation(key)) {
    const auto min = ParseInt32(*v);
    if (!min) return FieldError(js, "metadata.annotations." + key, "invalid value \"" + *v + "\"");
    if (*min < 1)
      return FieldError(js, "metadata.annotations." + key, "must be at least 1, got " + *v);
    return std::min(*min, replicated_jobs);
  }
  auto order = StartupOrder(js);
  if (!order) return order.error();
  return *order == "InOrder" ? 1 : replicated_jobs;
}

Result<std::vector<SubGroupMetadata>> SubGroups(const Object& js,
                                                const std::vector<ReplicatedJob>& rjs) {
  std::vector<SubGroupMetadata> out;
  for (const ReplicatedJob& rj : rjs) {
    if (rj.name.empty()) return FieldError(js, rj.field.path + ".name", "missing");
    auto replicas = NestedInt(js, rj.field, {"replicas"});
    if (!replicas) return replicas.error();
    const int count = static_cast<int>(replicas->value_or(1));
    auto min = LeafMinMember(js, rj.field);
    if (!min) return min.error();
    auto topology = LeafTopology(js, rj.field);
    if (!topology) return topology.error();
    out.push_back({rj.name, std::nullopt, 0, count, std::nullopt, {}});
    for (int i = 0; i < count; ++i) {
      out.push_back(
          {rj.name + "-replica-" + std::to_string(i), rj.name, *min, std::nullopt, *topology, {}});
    }
  }
  return out;
}

Result<const std::string*> RequiredPodLabel(const Object& pod, std::string_view key) {
  const std::string* v = pod.Label(key);
  if (v == nullptr || v->empty()) {
    return FieldError(pod, "metadata.labels." + std::string(key), "missing (a JobSet pod's label)");
  }
  return v;
}

// A PodGroup of this JobSet without SubGroups: the older handler's shape.
Result<bool> HasLegacyPodGroup(const GroupingInput& in) {
  const Object& js = in.top_owner;
  const std::string prefix = PodGroupName(js);
  auto pgs = in.env.reader().List("scheduling.run.ai/v2alpha2", "PodGroup", js.ns, Labels());
  if (!pgs)
    return Error{"listing the PodGroups of namespace " + js.ns + ": " + pgs.error().message};
  for (const Object& pg : *pgs) {
    if (pg.name != prefix && !pg.name.starts_with(prefix + "-")) continue;
    if (pg.node["spec"]["subGroups"].size() == 0) return true;
  }
  return false;
}

Result<PodGroupMetadata> LegacyMetadata(const GroupingInput& in) {
  const Object& js = in.top_owner;
  PodGroupMetadata md = DefaultMetadata(in, js, {});
  auto rj = RequiredPodLabel(in.pod, keys::kJobSetReplicatedJobLabel);
  if (!rj) return rj.error();
  auto order = StartupOrder(js);
  if (!order) return order.error();
  if (*order == "InOrder") md.name = PodGroupName(js) + "-" + **rj;
  md.min_member = 1;
  const std::string key(keys::kMinMemberOverrideAnnotation);
  if (const std::string* v = js.Annotation(key)) {
    const auto min = ParseInt32(*v);
    if (!min) return FieldError(js, "metadata.annotations." + key, "invalid value \"" + *v + "\"");
    md.min_member = *min;
  }
  return md;
}

class JobSetGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "JobSet Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const Object& js = in.top_owner;
    if (js.name.empty() || js.uid.empty())
      return FieldError(js, "metadata", "needs a name and a uid");
    auto rjs = ReplicatedJobs(js);
    if (!rjs) return rjs.error();
    if (rjs->empty()) return FieldError(js, "spec.replicatedJobs", "missing or empty");
    auto legacy = HasLegacyPodGroup(in);
    if (!legacy) return legacy.error();
    if (*legacy) return LegacyMetadata(in);

    PodGroupMetadata md = DefaultMetadata(in, js, {});
    auto min_sub_group = PodGroupMinSubGroup(js, static_cast<int>(rjs->size()));
    if (!min_sub_group) return min_sub_group.error();
    md.min_sub_group = *min_sub_group;
    md.min_member = 0;
    auto sub_groups = SubGroups(js, *rjs);
    if (!sub_groups) return sub_groups.error();
    md.sub_groups = std::move(*sub_groups);

    auto rj = RequiredPodLabel(in.pod, keys::kJobSetReplicatedJobLabel);
    if (!rj) return rj.error();
    auto index = RequiredPodLabel(in.pod, keys::kJobSetJobIndexLabel);
    if (!index) return index.error();
    const std::string leaf = **rj + "-replica-" + **index;
    SubGroupMetadata* sg = md.FindSubGroup(leaf);
    if (sg == nullptr) {
      return FieldError(in.pod, "metadata.labels",
                        "names SubGroup " + leaf + ", which " + js.Ref() + " does not have");
    }
    sg->pods.push_back(in.pod.name);
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeJobSetGrouper() { return std::make_unique<JobSetGrouper>(); }

}  // namespace kai::podgrouper
