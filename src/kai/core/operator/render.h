#pragma once
// What `kai operator` wants to exist for one Config (KAI's kai.scheduler/v1 Config, "kai-config")
// and the cluster's SchedulingShards: every component's ServiceAccount, RBAC, Deployment and
// Service, one scheduler Deployment per shard, the admission webhooks with their TLS Secret.
// Rendered from deploy/'s files (the same objects `kai install --print` writes), changed as the
// Config's sections say (images, replicas, resources, node placement, security context, flags).
// Pure: the Config and shards come in as the API server's JSON, the objects go out as JSON for a
// server-side apply.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/install/embedded.h"
#include "kai/core/util/result.h"

namespace kai::op {

inline constexpr std::string_view kFieldManager = "kai-operator";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kComponentLabel = "kai.scheduler/component";

// One SchedulingShard as the operator reads it.
struct Shard {
  std::string name, uid;
  std::string partition_label_value;  // spec.partitionLabelValue
  std::string args_json;              // spec.args as JSON ("" when absent)
};

// The admission webhooks' TLS material (the Secret the operator keeps, see tls.h).
struct Tls {
  std::string ca_pem, cert_pem, key_pem;
};

// One object to apply: its API path parts and its JSON.
struct Desired {
  std::string api_version, kind, ns, name;
  std::string component;  // KAI's section: scheduler, binder, podGrouper, admission, ...
  std::string json;
  // Owned by the Config (deleted with it); false for what outlives it: the namespaces and
  // priority classes pods keep naming.
  bool owned = true;
};

struct Rendered {
  std::vector<Desired> objects;      // in apply order
  std::vector<std::string> ignored;  // Config fields kai does not apply, each with the reason
  std::string ns;                    // spec.namespace (kai-scheduler)
};

struct RenderInput {
  std::string config_json;  // the Config object as the API server returns it
  std::vector<Shard> shards;
  std::optional<Tls> tls;  // none yet: the webhook configurations and Secret are left out
  // The image of every component unless its section names one (the operator's own image).
  std::string default_image = "kai:latest";
  // The operator runs in FIPS mode (--fips-mode): every component does. Without it, a component
  // whose image tag ends in -fips (KAI's FIPS variants, its chart's global.fipsMode "on") does.
  bool fips_mode = false;
};

// The objects the Config asks for. An error names the Config's field that cannot be applied as
// written (a malformed image, replicas that are not a number).
Result<Rendered> Render(std::span<const install::EmbeddedFile> files, const RenderInput& in);

// Whether `image` is a FIPS variant: its tag ends in -fips, as KAI names them.
bool IsFipsImage(std::string_view image);

// The shard's lease (KAI's LeaseName): <schedulerName>-<partitionLabelValue>, or
// <schedulerName> when the shard has no partition, so that a kai and a KAI replica of one shard
// never lead at the same time.
std::string ShardLeaseName(const std::string& scheduler_name, const Shard& shard);

}  // namespace kai::op
