#pragma once
// Karta (github.com/run-ai/karta): a cluster-scoped run.ai/v1alpha1 Karta describes a custom
// workload kind (its components, where each keeps its replicas, which pods belong to which
// component) and how to gang-schedule it. KAI's pod grouper groups a kind it has no grouper for
// by the one valid Karta naming that kind (PG/karta/, --generic-karta-fallback, on by default).
//
// karta_spec.cc decodes and validates a Karta; karta.cc finds the Karta of a kind and groups by
// it. Two instruction formats:
// - gangScheduling.podGroup: one PodGroup per workload, pg-<uid>-<name>, a SubGroup per listed
//   component (minMember: the component's replicas through its subtree), minSubGroup the number
//   of SubGroups; with no SubGroups, minMember is the whole workload's replicas.
// - gangScheduling.podGroups (deprecated): the pod's component picks a member definition; its
//   groupByKeyPaths, read on the pod, name the PodGroup pg-<uid>-<key>-...; minMember is the
//   member component's replicas (of the pod's instance of it, when the component has several).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/podgrouper/grouper.h"
#include "kai/core/podgrouper/jq_path.h"

namespace kai::podgrouper {

inline constexpr std::string_view kKartaApiVersion = "run.ai/v1alpha1";
inline constexpr std::string_view kKartaKind = "Karta";
// The labels Karta's operator stamps on a Karta with its root component's kind.
inline constexpr std::string_view kKartaGroupLabel = "run.ai/karta-group";
inline constexpr std::string_view kKartaVersionLabel = "run.ai/karta-version";
inline constexpr std::string_view kKartaKindLabel = "run.ai/karta-kind";

struct KartaGvk {
  std::string group, version, kind;
  friend bool operator==(const KartaGvk&, const KartaGvk&) = default;
};

struct KartaComponent {
  std::string name;
  std::string path;                  // "spec.structureDefinition.childComponents[2]", for messages
  std::optional<std::string> owner;  // ownerRef: the parent component
  std::optional<KartaGvk> kind;
  int pod_definitions = 0;  // podTemplateSpecPath, podSpecPath, fragmentedPodSpecDefinition set
  bool has_status_definition = false;
  bool has_scale_definition = false;
  std::optional<JqPath> replicas, min_replicas;  // on the workload object
  std::optional<JqPath> instance_ids;            // instanceIdPath, on the workload object
  // podSelector, on the pod: componentTypeSelector (key, and the value it must equal; none: the
  // key must be set) and componentInstanceSelector.idPath.
  std::optional<JqPath> type_key;
  std::optional<std::string> type_value;
  std::optional<JqPath> instance_key;
  bool HasPodDefinition() const { return pod_definitions > 0; }
};

struct KartaSubGroup {
  std::string component;
  std::optional<TopologyConstraint> topology;
};

struct KartaPodGroup {  // gangScheduling.podGroup
  std::string name;
  std::vector<KartaSubGroup> sub_groups;
  std::optional<TopologyConstraint> topology;
};

struct KartaMember {  // gangScheduling.podGroups[].members[] (deprecated)
  std::string component;
  std::vector<JqPath> group_by;
  size_t filters = 0;  // jq filter expressions: kai does not evaluate them
};

struct KartaAlphaGroup {
  std::string name;
  std::vector<KartaMember> members;
};

struct Karta {
  std::string name;
  bool deleting = false;
  std::vector<KartaComponent> components;  // the root component first
  bool has_gang_scheduling = false;
  std::optional<KartaPodGroup> pod_group;
  std::vector<KartaAlphaGroup> pod_groups;

  const KartaComponent& root() const { return components.front(); }
  const KartaComponent* Find(std::string_view name) const;
  // The components whose ownerRef is `name`, in the Karta's order.
  std::vector<const KartaComponent*> Children(std::string_view name) const;
  // Any component states a scaleDefinition: replicas are counted from them, else from leaves.
  bool AnyScaleDefinition() const;
};

// A Karta object decoded; an error names the Karta and the field (a wrong type, a jq expression
// kai cannot evaluate).
Result<Karta> DecodeKarta(const Object& o);
// Karta's own validation (KartaValidator) and kai's one limit (no jq filters): every problem.
Status ValidateKarta(const Karta& k);

// The Karta that groups `kind`, among the Kartas labelled with it: nullopt when none qualifies
// (KAI then uses the default grouper). What KAI only logs (an invalid Karta skipped, two that
// qualify, a failed list) is noted on `env`.
std::optional<Karta> FindKarta(const GroupingEnv& env, const KartaGvk& kind);

// The PodGroup of in.pod by Karta `k` (whose root component is in.top_owner's kind).
Result<PodGroupMetadata> GroupByKarta(const GroupingInput& in, const Karta& k);

// The hub's fallback for kinds it has no grouper for: by their Karta when
// GrouperConfig::generic_karta_fallback is on and one qualifies, else the default grouper.
std::unique_ptr<Grouper> MakeKartaFallbackGrouper();

}  // namespace kai::podgrouper
