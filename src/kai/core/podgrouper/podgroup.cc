#include "kai/core/podgrouper/podgroup.h"

#include "kai/core/k8s/json_body.h"
#include "kai/core/podgrouper/go_duration.h"

namespace kai::podgrouper {
namespace {

bool Subset(const Labels& small, const Labels& big) {
  for (const auto& [k, v] : small) {
    auto it = big.find(k.view());
    if (it == big.end() || it->second != v) return false;
  }
  return true;
}

void MergeInto(Labels& to, const Labels& from) {
  for (const auto& [k, v] : from) to.insert_or_assign(k, v);
}

// KAI's ignoreFields: what the existing PodGroup keeps whatever the grouper computes.
PodGroupManifest KeepExternalFields(const PodGroupManifest& old, PodGroupManifest desired,
                                    const GrouperConfig& config) {
  desired.spec.mark_unschedulable = old.spec.mark_unschedulable;
  desired.spec.scheduling_backoff = old.spec.scheduling_backoff;
  desired.spec.queue = old.spec.queue;
  const std::string& pool = config.node_pool_label_key;
  if (const auto it = old.labels.find(pool); it != old.labels.end()) {
    desired.labels.insert_or_assign(InternedString(pool), it->second);
  } else {
    desired.labels.erase(pool);
  }
  const std::string& queue = config.queue_label_key;
  if (const auto it = old.labels.find(queue); it != old.labels.end()) {
    desired.labels.insert_or_assign(InternedString(queue), it->second);
  }
  if (desired.spec.topology.topology.empty()) desired.spec.topology = old.spec.topology;
  return desired;
}

Result<std::optional<int>> OptInt(const Object& o, const Field& from, Keys keys) {
  auto v = NestedInt(o, from, keys);
  if (!v) return v.error();
  if (!v->has_value()) return std::optional<int>();
  return std::optional<int>(static_cast<int>(**v));
}

Result<std::optional<int64_t>> OptDuration(const Object& o, const Field& from,
                                           std::string_view key) {
  auto v = NestedString(o, from, {key});
  if (!v) return v.error();
  if (!v->has_value()) return std::optional<int64_t>();
  const auto ns = ParseGoDurationNanos(**v);
  if (!ns)
    return FieldError(o, from.path + "." + std::string(key), "invalid duration \"" + **v + "\"");
  return std::optional<int64_t>(*ns);
}

Result<TopologyConstraint> DecodeTopology(const Object& o, const Field& f) {
  TopologyConstraint c;
  for (auto [field, key] : {std::pair{&c.topology, "topology"},
                            {&c.required_level, "requiredTopologyLevel"},
                            {&c.preferred_level, "preferredTopologyLevel"}}) {
    auto v = NestedString(o, f, {key});
    if (!v) return v.error();
    *field = v->value_or("");
  }
  return c;
}

Result<std::optional<TopologyConstraint>> OptTopology(const Object& o, const Field& from) {
  auto t = NestedMap(o, from, {"topologyConstraint"});
  if (!t) return t.error();
  if (!t->has_value()) return std::optional<TopologyConstraint>();
  auto c = DecodeTopology(o, **t);
  if (!c) return c.error();
  return std::optional<TopologyConstraint>(std::move(*c));
}

Result<SubGroupSpec> DecodeSubGroup(const Object& o, const Field& item) {
  SubGroupSpec sg;
  auto name = NestedString(o, item, {"name"});
  if (!name) return name.error();
  if (!name->has_value()) return FieldError(o, item.path + ".name", "missing");
  sg.name = **name;
  auto parent = NestedString(o, item, {"parent"});
  if (!parent) return parent.error();
  sg.parent = *parent;
  for (auto [field, key] :
       {std::pair{&sg.min_member, "minMember"}, {&sg.min_sub_group, "minSubGroup"}}) {
    auto v = OptInt(o, item, {key});
    if (!v) return v.error();
    *field = *v;
  }
  auto t = OptTopology(o, item);
  if (!t) return t.error();
  sg.topology = std::move(*t);
  return sg;
}

// The scalars of a spec: counts, names, markUnschedulable and the durations.
Status DecodeSpecScalars(const Object& o, const Field& f, PodGroupSpec& s) {
  for (auto [field, key] : {std::pair{&s.min_member, "minMember"},
                            {&s.min_sub_group, "minSubGroup"},
                            {&s.scheduling_backoff, "schedulingBackoff"}}) {
    auto v = OptInt(o, f, {key});
    if (!v) return v.error();
    *field = *v;
  }
  for (auto [field, key] : {std::pair{&s.queue, "queue"},
                            {&s.priority_class_name, "priorityClassName"},
                            {&s.preemptibility, "preemptibility"}}) {
    auto v = NestedString(o, f, {key});
    if (!v) return v.error();
    *field = v->value_or("");
  }
  auto mark = NestedBool(o, f, {"markUnschedulable"});
  if (!mark) return mark.error();
  s.mark_unschedulable = *mark;
  for (auto [field, key] : {std::pair{&s.preemption_delay_ns, "preemptionDelay"},
                            {&s.staleness_grace_period_ns, "stalenessGracePeriod"}}) {
    auto v = OptDuration(o, f, key);
    if (!v) return v.error();
    *field = *v;
  }
  return Ok();
}

Result<PodGroupSpec> DecodeSpec(const Object& o, const Field& f) {
  PodGroupSpec s;
  if (auto st = DecodeSpecScalars(o, f, s); !st) return st.error();
  auto t = OptTopology(o, f);
  if (!t) return t.error();
  if (t->has_value()) s.topology = std::move(**t);
  auto sub_groups = NestedSequence(o, f, {"subGroups"});
  if (!sub_groups) return sub_groups.error();
  for (const Field& item : sub_groups->value_or(std::vector<Field>{})) {
    auto sg = DecodeSubGroup(o, item);
    if (!sg) return sg.error();
    s.sub_groups.push_back(std::move(*sg));
  }
  return s;
}

void WriteTopology(k8s::JsonWriter& w, const TopologyConstraint& c) {
  w.StartObject();
  if (!c.preferred_level.empty()) k8s::KeyStr(w, "preferredTopologyLevel", c.preferred_level);
  if (!c.required_level.empty()) k8s::KeyStr(w, "requiredTopologyLevel", c.required_level);
  if (!c.topology.empty()) k8s::KeyStr(w, "topology", c.topology);
  w.EndObject();
}

void WriteMap(k8s::JsonWriter& w, std::string_view key, const Labels& m) {
  if (m.empty()) return;
  k8s::Str(w, key);
  w.StartObject();
  for (const auto& [k, v] : m) k8s::KeyStr(w, k.view(), v);
  w.EndObject();
}

void WriteOptInt(k8s::JsonWriter& w, std::string_view key, const std::optional<int>& v) {
  if (!v) return;
  k8s::Str(w, key);
  w.Int(*v);
}

void WriteMetadata(k8s::JsonWriter& w, const PodGroupManifest& pg) {
  k8s::Str(w, "metadata");
  w.StartObject();
  k8s::KeyStr(w, "name", pg.name);
  k8s::KeyStr(w, "namespace", pg.ns);
  if (!pg.resource_version.empty()) k8s::KeyStr(w, "resourceVersion", pg.resource_version);
  WriteMap(w, "labels", pg.labels);
  WriteMap(w, "annotations", pg.annotations);
  if (!pg.owner_refs.empty()) {
    k8s::Str(w, "ownerReferences");
    w.StartArray();
    for (const OwnerReference& r : pg.owner_refs) {
      w.StartObject();
      k8s::KeyStr(w, "apiVersion", r.api_version);
      k8s::KeyStr(w, "kind", r.kind);
      k8s::KeyStr(w, "name", r.name);
      k8s::KeyStr(w, "uid", r.uid);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteSubGroup(k8s::JsonWriter& w, const SubGroupSpec& sg) {
  w.StartObject();
  k8s::KeyStr(w, "name", sg.name);
  WriteOptInt(w, "minMember", sg.min_member);
  WriteOptInt(w, "minSubGroup", sg.min_sub_group);
  if (sg.parent) k8s::KeyStr(w, "parent", *sg.parent);
  if (sg.topology) {
    k8s::Str(w, "topologyConstraint");
    WriteTopology(w, *sg.topology);
  }
  w.EndObject();
}

// Go's omitempty: unset pointers and empty strings and lists are left out; topologyConstraint
// (a struct) is always written.
void WriteSpec(k8s::JsonWriter& w, const PodGroupSpec& s) {
  k8s::Str(w, "spec");
  w.StartObject();
  WriteOptInt(w, "minMember", s.min_member);
  WriteOptInt(w, "minSubGroup", s.min_sub_group);
  if (!s.queue.empty()) k8s::KeyStr(w, "queue", s.queue);
  if (!s.priority_class_name.empty()) k8s::KeyStr(w, "priorityClassName", s.priority_class_name);
  if (!s.preemptibility.empty()) k8s::KeyStr(w, "preemptibility", s.preemptibility);
  k8s::Str(w, "topologyConstraint");
  WriteTopology(w, s.topology);
  if (!s.sub_groups.empty()) {
    k8s::Str(w, "subGroups");
    w.StartArray();
    for (const SubGroupSpec& sg : s.sub_groups) WriteSubGroup(w, sg);
    w.EndArray();
  }
  if (s.mark_unschedulable) {
    k8s::Str(w, "markUnschedulable");
    w.Bool(*s.mark_unschedulable);
  }
  WriteOptInt(w, "schedulingBackoff", s.scheduling_backoff);
  if (s.preemption_delay_ns) {
    k8s::KeyStr(w, "preemptionDelay", FormatGoDuration(*s.preemption_delay_ns));
  }
  if (s.staleness_grace_period_ns) {
    k8s::KeyStr(w, "stalenessGracePeriod", FormatGoDuration(*s.staleness_grace_period_ns));
  }
  w.EndObject();
}

}  // namespace

PodGroupManifest NewPodGroup(const PodGroupMetadata& md) {
  PodGroupManifest pg;
  pg.name = md.name;
  pg.ns = md.ns;
  pg.labels = md.labels;
  pg.annotations = md.annotations;
  pg.owner_refs = {md.owner};
  PodGroupSpec& s = pg.spec;
  s.queue = md.queue;
  s.priority_class_name = md.priority_class_name;
  s.preemptibility = md.preemptibility;
  s.preemption_delay_ns = md.preemption_delay_ns;
  s.staleness_grace_period_ns = md.staleness_grace_period_ns;
  if (md.min_sub_group) {
    s.min_sub_group = md.min_sub_group;
  } else {
    s.min_member = md.min_member;
  }
  for (const SubGroupMetadata& sg : md.sub_groups) {
    SubGroupSpec out{sg.name, sg.parent, std::nullopt, std::nullopt, sg.topology};
    if (sg.min_sub_group) {
      out.min_sub_group = sg.min_sub_group;
    } else {
      out.min_member = sg.min_member;
    }
    s.sub_groups.push_back(std::move(out));
  }
  s.topology = md.topology;
  return pg;
}

Result<PodGroupManifest> DecodePodGroupManifest(const Object& o) {
  PodGroupManifest pg;
  pg.name = o.name;
  pg.ns = o.ns;
  pg.resource_version = ScalarAt(o, {"metadata", "resourceVersion"});
  pg.labels = o.labels;
  pg.annotations = o.annotations;
  pg.owner_refs = o.owner_refs;
  auto spec = NestedMap(o, Root(o), {"spec"});
  if (!spec) return spec.error();
  if (!spec->has_value()) return pg;
  auto decoded = DecodeSpec(o, **spec);
  if (!decoded) return decoded.error();
  pg.spec = std::move(*decoded);
  return pg;
}

ApplyPlan PlanApply(const std::optional<PodGroupManifest>& existing, const PodGroupMetadata& md,
                    const GrouperConfig& config) {
  PodGroupManifest desired = NewPodGroup(md);
  if (!existing) return {ApplyPlan::Action::kCreate, std::move(desired)};
  desired = KeepExternalFields(*existing, std::move(desired), config);
  // KAI's podGroupsEqual: the spec and owners as desired, and every desired label and annotation
  // already there.
  if (existing->spec == desired.spec && existing->owner_refs == desired.owner_refs &&
      Subset(desired.labels, existing->labels) &&
      Subset(desired.annotations, existing->annotations)) {
    return {ApplyPlan::Action::kNone, *existing};
  }
  // KAI's updatePodGroup.
  PodGroupManifest updated = *existing;
  MergeInto(updated.labels, desired.labels);
  MergeInto(updated.annotations, desired.annotations);
  updated.spec = std::move(desired.spec);
  updated.owner_refs = std::move(desired.owner_refs);
  return {ApplyPlan::Action::kUpdate, std::move(updated)};
}

std::string EncodePodGroupJson(const PodGroupManifest& pg) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "apiVersion", "scheduling.run.ai/v2alpha2");
    k8s::KeyStr(w, "kind", "PodGroup");
    WriteMetadata(w, pg);
    WriteSpec(w, pg.spec);
    w.EndObject();
  });
}

}  // namespace kai::podgrouper
