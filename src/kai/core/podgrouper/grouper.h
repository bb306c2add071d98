#pragma once
// One grouper per workload kind turns a pod and its owner chain into PodGroup metadata (KAI's
// pkg/podgrouper/podgrouper/plugins/grouper/interface.go); hub.h maps kinds to groupers.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/podgrouper/keys.h"
#include "kai/core/podgrouper/metadata.h"
#include "kai/core/podgrouper/object.h"
#include "kai/core/podgrouper/reader.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

class Hub;

// The pod grouper's flags (KAI's cmd/podgrouper/app/options.go), with KAI's defaults.
struct GrouperConfig {
  std::string scheduler_name = std::string(keys::kSchedulerName);
  std::string queue_label_key = std::string(keys::kQueueLabel);         // --queue-label-key
  std::string node_pool_label_key = std::string(keys::kNodePoolLabel);  // --nodepool-label-key
  bool search_for_legacy_pod_groups = true;                             // --search-legacy-pg
  bool knative_gang_schedule = true;                                    // --knative-gang-schedule
  // --generic-karta-fallback: a kind with no grouper of its own is grouped by its Karta (karta.h).
  bool generic_karta_fallback = true;
  // --pod-group-per-deployment: one PodGroup per Deployment (KAI v0.18); false, one per pod.
  bool pod_group_per_deployment = true;
  // --default-priorities-configmap-{name,namespace}: per-kind default priority classes and
  // preemptibility; none when either is empty.
  std::string default_priorities_configmap_name, default_priorities_configmap_namespace;
};

// One entry of that ConfigMap's `types` JSON: [{typeName, group, priorityName, preemptibility}].
struct TypeDefault {
  std::string priority_name;
  std::string preemptibility;
};
// Keyed by GroupKind.String() of (group, typeName): "Deployment.apps", or the bare kind.
using TypeDefaults = std::map<std::string, TypeDefault, std::less<>>;
Result<TypeDefaults> ParseTypeDefaults(std::string_view types_json);
// The entry for `group_kind` ("Deployment.apps"), else for its bare kind; nullptr when none.
const TypeDefault* DefaultsForKind(const TypeDefaults& defaults, std::string_view group_kind,
                                   std::string_view kind);

// What one grouping may consult besides the owner chain: the reader, the flags, the hub (for
// groupers that delegate), and the answers read so far (each PriorityClass and the defaults
// ConfigMap are read at most once per grouping). Not thread-safe: one per grouping.
class GroupingEnv {
 public:
  GroupingEnv(const ObjectReader& reader, const GrouperConfig& config, const Hub& hub)
      : reader_(reader), config_(config), hub_(hub) {}

  const ObjectReader& reader() const { return reader_; }
  const GrouperConfig& config() const { return config_; }
  const Hub& hub() const { return hub_; }

  // KAI's validatePriorityClassExists: "" and any failed read count as absent.
  bool PriorityClassExists(std::string_view name) const;
  // The ConfigMap's defaults; empty when not configured, absent or malformed (as in KAI, where a
  // failed read only logs and the built-in default applies).
  const TypeDefaults& Defaults() const;

  // What KAI only logs (an invalid label ignored, a lookup that failed and fell back); each
  // message once.
  void Note(std::string message) const;
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  const ObjectReader& reader_;
  const GrouperConfig& config_;
  const Hub& hub_;
  mutable std::map<std::string, bool, std::less<>> priority_classes_;
  mutable std::optional<TypeDefaults> defaults_;
  mutable std::vector<std::string> notes_;
};

struct GroupingInput {
  const Object& pod;
  const Object& top_owner;  // the pod itself when it has no owner
  // KAI's allOwners: the owners from nearest to top (the top owner last); empty when the pod is
  // its own top owner.
  std::span<const Object* const> owners;
  const GroupingEnv& env;
};

class Grouper {
 public:
  virtual ~Grouper() = default;
  virtual std::string_view Name() const = 0;
  // The PodGroup of in.pod; an error names the object and field at fault.
  virtual Result<PodGroupMetadata> Group(const GroupingInput& in) const = 0;
};

}  // namespace kai::podgrouper
