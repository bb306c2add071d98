// Decoding and validating a Karta (github.com/run-ai/karta, pkg/api/runai/v1alpha1: the types
// and KartaValidator). Only what grouping reads is kept; the rest of a component (its pod spec
// paths, status mappings) is checked for shape where the validator looks at it.
#include <set>

#include "kai/core/podgrouper/karta.h"

namespace kai::podgrouper {
namespace {

Result<std::optional<JqPath>> OptionalJq(const Object& o, const Field& from, std::string_view key) {
  auto text = NestedString(o, from, {key});
  if (!text) return text.error();
  if (!text->has_value()) return std::optional<JqPath>();
  auto path = JqPath::Parse(**text);
  if (!path) return FieldError(o, from.path + "." + std::string(key), path.error().message);
  return std::optional<JqPath>(std::move(*path));
}

Result<std::optional<KartaGvk>> DecodeGvk(const Object& o, const Field& c) {
  auto kind = NestedMap(o, c, {"kind"});
  if (!kind) return kind.error();
  if (!kind->has_value()) return std::optional<KartaGvk>();
  KartaGvk gvk;
  for (auto [field, key] :
       {std::pair{&gvk.group, "group"}, {&gvk.version, "version"}, {&gvk.kind, "kind"}}) {
    auto v = NestedString(o, **kind, {key});
    if (!v) return v.error();
    *field = v->value_or("");
  }
  return std::optional<KartaGvk>(std::move(gvk));
}

Status DecodeSpecDefinition(const Object& o, const Field& c, KartaComponent& out) {
  auto spec = NestedMap(o, c, {"specDefinition"});
  if (!spec) return spec.error();
  if (!spec->has_value()) return Ok();
  for (const char* key : {"podTemplateSpecPath", "podSpecPath"}) {
    auto v = OptionalJq(o, **spec, key);
    if (!v) return v.error();
    out.pod_definitions += v->has_value() ? 1 : 0;
  }
  auto fragmented = NestedMap(o, **spec, {"fragmentedPodSpecDefinition"});
  if (!fragmented) return fragmented.error();
  out.pod_definitions += fragmented->has_value() ? 1 : 0;
  return Ok();
}

Status DecodeScaleDefinition(const Object& o, const Field& c, KartaComponent& out) {
  auto scale = NestedMap(o, c, {"scaleDefinition"});
  if (!scale) return scale.error();
  out.has_scale_definition = scale->has_value();
  if (!scale->has_value()) return Ok();
  auto replicas = OptionalJq(o, **scale, "replicasPath");
  if (!replicas) return replicas.error();
  auto min = OptionalJq(o, **scale, "minReplicasPath");
  if (!min) return min.error();
  auto max = OptionalJq(o, **scale, "maxReplicasPath");  // checked, not used for gangs
  if (!max) return max.error();
  out.replicas = std::move(*replicas);
  out.min_replicas = std::move(*min);
  return Ok();
}

Status DecodePodSelector(const Object& o, const Field& c, KartaComponent& out) {
  auto selector = NestedMap(o, c, {"podSelector"});
  if (!selector) return selector.error();
  if (!selector->has_value()) return Ok();
  auto type = NestedMap(o, **selector, {"componentTypeSelector"});
  if (!type) return type.error();
  if (type->has_value()) {
    auto key = OptionalJq(o, **type, "keyPath");
    if (!key) return key.error();
    if (!key->has_value()) return FieldError(o, (*type)->path + ".keyPath", "missing");
    auto value = NestedString(o, **type, {"value"});
    if (!value) return value.error();
    out.type_key = std::move(*key);
    out.type_value = std::move(*value);
  }
  auto instance = NestedMap(o, **selector, {"componentInstanceSelector"});
  if (!instance) return instance.error();
  if (instance->has_value()) {
    auto id = OptionalJq(o, **instance, "idPath");
    if (!id) return id.error();
    if (!id->has_value()) return FieldError(o, (*instance)->path + ".idPath", "missing");
    out.instance_key = std::move(*id);
  }
  return Ok();
}

Result<KartaComponent> DecodeComponent(const Object& o, const Field& c) {
  if (!c.node.IsMap()) return FieldError(o, c.path, "expected an object");
  KartaComponent out;
  out.path = c.path;
  auto name = NestedString(o, c, {"name"});
  if (!name) return name.error();
  out.name = name->value_or("");
  auto owner = NestedString(o, c, {"ownerRef"});
  if (!owner) return owner.error();
  out.owner = std::move(*owner);
  auto kind = DecodeGvk(o, c);
  if (!kind) return kind.error();
  out.kind = std::move(*kind);
  auto status = NestedMap(o, c, {"statusDefinition"});
  if (!status) return status.error();
  out.has_status_definition = status->has_value();
  auto ids = OptionalJq(o, c, "instanceIdPath");
  if (!ids) return ids.error();
  out.instance_ids = std::move(*ids);
  for (auto step : {DecodeSpecDefinition, DecodeScaleDefinition, DecodePodSelector}) {
    if (auto s = step(o, c, out); !s) return s.error();
  }
  return out;
}

Status DecodeComponents(const Object& o, const Field& structure, Karta& k) {
  auto root = NestedMap(o, structure, {"rootComponent"});
  if (!root) return root.error();
  Field root_field = root->value_or(Field{doc::Node(), structure.path + ".rootComponent"});
  if (!root->has_value()) {
    k.components.push_back(KartaComponent{.path = root_field.path});
  } else {
    auto c = DecodeComponent(o, root_field);
    if (!c) return c.error();
    k.components.push_back(std::move(*c));
  }
  auto children = NestedSequence(o, structure, {"childComponents"});
  if (!children) return children.error();
  for (const Field& f : children->value_or(std::vector<Field>{})) {
    auto c = DecodeComponent(o, f);
    if (!c) return c.error();
    k.components.push_back(std::move(*c));
  }
  return Ok();
}

Result<std::optional<TopologyConstraint>> DecodeTopology(const Object& o, const Field& from) {
  auto t = NestedMap(o, from, {"topology"});
  if (!t) return t.error();
  if (!t->has_value()) return std::optional<TopologyConstraint>();
  TopologyConstraint c;
  for (auto [field, key] : {std::pair{&c.topology, "topologyName"},
                            {&c.preferred_level, "preferredTopologyLevel"},
                            {&c.required_level, "requiredTopologyLevel"}}) {
    auto v = NestedString(o, **t, {key});
    if (!v) return v.error();
    *field = v->value_or("");
  }
  return std::optional<TopologyConstraint>(std::move(c));
}

Result<KartaPodGroup> DecodePodGroup(const Object& o, const Field& f) {
  KartaPodGroup pg;
  auto name = NestedString(o, f, {"name"});
  if (!name) return name.error();
  pg.name = name->value_or("");
  auto topology = DecodeTopology(o, f);
  if (!topology) return topology.error();
  pg.topology = std::move(*topology);
  auto subs = NestedSequence(o, f, {"subGroups"});
  if (!subs) return subs.error();
  for (const Field& s : subs->value_or(std::vector<Field>{})) {
    if (!s.node.IsMap()) return FieldError(o, s.path, "expected an object");
    auto component = NestedString(o, s, {"componentName"});
    if (!component) return component.error();
    auto t = DecodeTopology(o, s);
    if (!t) return t.error();
    pg.sub_groups.push_back({component->value_or(""), std::move(*t)});
  }
  return pg;
}

Result<KartaMember> DecodeMember(const Object& o, const Field& m) {
  if (!m.node.IsMap()) return FieldError(o, m.path, "expected an object");
  KartaMember member;
  auto component = NestedString(o, m, {"componentName"});
  if (!component) return component.error();
  member.component = component->value_or("");
  auto keys = NestedSequence(o, m, {"groupByKeyPaths"});
  if (!keys) return keys.error();
  for (const Field& k : keys->value_or(std::vector<Field>{})) {
    if (!k.node.IsScalar()) return FieldError(o, k.path, "expected a string");
    auto path = JqPath::Parse(k.node.Scalar());
    if (!path) return FieldError(o, k.path, path.error().message);
    member.group_by.push_back(std::move(*path));
  }
  auto filters = NestedSequence(o, m, {"filters"});
  if (!filters) return filters.error();
  member.filters = filters->has_value() ? (*filters)->size() : 0;
  return member;
}

Result<std::vector<KartaAlphaGroup>> DecodeAlphaGroups(const Object& o, const Field& gang) {
  auto groups = NestedSequence(o, gang, {"podGroups"});
  if (!groups) return groups.error();
  std::vector<KartaAlphaGroup> out;
  for (const Field& g : groups->value_or(std::vector<Field>{})) {
    if (!g.node.IsMap()) return FieldError(o, g.path, "expected an object");
    KartaAlphaGroup group;
    auto name = NestedString(o, g, {"name"});
    if (!name) return name.error();
    group.name = name->value_or("");
    auto members = NestedSequence(o, g, {"members"});
    if (!members) return members.error();
    for (const Field& m : members->value_or(std::vector<Field>{})) {
      auto member = DecodeMember(o, m);
      if (!member) return member.error();
      group.members.push_back(std::move(*member));
    }
    out.push_back(std::move(group));
  }
  return out;
}

Status DecodeInstructions(const Object& o, Karta& k) {
  auto gang = NestedMap(o, Root(o), {"spec", "optimizationInstructions", "gangScheduling"});
  if (!gang) return gang.error();
  k.has_gang_scheduling = gang->has_value();
  if (!gang->has_value()) return Ok();
  auto alpha = DecodeAlphaGroups(o, **gang);
  if (!alpha) return alpha.error();
  k.pod_groups = std::move(*alpha);
  auto pg = NestedMap(o, **gang, {"podGroup"});
  if (!pg) return pg.error();
  if (!pg->has_value()) return Ok();
  auto decoded = DecodePodGroup(o, **pg);
  if (!decoded) return decoded.error();
  k.pod_group = std::move(*decoded);
  return Ok();
}

// --- validation ---

void CheckRoot(const KartaComponent& root, std::vector<std::string>& problems) {
  const bool grouped = !root.kind || root.kind->group.empty();
  if (!root.kind || root.kind->version.empty() || root.kind->kind.empty() ||
      (grouped && root.kind->kind != "Pod")) {
    problems.push_back("root component must have full kind (group, version, kind)");
  }
  if (root.owner) problems.push_back("root component cannot have owner ref");
  if (!root.has_status_definition) problems.push_back("root component must have status definition");
}

void CheckComponent(const KartaComponent& c, std::vector<std::string>& problems) {
  if (c.name.empty()) problems.push_back(c.path + ": component name is empty");
  if (c.pod_definitions > 1) {
    problems.push_back("component '" + c.name + "' has multiple pod spec definitions");
  }
  if (c.instance_ids && !c.instance_key) {
    problems.push_back("component '" + c.name +
                       "' has instance id path but no pod component instance selector");
  }
  if (!c.instance_ids && c.instance_key) {
    problems.push_back("component '" + c.name +
                       "' has pod component instance selector but no instance id path");
  }
}

void CheckOwners(const Karta& k, std::vector<std::string>& problems) {
  for (size_t i = 1; i < k.components.size(); ++i) {
    const KartaComponent& c = k.components[i];
    if (!c.owner || c.owner->empty()) {
      problems.push_back("child component '" + c.name + "' has no owner ref");
    } else if (k.Find(*c.owner) == nullptr) {
      problems.push_back("child component '" + c.name +
                         "' has owner ref to non-existing component '" + *c.owner + "'");
    }
  }
}

// Each child's owner chain reaches the root (a chain longer than the components is a cycle).
void CheckNoCycles(const Karta& k, std::vector<std::string>& problems) {
  for (size_t i = 1; i < k.components.size(); ++i) {
    const KartaComponent* c = &k.components[i];
    for (size_t steps = 0; c != nullptr && c->owner; ++steps) {
      if (steps > k.components.size()) {
        problems.push_back("ownership cycle detected involving component " + c->name);
        return;
      }
      c = k.Find(*c->owner);
    }
  }
}

void CheckMembers(const Karta& k, std::vector<std::string>& problems) {
  for (const KartaAlphaGroup& g : k.pod_groups) {
    for (const KartaMember& m : g.members) {
      if (k.Find(m.component) == nullptr) {
        problems.push_back("pod-group member component '" + m.component +
                           "' is not defined (should be a root or child component)");
      }
      if (m.filters > 0) {
        problems.push_back("pod-group " + g.name + " member '" + m.component +
                           "' has jq filters, which kai does not evaluate");
      }
    }
  }
}

}  // namespace

const KartaComponent* Karta::Find(std::string_view name) const {
  for (const KartaComponent& c : components) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<const KartaComponent*> Karta::Children(std::string_view name) const {
  std::vector<const KartaComponent*> out;
  for (size_t i = 1; i < components.size(); ++i) {
    if (components[i].owner && *components[i].owner == name) out.push_back(&components[i]);
  }
  return out;
}

bool Karta::AnyScaleDefinition() const {
  for (const KartaComponent& c : components) {
    if (c.has_scale_definition) return true;
  }
  return false;
}

Result<Karta> DecodeKarta(const Object& o) {
  Karta k;
  k.name = o.name;
  k.deleting = o.deleting;
  auto structure = NestedMap(o, Root(o), {"spec", "structureDefinition"});
  if (!structure) return structure.error();
  const Field s = structure->value_or(Field{doc::Node(), "spec.structureDefinition"});
  if (auto r = DecodeComponents(o, s, k); !r) return r.error();
  if (auto r = DecodeInstructions(o, k); !r) return r.error();
  return k;
}

Status ValidateKarta(const Karta& k) {
  std::vector<std::string> problems;
  std::set<std::string> names;
  for (const KartaComponent& c : k.components) {
    if (!names.insert(c.name).second)
      problems.push_back("component name " + c.name + " is not unique");
  }
  if (!problems.empty()) return Problems(problems);  // the checks below look components up by name
  CheckRoot(k.root(), problems);
  for (const KartaComponent& c : k.components) CheckComponent(c, problems);
  CheckOwners(k, problems);
  if (problems.empty()) CheckNoCycles(k, problems);
  CheckMembers(k, problems);
  if (problems.empty()) return Ok();
  return Problems(problems);
}

}  // namespace kai::podgrouper
