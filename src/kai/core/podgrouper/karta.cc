// Grouping by a Karta (KAI's PG/karta/ hub.go, grouper.go, component_matching.go,
// grouping_instruction_validation.go, over Karta's pkg/instructions and pkg/resource): finding the
// Karta of a kind, counting a component subtree's replicas, matching a pod to its component.
#include <cstdint>
#include <limits>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/karta.h"

namespace kai::podgrouper {
namespace {

Error KartaError(const Karta& k, std::string_view path, std::string_view message) {
  std::string text = "Karta " + k.name + ": ";
  if (!path.empty()) text += std::string(path) + ": ";
  return Error{text + std::string(message)};
}

// --- reading the workload and the pod through the Karta's jq paths ---

// The one non-empty scalar `path` gives on `n` (Karta's evaluateSingleResult).
Result<std::string> SingleText(const JqPath& path, doc::Node n) {
  auto results = path.Evaluate(n);
  if (!results) return results.error();
  if (results->size() != 1) {
    return Error{"jq expression \"" + path.text() + "\": expected a single result, got " +
                 std::to_string(results->size())};
  }
  auto text = JqScalarText((*results)[0]);
  if (!text || text->empty()) {
    return Error{"jq expression \"" + path.text() + "\": the result is empty or not a scalar"};
  }
  return std::move(*text);
}

// The instances of `c` in the workload: its instanceIdPath's results; one, "", when it has none.
Result<std::vector<std::string>> InstanceIds(const Karta& k, const KartaComponent& c,
                                             const Object& workload) {
  if (!c.instance_ids) return std::vector<std::string>{""};
  auto results = c.instance_ids->Evaluate(workload.node);
  if (!results) return KartaError(k, c.path + ".instanceIdPath", results.error().message);
  std::vector<std::string> ids;
  for (doc::Node n : *results) {
    auto text = JqScalarText(n);
    if (!text) {
      return KartaError(k, c.path + ".instanceIdPath",
                        "an instance id of " + workload.Ref() + " is not a scalar");
    }
    ids.push_back(std::move(*text));
  }
  return ids;
}

struct Scale {
  std::optional<int64_t> replicas, min_replicas;
  // Karta's getEffectiveMinReplicas: minReplicas, else replicas, when positive; else 0 (the
  // scale is stated higher up).
  int64_t Effective() const {
    if (min_replicas && *min_replicas > 0) return *min_replicas;
    if (replicas && *replicas > 0) return *replicas;
    return 0;
  }
};

// One value per instance of the component from `path`; null reads as unset.
Result<std::vector<std::optional<int64_t>>> ScaleValues(const Karta& k, const KartaComponent& c,
                                                        const std::optional<JqPath>& path,
                                                        const std::string& field,
                                                        const Object& workload, size_t instances) {
  std::vector<std::optional<int64_t>> out(instances);
  if (!path) return out;
  const std::string where = c.path + ".scaleDefinition." + field;
  auto results = path->Evaluate(workload.node);
  if (!results) return KartaError(k, where, results.error().message);
  if (results->size() != instances) {
    return KartaError(k, where,
                      "gives " + std::to_string(results->size()) + " values on " + workload.Ref() +
                          " for " + std::to_string(instances) + " instances");
  }
  for (size_t i = 0; i < instances; ++i) {
    const doc::Node n = (*results)[i];
    if (!n.IsDefined() || n.IsNull()) continue;
    const auto v = n.IsScalar() ? ParseInt32(n.Scalar()) : std::nullopt;
    if (!v) return KartaError(k, where, "a value on " + workload.Ref() + " is not an integer");
    out[i] = *v;
  }
  return out;
}

// The scale of each instance of `c`, by instance id; empty without a scaleDefinition.
Result<std::vector<std::pair<std::string, Scale>>> Scales(const Karta& k, const KartaComponent& c,
                                                          const Object& workload) {
  std::vector<std::pair<std::string, Scale>> out;
  if (!c.has_scale_definition) return out;
  auto ids = InstanceIds(k, c, workload);
  if (!ids) return ids.error();
  auto replicas = ScaleValues(k, c, c.replicas, "replicasPath", workload, ids->size());
  if (!replicas) return replicas.error();
  auto mins = ScaleValues(k, c, c.min_replicas, "minReplicasPath", workload, ids->size());
  if (!mins) return mins.error();
  for (size_t i = 0; i < ids->size(); ++i) {
    out.push_back({(*ids)[i], Scale{(*replicas)[i], (*mins)[i]}});
  }
  return out;
}

// The subtree whose replicas are counted: a component, and one instance of it when set.
struct Subtree {
  std::string component;
  std::optional<std::string> instance;
};

Result<const KartaComponent*> Component(const Karta& k, std::string_view name) {
  const KartaComponent* c = k.Find(name);
  if (c == nullptr) return KartaError(k, "", "no component named \"" + std::string(name) + "\"");
  return c;
}

// This component's own replicas: of the subtree's instance, else of all its instances.
Result<int64_t> OwnScale(const Karta& k, const KartaComponent& c, const Subtree& root,
                         const Object& workload) {
  auto scales = Scales(k, c, workload);
  if (!scales) return scales.error();
  if (scales->size() > 1 && c.name == root.component && root.instance) {
    for (const auto& [id, scale] : *scales) {
      if (id == *root.instance) return scale.Effective();
    }
    return KartaError(k, c.path, "instance id " + *root.instance + " not found");
  }
  int64_t sum = 0;
  for (const auto& [id, scale] : *scales) sum += scale.Effective();
  return sum;
}

// Karta's calculateSubtreeScaleByDefinition: children's sum times the component's own scale,
// either alone when the other is 0.
Result<int64_t> ScaleByDefinition(const Karta& k, std::string_view name, const Subtree& root,
                                  const Object& workload, int depth) {
  auto c = Component(k, name);
  if (!c) return c.error();
  if (depth > static_cast<int>(k.components.size())) return KartaError(k, "", "ownership cycle");
  auto own = OwnScale(k, **c, root, workload);
  if (!own) return own.error();
  int64_t children = 0;
  for (const KartaComponent* child : k.Children(name)) {
    auto s = ScaleByDefinition(k, child->name, root, workload, depth + 1);
    if (!s) return s.error();
    children += *s;
  }
  if (children == 0) return *own;
  if (*own == 0) return children;
  return *own * children;
}

// Karta's calculateSubtreeScaleByLeaves, when no component states a scale: one per instance of
// each component that defines pods.
Result<int64_t> ScaleByLeaves(const Karta& k, std::string_view name, const Subtree& root,
                              const Object& workload, int depth) {
  auto c = Component(k, name);
  if (!c) return c.error();
  if (depth > static_cast<int>(k.components.size())) return KartaError(k, "", "ownership cycle");
  if ((*c)->HasPodDefinition()) {
    if (!(*c)->instance_ids) return int64_t{1};
    auto ids = InstanceIds(k, **c, workload);
    if (!ids) return ids.error();
    if (name != root.component || !root.instance) return static_cast<int64_t>(ids->size());
    for (const std::string& id : *ids) {
      if (id == *root.instance) return int64_t{1};
    }
    return KartaError(k, (*c)->path, "instance id " + *root.instance + " not found");
  }
  int64_t leaves = 0;
  for (const KartaComponent* child : k.Children(name)) {
    auto s = ScaleByLeaves(k, child->name, root, workload, depth + 1);
    if (!s) return s.error();
    leaves += *s;
  }
  return leaves;
}

// Karta's CalculateSubtreeScale, as a 32-bit count.
Result<int> SubtreeScale(const Karta& k, const Subtree& root, const Object& workload) {
  if (root.instance && root.instance->empty()) return KartaError(k, "", "instance id is empty");
  auto s = k.AnyScaleDefinition() ? ScaleByDefinition(k, root.component, root, workload, 0)
                                  : ScaleByLeaves(k, root.component, root, workload, 0);
  if (!s) return s.error();
  if (*s > std::numeric_limits<int32_t>::max()) {
    return KartaError(k, "", "component " + root.component + " counts more than 2^31 pods");
  }
  return static_cast<int>(*s);
}

// componentTypeSelector: the pod's key equals the value (or, with no value, is set).
Result<bool> MatchesType(const KartaComponent& c, const Object& pod) {
  if (!c.type_key) return false;
  auto results = c.type_key->Evaluate(pod.node);
  if (!results) return Error{pod.Ref() + ": " + results.error().message};
  for (doc::Node n : *results) {
    if (!n.IsDefined() || n.IsNull()) continue;
    if (!c.type_value) return true;
    if (JqScalarText(n) == *c.type_value) return true;
  }
  return false;
}

// KAI's podMatchesComponentSubtree: the pod is of the component or of one below it.
Result<bool> PodInSubtree(const Karta& k, std::string_view name, const Object& pod, int depth) {
  auto c = Component(k, name);
  if (!c) return c.error();
  if (depth > static_cast<int>(k.components.size())) return KartaError(k, "", "ownership cycle");
  auto match = MatchesType(**c, pod);
  if (!match || *match) return match;
  for (const KartaComponent* child : k.Children(name)) {
    auto m = PodInSubtree(k, child->name, pod, depth + 1);
    if (!m || *m) return m;
  }
  return false;
}

// --- validation at grouping time (KAI's grouping_instruction_validation.go) ---

Status CheckTopology(const Karta& k, const std::string& path, const TopologyConstraint& t) {
  if (t.topology.empty()) {
    return KartaError(k, path, "a topology constraint must include its topology name");
  }
  if (t.preferred_level.empty() && t.required_level.empty()) {
    return KartaError(k, path,
                      "a topology constraint must include a preferred or a required level");
  }
  return Ok();
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  for (size_t at = 0; at <= s.size();) {  // each dot-separated label starts and ends alphanumeric
    const size_t dot = std::min(s.find('.', at), s.size());
    if (dot == at || !alnum(s[at]) || !alnum(s[dot - 1])) return false;
    at = dot + 1;
  }
  return true;
}

std::string KartaPodGroupName(const Object& top, const std::vector<std::string>& keys) {
  std::string name = "pg-" + top.uid;
  for (const std::string& k : keys) name += "-" + k;
  return name;
}

// --- gangScheduling.podGroup ---

constexpr std::string_view kPodGroupPath = "spec.optimizationInstructions.gangScheduling.podGroup";

Result<SubGroupMetadata> SubGroupOf(const GroupingInput& in, const Karta& k, size_t i) {
  const KartaSubGroup& sg = k.pod_group->sub_groups[i];
  const std::string path = std::string(kPodGroupPath) + ".subGroups[" + std::to_string(i) + "]";
  if (sg.component.empty()) return KartaError(k, path + ".componentName", "empty");
  if (k.Find(sg.component) == nullptr) {
    return KartaError(k, path + ".componentName", "no component named \"" + sg.component + "\"");
  }
  auto scale = SubtreeScale(k, {sg.component, std::nullopt}, in.top_owner);
  if (!scale) return scale.error();
  if (*scale == 0) {
    return KartaError(k, path,
                      "component " + sg.component + " must expose a replica scale definition");
  }
  SubGroupMetadata out;
  out.name = sg.component;
  out.min_member = *scale;
  if (sg.topology) {
    if (auto s = CheckTopology(k, path + ".topology", *sg.topology); !s) return s.error();
    out.topology = sg.topology;
  }
  auto member = PodInSubtree(k, sg.component, in.pod, 0);
  if (!member) return member.error();
  if (*member) out.pods.push_back(in.pod.name);
  return out;
}

Result<PodGroupMetadata> GroupByPodGroup(const GroupingInput& in, const Karta& k) {
  const KartaPodGroup& pg = *k.pod_group;
  PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
  md.name = KartaPodGroupName(in.top_owner, {pg.name});
  md.min_sub_group.reset();
  md.sub_groups.clear();
  if (pg.topology) {
    const std::string path = std::string(kPodGroupPath) + ".topology";
    if (auto s = CheckTopology(k, path, *pg.topology); !s) return s.error();
    md.topology = *pg.topology;
  }
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    auto sg = SubGroupOf(in, k, i);
    if (!sg) return sg.error();
    md.sub_groups.push_back(std::move(*sg));
  }
  if (!md.sub_groups.empty()) {
    md.min_sub_group = static_cast<int>(md.sub_groups.size());
    md.min_member = 0;
    return md;
  }
  auto all = SubtreeScale(k, {k.root().name, std::nullopt}, in.top_owner);
  if (!all) return all.error();
  md.min_member = *all;
  return md;
}

// --- gangScheduling.podGroups (deprecated) ---

// Karta's InferPodComponent: the one component that defines pods, else the first whose type
// selector matches the pod.
Result<const KartaComponent*> PodComponent(const Karta& k, const Object& pod) {
  std::vector<const KartaComponent*> leaves;
  for (const KartaComponent& c : k.components) {
    if (c.HasPodDefinition()) leaves.push_back(&c);
  }
  if (leaves.size() == 1) return leaves[0];
  for (const KartaComponent* c : leaves) {
    auto match = MatchesType(*c, pod);
    if (!match) return match.error();
    if (*match) return c;
  }
  return KartaError(k, "", "no component of it matches pod " + pod.Ref());
}

struct Candidate {
  const KartaComponent* component;
  const KartaMember* member;
};

// The member definition naming the pod's component, else its nearest ancestor that one names
// (with no filters, the first such definition always applies).
std::optional<Candidate> EffectiveMember(const Karta& k, const KartaComponent* c) {
  for (size_t depth = 0; c != nullptr && depth <= k.components.size(); ++depth) {
    for (const KartaAlphaGroup& g : k.pod_groups) {
      for (const KartaMember& m : g.members) {
        if (m.component == c->name) return Candidate{c, &m};
      }
    }
    c = c->owner ? k.Find(*c->owner) : nullptr;
  }
  return std::nullopt;
}

// Karta's InferPodComponentInstance: the pod's instance of a component that has several.
Result<std::optional<std::string>> PodInstance(const Karta& k, const KartaComponent& c,
                                               const Object& pod, const Object& workload) {
  auto ids = InstanceIds(k, c, workload);
  if (!ids) return ids.error();
  if (ids->empty() || (*ids)[0].empty() || !c.instance_key) return std::optional<std::string>();
  auto id = SingleText(*c.instance_key, pod.node);
  if (!id) return Error{pod.Ref() + ": " + id.error().message};
  for (const std::string& known : *ids) {
    if (known == *id) return std::optional<std::string>(known);
  }
  return Error{pod.Ref() + ": instance id \"" + *id + "\" is not one of component " + c.name +
               " of " + workload.Ref()};
}

Result<std::vector<std::string>> GroupKeys(const KartaMember& m, const Object& pod) {
  std::vector<std::string> keys;
  for (const JqPath& p : m.group_by) {
    auto v = SingleText(p, pod.node);
    if (!v) return Error{pod.Ref() + ": grouping key: " + v.error().message};
    keys.push_back(std::move(*v));
  }
  return keys;
}

Result<PodGroupMetadata> GroupByMembers(const GroupingInput& in, const Karta& k) {
  auto component = PodComponent(k, in.pod);
  if (!component) return component.error();
  auto candidate = EffectiveMember(k, *component);
  if (!candidate) {
    return KartaError(k, "", "pod " + in.pod.Ref() + " matches no pod group member definition");
  }
  std::optional<std::string> instance;
  if (candidate->component == *component) {
    auto i = PodInstance(k, **component, in.pod, in.top_owner);
    if (!i) return i.error();
    instance = std::move(*i);
  }
  PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
  auto keys = GroupKeys(*candidate->member, in.pod);
  if (!keys) return keys.error();
  md.name = KartaPodGroupName(in.top_owner, *keys);
  if (!keys->empty() && !IsDns1123Subdomain(md.name)) {
    return KartaError(k, "",
                      "the grouping keys of pod " + in.pod.Ref() +
                          " make an invalid PodGroup name \"" + md.name + "\"");
  }
  auto scale = SubtreeScale(k, {candidate->component->name, instance}, in.top_owner);
  if (!scale) return scale.error();
  md.min_member = *scale;
  return md;
}

// --- finding the Karta ---

bool Qualifies(const Karta& k, const KartaGvk& kind) {
  const KartaComponent& root = k.root();
  if (!root.kind || !(*root.kind == kind) || k.deleting) return false;
  if (root.name.empty() && k.components.size() == 1) return false;  // an empty Karta
  return k.pod_group.has_value() || !k.pod_groups.empty();
}

std::string GvkText(const KartaGvk& g) { return g.group + "/" + g.version + ", Kind=" + g.kind; }

class KartaFallbackGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "Karta Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    if (in.env.config().generic_karta_fallback) {
      const Object& top = in.top_owner;
      const KartaGvk kind{std::string(top.Group()), std::string(top.Version()), top.kind};
      if (auto k = FindKarta(in.env, kind)) return GroupByKarta(in, *k);
    }
    return DefaultMetadata(in, in.top_owner, in.owners);
  }
};

}  // namespace

