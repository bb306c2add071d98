#include "kai/core/k8s/decode_fields.h"

#include "kai/core/k8s/keys.h"

namespace kai::decoding {
namespace {

std::optional<TopologyConstraintSpec> DecodeTopologyConstraint(const doc::Node& n,
                                                               const std::string& path,
                                                               ObjectContext& ctx) {
  if (!n.IsDefined() || n.IsNull() || !IsMapOrAbsent(n, path, ctx)) return std::nullopt;
  TopologyConstraintSpec c;
  c.topology = Str(n, "topology", path, ctx).value_or("");
  c.required_level = Str(n, "requiredTopologyLevel", path, ctx).value_or("");
  c.preferred_level = Str(n, "preferredTopologyLevel", path, ctx).value_or("");
  return c;
}

// The root constraint from the kai.scheduler/topology* annotations, which KAI's pod grouper copies
// from a workload's top owner into spec.topologyConstraint; kai reads them on the PodGroup when
// the spec states none.
std::optional<TopologyConstraintSpec> AnnotatedTopologyConstraint(const ObjectMeta& meta) {
  auto get = [&](std::string_view key) {
    auto it = meta.annotations.find(key);
    return it == meta.annotations.end() ? std::string() : it->second;
  };
  TopologyConstraintSpec c{get(keys::kTopologyAnnotation), get(keys::kTopologyRequiredAnnotation),
                           get(keys::kTopologyPreferredAnnotation)};
  if (c.topology.empty()) return std::nullopt;
  return c;
}

void DecodeSubGroups(const doc::Node& n, PodGroupObject& pg, ObjectContext& ctx) {
  if (!IsSeqOrAbsent(n, "spec.subGroups", ctx)) return;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index("spec.subGroups", i);
    SubGroupSpec sg;
    sg.name = Str(n[i], "name", p, ctx).value_or("");
    sg.parent = Str(n[i], "parent", p, ctx).value_or("");
    if (auto v = Int(n[i], "minMember", p, ctx)) sg.min_member = static_cast<int>(*v);
    if (auto v = Int(n[i], "minSubGroup", p, ctx)) sg.min_sub_group = static_cast<int>(*v);
    if (sg.min_member.value_or(0) < 0) ctx.Fail(Join(p, "minMember"), "must not be negative");
    if (sg.min_sub_group.value_or(0) < 0) ctx.Fail(Join(p, "minSubGroup"), "must not be negative");
    sg.topology_constraint =
        DecodeTopologyConstraint(n[i]["topologyConstraint"], Join(p, "topologyConstraint"), ctx);
    if (sg.name.empty()) ctx.Fail(Join(p, "name"), "missing");
    pg.sub_groups.push_back(std::move(sg));
  }
}

std::optional<UnixSeconds> AnnotationTime(const ObjectMeta& meta, std::string_view key,
                                          ObjectContext& ctx) {
  auto it = meta.annotations.find(key);
  if (it == meta.annotations.end()) return std::nullopt;
  auto t = ParseRfc3339(it->second);
  if (!t) {
    ctx.Fail("metadata.annotations." + std::string(key),
             "expected an RFC 3339 time, got \"" + it->second + "\"");
  }
  return t;
}

}  // namespace

void DecodePodGroup(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                    ClusterState& state) {
  PodGroupObject pg;
  pg.meta = DecodeMeta(doc, "PodGroup", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) {
    ctx.Fail("spec", "missing");
    return;
  }
  pg.queue = Str(spec, "queue", "spec", ctx).value_or("");
  if (pg.queue.empty()) ctx.Fail("spec.queue", "missing");
  pg.priority_class_name = Str(spec, "priorityClassName", "spec", ctx).value_or("");
  pg.preemptibility = Str(spec, "preemptibility", "spec", ctx).value_or("");
  if (!pg.preemptibility.empty() && pg.preemptibility != "preemptible" &&
      pg.preemptibility != "non-preemptible" && pg.preemptibility != "semi-preemptible") {
    ctx.Fail("spec.preemptibility",
             "must be preemptible, non-preemptible or semi-preemptible, got \"" +
                 pg.preemptibility + "\"");
  }
  if (auto v = Int(spec, "minMember", "spec", ctx)) {
    if (*v < 0) ctx.Fail("spec.minMember", "must not be negative");
    pg.min_member = static_cast<int>(*v);
  }
  if (auto v = Int(spec, "minSubGroup", "spec", ctx)) {
    if (*v < 0) ctx.Fail("spec.minSubGroup", "must not be negative");
    pg.min_sub_group = static_cast<int>(*v);
  }
  DecodeSubGroups(spec["subGroups"], pg, ctx);
  pg.topology_constraint =
      DecodeTopologyConstraint(spec["topologyConstraint"], "spec.topologyConstraint", ctx);
  if (!pg.topology_constraint) pg.topology_constraint = AnnotatedTopologyConstraint(pg.meta);
  // KAI reads the PodGroup-level constraint only when it names a topology.
  if (pg.topology_constraint && pg.topology_constraint->topology.empty()) {
    pg.topology_constraint.reset();
  }
  pg.preemption_delay_seconds = Duration(spec, "preemptionDelay", "spec", ctx);
  pg.staleness_grace_seconds = Duration(spec, "stalenessGracePeriod", "spec", ctx);
  if (!pg.staleness_grace_seconds) {
    if (auto it = pg.meta.annotations.find(keys::kStalenessGracePeriod);
        it != pg.meta.annotations.end()) {
      pg.staleness_grace_seconds = ParseGoDuration(it->second);  // invalid ignored, as KAI does
    }
  }
  pg.last_start = AnnotationTime(pg.meta, keys::kLastStartTimestamp, ctx);
  pg.stale_since = AnnotationTime(pg.meta, keys::kStaleTimestamp, ctx);
  pg.last_eviction = AnnotationTime(pg.meta, keys::kLastEvictionTimestamp, ctx);
  pg.has_scheduling_conditions = doc["status"]["schedulingConditions"].size() > 0;
  state.pod_groups.push_back(std::move(pg));
}

}  // namespace kai::decoding