std::optional<Karta> FindKarta(const GroupingEnv& env, const KartaGvk& kind) {
  const Labels selector{{InternedString(kKartaGroupLabel), kind.group},
                        {InternedString(kKartaVersionLabel), kind.version},
                        {InternedString(kKartaKindLabel), kind.kind}};
  auto listed = env.reader().List(kKartaApiVersion, kKartaKind, "", selector);
  if (!listed) {
    env.Note("listing the Kartas of " + GvkText(kind) + ": " + listed.error().message);
    return std::nullopt;
  }
  std::vector<Karta> found;
  for (const Object& o : *listed) {
    auto k = DecodeKarta(o);
    if (!k) {
      env.Note("skipping a malformed Karta: " + k.error().message);
      continue;
    }
    if (!Qualifies(*k, kind)) continue;
    if (auto valid = ValidateKarta(*k); !valid) {
      env.Note("skipping invalid Karta " + o.name + ": " + valid.error().message);
      continue;
    }
    found.push_back(std::move(*k));
  }
  if (found.size() > 1) {
    env.Note("found " + std::to_string(found.size()) +
             " Kartas with gang scheduling instructions for " + GvkText(kind) +
             ": grouping by the default grouper");
    return std::nullopt;
  }
  if (found.empty()) return std::nullopt;
  return std::move(found[0]);
}

Result<PodGroupMetadata> GroupByKarta(const GroupingInput& in, const Karta& k) {
  if (k.pod_group) return GroupByPodGroup(in, k);
  return GroupByMembers(in, k);
}

std::unique_ptr<Grouper> MakeKartaFallbackGrouper() {
  return std::make_unique<KartaFallbackGrouper>();
}

}  // namespace kai::podgrouper
