#include "kai/core/k8s/encode.h"

#include <yaml-cpp/yaml.h>

#include "kai/core/k8s/doc.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/util/time.h"

namespace kai {
namespace {

// An exact decimal of value / 10^scale ("1.5" for 1500 at scale 3).
std::string Decimal(int64_t value, int scale) {
  if (scale == 0) return std::to_string(value);
  const bool neg = value < 0;
  uint64_t v = neg ? static_cast<uint64_t>(-(value + 1)) + 1 : static_cast<uint64_t>(value);
  uint64_t div = 1;
  for (int i = 0; i < scale; ++i) div *= 10;
  std::string frac = std::to_string(v % div);
  frac.insert(0, static_cast<size_t>(scale) - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  std::string out = (neg ? "-" : "") + std::to_string(v / div);
  if (!frac.empty()) out += "." + frac;
  return out;
}

std::string MilliQuantity(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

class Out {
 public:
  YAML::Emitter e;
  void Key(std::string_view k) { e << YAML::Key << std::string(k); }
  void Val(std::string_view v) { e << YAML::Value << YAML::DoubleQuoted << std::string(v); }
  void KV(std::string_view k, std::string_view v) {
    Key(k);
    Val(v);
  }
  void KVIf(std::string_view k, std::string_view v) {
    if (!v.empty()) KV(k, v);
  }
  void KInt(std::string_view k, int64_t v) {
    Key(k);
    e << YAML::Value << v;
  }
  void KBool(std::string_view k, bool v) {
    Key(k);
    e << YAML::Value << (v ? "true" : "false");
  }
  void BeginMap(std::string_view k) {
    Key(k);
    e << YAML::Value << YAML::BeginMap;
  }
  void BeginSeq(std::string_view k) {
    Key(k);
    e << YAML::Value << YAML::BeginSeq;
  }
  void StringMap(std::string_view k, const Labels& m) {
    if (m.empty()) return;
    BeginMap(k);
    for (const auto& [key, v] : m) KV(key, v);
    e << YAML::EndMap;
  }
  void Strings(std::string_view k, const std::vector<std::string>& v) {
    if (v.empty()) return;
    BeginSeq(k);
    for (const auto& s : v) e << YAML::DoubleQuoted << s;
    e << YAML::EndSeq;
  }
  void Doc(std::string_view api, std::string_view kind) {
    e << YAML::BeginDoc << YAML::BeginMap;
    KV("apiVersion", api);
    KV("kind", kind);
  }
  void EndDoc() { e << YAML::EndMap; }
};

void Meta(Out& o, const ObjectMeta& m) {
  o.BeginMap("metadata");
  o.KV("name", m.name);
  if (!m.ns.empty()) o.KV("namespace", m.ns);
  o.KVIf("uid", m.uid);
  if (m.creation) o.KV("creationTimestamp", FormatRfc3339(*m.creation));
  if (m.deletion) o.KV("deletionTimestamp", FormatRfc3339(*m.deletion));
  o.StringMap("labels", m.labels);
  o.StringMap("annotations", m.annotations);
  o.e << YAML::EndMap;
}

void ResourceMap(Out& o, std::string_view key, const Resources& r, bool with_pods) {
  o.BeginMap(key);
  if (r.milli_cpu) o.KV("cpu", MilliQuantity(r.milli_cpu));
  if (r.memory) o.KV("memory", std::to_string(r.memory));
  if (r.milli_gpu) o.KV(keys::kGpuResource, MilliQuantity(r.milli_gpu));
  if (with_pods && r.pods) o.KV("pods", std::to_string(r.pods));
  for (const auto& [id, amount] : r.scalars) o.KV(ResourceName(id), std::to_string(amount));
  o.e << YAML::EndMap;
}

void Node(Out& o, const NodeObject& n) {
  o.Doc("v1", "Node");
  Meta(o, n.meta);
  o.BeginMap("spec");
  if (n.unschedulable) o.KBool("unschedulable", true);
  if (!n.taints.empty()) {
    o.BeginSeq("taints");
    for (const Taint& t : n.taints) {
      o.e << YAML::BeginMap;
      o.KV("key", t.key);
      o.KVIf("value", t.value);
      o.KVIf("effect", t.effect);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  o.e << YAML::EndMap;
  o.BeginMap("status");
  ResourceMap(o, "capacity", n.capacity, true);
  ResourceMap(o, "allocatable", n.allocatable, true);
  o.BeginSeq("conditions");
  o.e << YAML::BeginMap;
  o.KV("type", "Ready");
  o.KV("status", n.ready ? "True" : "False");
  o.e << YAML::EndMap;
  for (const std::string& c : n.bad_conditions) {
    if (c == "NotReady") continue;
    o.e << YAML::BeginMap;
    o.KV("type", c);
    o.KV("status", "True");
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq << YAML::EndMap;
  o.EndDoc();
}

void Requirements(Out& o, std::string_view key, const std::vector<SelectorRequirement>& rs) {
  if (rs.empty()) return;
  o.BeginSeq(key);
  for (const auto& r : rs) {
    o.e << YAML::BeginMap;
    o.KV("key", r.key);
    o.KV("operator", r.op);
    o.Strings("values", r.values);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

template <class Terms>
void NodeSelectorTerms(Out& o, const Terms& terms) {
  o.BeginSeq("nodeSelectorTerms");
  for (const NodeSelectorTerm& t : terms) {
    o.e << YAML::BeginMap;
    Requirements(o, "matchExpressions", t.match_expressions);
    Requirements(o, "matchFields", t.match_fields);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

void AffinityTerm(Out& o, const PodAffinityTerm& t) {
  o.e << YAML::BeginMap;
  if (!t.selector.matches_nothing) {
    o.BeginMap("labelSelector");
    o.StringMap("matchLabels", t.selector.match_labels);
    Requirements(o, "matchExpressions", t.selector.match_expressions);
    o.e << YAML::EndMap;
  }
  o.Strings("namespaces", t.namespaces);
  if (t.all_namespaces) {
    o.Key("namespaceSelector");
    o.e << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::EndMap;
  }
  o.KV("topologyKey", t.topology_key);
  o.e << YAML::EndMap;
}

template <class Req, class Pref>
void PodAffinity(Out& o, std::string_view key, const Req& required, const Pref& preferred) {
  if (required.empty() && preferred.empty()) return;
  o.BeginMap(key);
  if (!required.empty()) {
    o.BeginSeq("requiredDuringSchedulingIgnoredDuringExecution");
    for (const auto& t : required) AffinityTerm(o, t);
    o.e << YAML::EndSeq;
  }
  if (!preferred.empty()) {
    o.BeginSeq("preferredDuringSchedulingIgnoredDuringExecution");
    for (const auto& w : preferred) {
      o.e << YAML::BeginMap;
      o.KInt("weight", w.weight);
      o.Key("podAffinityTerm");
      o.e << YAML::Value;
      AffinityTerm(o, w.term);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  o.e << YAML::EndMap;
}

void Affinity(Out& o, const PodObject& p) {
  const bool any = !p.required_node_affinity.empty() || !p.required_pod_affinity.empty() ||
                   !p.preferred_pod_affinity.empty() || !p.required_pod_anti_affinity.empty() ||
                   !p.preferred_pod_anti_affinity.empty();
  if (!any) return;
  o.BeginMap("affinity");
  if (!p.required_node_affinity.empty()) {
    o.BeginMap("nodeAffinity");
    o.BeginMap("requiredDuringSchedulingIgnoredDuringExecution");
    NodeSelectorTerms(o, p.required_node_affinity);
    o.e << YAML::EndMap << YAML::EndMap;
  }
  PodAffinity(o, "podAffinity", p.required_pod_affinity, p.preferred_pod_affinity);
  PodAffinity(o, "podAntiAffinity", p.required_pod_anti_affinity, p.preferred_pod_anti_affinity);
  o.e << YAML::EndMap;
}

// --- Dynamic Resource Allocation (model/dra.h) ---

void PodClaims(Out& o, const PodObject& p) {
  if (p.resource_claims.empty()) return;
  o.BeginSeq("resourceClaims");
  for (const PodClaimRef& r : p.resource_claims) {
    o.e << YAML::BeginMap;
    o.KV("name", r.name);
    if (r.FromTemplate()) {
      o.KV("resourceClaimTemplateName", r.template_name);
    } else {
      o.KV("resourceClaimName", r.claim_name);
    }
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

void PodClaimStatuses(Out& o, const PodObject& p) {
  bool any = false;
  for (const PodClaimRef& r : p.resource_claims) {
    if (!r.FromTemplate() || r.claim_name.empty()) continue;
    if (!any) o.BeginSeq("resourceClaimStatuses");
    any = true;
    o.e << YAML::BeginMap;
    o.KV("name", r.name);
    o.KV("resourceClaimName", r.claim_name);
    o.e << YAML::EndMap;
  }
  if (any) o.e << YAML::EndSeq;
}

void Selectors(Out& o, std::string_view key, const std::vector<std::string>& selectors) {
  if (selectors.empty()) return;
  o.BeginSeq(key);
  for (const std::string& expr : selectors) {
    o.e << YAML::BeginMap;
    o.BeginMap("cel");
    o.KV("expression", expr);
    o.e << YAML::EndMap << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

// A JSON value (opaque parameters) as YAML: strings double-quoted, numbers and booleans plain.
void JsonValue(Out& o, const doc::Node& n) {
  switch (n.type()) {
    case doc::Type::kScalar:
      if (n.IsQuoted()) {
        o.e << YAML::DoubleQuoted << std::string(n.Scalar());
      } else {
        o.e << std::string(n.Scalar());
      }
      break;
    case doc::Type::kMap:
      o.e << YAML::BeginMap;
      for (const auto& entry : n.Entries()) {
        o.Key(entry.first.Scalar());
        o.e << YAML::Value;
        JsonValue(o, entry.second);
      }
      o.e << YAML::EndMap;
      break;
    case doc::Type::kSequence:
      o.e << YAML::BeginSeq;
      for (size_t i = 0; i < n.size(); ++i) JsonValue(o, n[i]);
      o.e << YAML::EndSeq;
      break;
    case doc::Type::kNull:
    case doc::Type::kUndefined:
      o.e << YAML::Null;
      break;
  }
}

// devices.config / spec.config entries: {source, requests, opaque: {driver, parameters}}.
void DeviceConfigs(Out& o, std::string_view key, const std::vector<DeviceConfig>& config,
                   bool with_source) {
  if (config.empty()) return;
  o.BeginSeq(key);
  for (const DeviceConfig& c : config) {
    o.e << YAML::BeginMap;
    if (with_source) {
      o.KV("source", c.source == DeviceConfigSource::kClass ? "FromClass" : "FromClaim");
    }
    o.Strings("requests", c.requests);
    o.BeginMap("opaque");
    o.KV("driver", c.driver);
    o.Key("parameters");
    o.e << YAML::Value;
    auto parsed = doc::ParseJson(c.parameters.empty() ? "{}" : c.parameters);
    if (parsed.ok() && !parsed->Roots().empty()) {
      JsonValue(o, parsed->Roots()[0]);
    } else {
      o.e << YAML::Flow << YAML::BeginMap << YAML::EndMap;
    }
    o.e << YAML::EndMap << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

// spec.devices: the requests and the claim's driver configuration.
void DeviceRequests(Out& o, const std::vector<DeviceRequestSpec>& requests,
                    const std::vector<DeviceConfig>& config) {
  o.BeginMap("devices");
  o.BeginSeq("requests");
  for (const DeviceRequestSpec& r : requests) {
    o.e << YAML::BeginMap;
    o.KV("name", r.name);
    if (r.first_available) {
      o.BeginSeq("firstAvailable");
      o.e << YAML::EndSeq;
    } else {
      o.BeginMap("exactly");
      o.KV("deviceClassName", r.device_class);
      o.KV("allocationMode", r.mode == DeviceAllocationMode::kAll ? "All" : "ExactCount");
      if (r.mode == DeviceAllocationMode::kExactCount) o.KV("count", std::to_string(r.count));
      Selectors(o, "selectors", r.selectors);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
  DeviceConfigs(o, "config", config, false);
  o.e << YAML::EndMap;
}

// An allocation's node selector: metadata.name In `nodes`.
void NodeSelector(Out& o, const std::vector<std::string>& nodes) {
  o.BeginMap("nodeSelector");
  o.BeginSeq("nodeSelectorTerms");
  o.e << YAML::BeginMap;
  o.BeginSeq("matchFields");
  o.e << YAML::BeginMap;
  o.KV("key", "metadata.name");
  o.KV("operator", "In");
  o.BeginSeq("values");
  for (const std::string& n : nodes) o.e << YAML::DoubleQuoted << n;
  o.e << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndSeq;
  o.e << YAML::EndMap;
}

// devices: {results, config}.
void AllocatedDevices(Out& o, const std::vector<AllocatedDevice>& devices,
                      const std::vector<DeviceConfig>& config) {
  o.BeginMap("devices");
  o.BeginSeq("results");
  for (const AllocatedDevice& d : devices) {
    o.e << YAML::BeginMap;
    o.KV("request", d.request);
    o.KV("driver", d.driver);
    o.KV("pool", d.pool);
    o.KV("device", d.device);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
  DeviceConfigs(o, "config", config, true);
  o.e << YAML::EndMap;
}

void ClaimStatus(Out& o, const ResourceClaimObject& c) {
  if (!c.allocated && c.reserved_for.empty()) return;
  o.BeginMap("status");
  if (c.allocated) {
    o.BeginMap("allocation");
    AllocatedDevices(o, c.devices, c.allocation_config);
    if (!c.selector_any_node) NodeSelector(o, c.selector_nodes);
    o.e << YAML::EndMap;
  }
  if (!c.reserved_for.empty()) {
    o.BeginSeq("reservedFor");
    for (const ClaimConsumer& r : c.reserved_for) {
      o.e << YAML::BeginMap;
      o.KVIf("resource", r.resource);
      o.KV("name", r.name);
      o.KVIf("uid", r.uid);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  o.e << YAML::EndMap;
}

constexpr std::string_view kResourceApi = "resource.k8s.io/v1";

void ResourceClaim(Out& o, const ResourceClaimObject& c) {
  o.Doc(kResourceApi, "ResourceClaim");
  Meta(o, c.meta);
  o.BeginMap("spec");
  DeviceRequests(o, c.requests, c.config);
  o.e << YAML::EndMap;
  ClaimStatus(o, c);
  o.EndDoc();
}

void ResourceClaimTemplate(Out& o, const ResourceClaimTemplateObject& t) {
  o.Doc(kResourceApi, "ResourceClaimTemplate");
  Meta(o, t.meta);
  o.BeginMap("spec");
  o.BeginMap("spec");
  DeviceRequests(o, t.requests, t.config);
  o.e << YAML::EndMap << YAML::EndMap;
  o.EndDoc();
}

void DeviceClass(Out& o, const DeviceClassObject& c) {
  o.Doc(kResourceApi, "DeviceClass");
  Meta(o, c.meta);
  o.BeginMap("spec");
  Selectors(o, "selectors", c.selectors);
  o.KVIf("extendedResourceName", c.extended_resource_name);
  DeviceConfigs(o, "config", c.config, false);
  o.e << YAML::EndMap;
  o.EndDoc();
}

void Attribute(Out& o, const std::string& name, const DeviceAttribute& a) {
  o.BeginMap(name);
  switch (a.kind) {
    case DeviceAttribute::Kind::kInt:
      o.KInt("int", a.int_value);
      break;
    case DeviceAttribute::Kind::kBool:
      o.KBool("bool", a.bool_value);
      break;
    case DeviceAttribute::Kind::kString:
      o.KV("string", a.string_value);
      break;
    case DeviceAttribute::Kind::kVersion:
      o.KV("version", a.string_value);
      break;
  }
  o.e << YAML::EndMap;
}

void SliceDevices(Out& o, const ResourceSliceObject& s) {
  o.BeginSeq("devices");
  for (const SliceDevice& d : s.devices) {
    o.e << YAML::BeginMap;
    o.KV("name", d.name);
    if (!d.attributes.empty()) {
      o.BeginMap("attributes");
      for (const auto& [name, a] : d.attributes) Attribute(o, name, a);
      o.e << YAML::EndMap;
    }
    if (!d.capacity.empty()) {
      o.BeginMap("capacity");
      for (const auto& [name, v] : d.capacity) {
        o.BeginMap(name);
        o.KV("value", std::to_string(v));
        o.e << YAML::EndMap;
      }
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

void ResourceSlice(Out& o, const ResourceSliceObject& s) {
  o.Doc(kResourceApi, "ResourceSlice");
  Meta(o, s.meta);
  o.BeginMap("spec");
  o.KV("driver", s.driver);
  o.BeginMap("pool");
  o.KV("name", s.pool);
  o.e << YAML::EndMap;
  o.KVIf("nodeName", s.node_name);
  if (s.all_nodes) o.KBool("allNodes", true);
  SliceDevices(o, s);
  o.e << YAML::EndMap;
  o.EndDoc();
}

// --- Storage (model/storage.h) ---

// The host ports of every container, on the one container written.
void HostPorts(Out& o, const PodObject& p) {
  if (p.host_ports.empty()) return;
  o.BeginSeq("ports");
  for (const HostPort& hp : p.host_ports) {
    o.e << YAML::BeginMap;
    o.KInt("containerPort", hp.port);
    o.KInt("hostPort", hp.port);
    o.KV("protocol", hp.protocol);
    o.KVIf("hostIP", hp.host_ip);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

void PodVolumes(Out& o, const PodObject& p) {
  if (p.volume_claims.empty()) return;
  o.BeginSeq("volumes");
  for (size_t i = 0; i < p.volume_claims.size(); ++i) {
    const PodVolumeClaim& v = p.volume_claims[i];
    o.e << YAML::BeginMap;
    if (v.ephemeral) {
      // The claim of an ephemeral volume is named "<pod>-<volume>".
      o.KV("name", v.claim.substr(std::min(v.claim.size(), p.meta.name.size() + 1)));
      o.BeginMap("ephemeral");
      o.BeginMap("volumeClaimTemplate");
      o.BeginMap("spec");
      o.e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
    } else {
      o.KV("name", "claim-" + std::to_string(i));
      o.BeginMap("persistentVolumeClaim");
      o.KV("claimName", v.claim);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

void AccessModes(Out& o, uint8_t modes) {
  if (!modes) return;
  o.BeginSeq("accessModes");
  for (const auto& [bit, name] : kAccessModeNames) {
    if (modes & bit) o.e << std::string(name);
  }
  o.e << YAML::EndSeq;
}

void Storage(Out& o, std::string_view key, int64_t bytes) {
  o.BeginMap(key);
  o.KV("storage", std::to_string(bytes));
  o.e << YAML::EndMap;
}

void PersistentVolume(Out& o, const PersistentVolumeObject& v) {
  o.Doc("v1", "PersistentVolume");
  Meta(o, v.meta);
  o.BeginMap("spec");
  Storage(o, "capacity", v.capacity);
  AccessModes(o, v.access_modes);
  o.KVIf("storageClassName", v.storage_class);
  if (v.block) o.KV("volumeMode", "Block");
  if (!v.node_affinity.empty()) {
    o.BeginMap("nodeAffinity");
    o.BeginMap("required");
    NodeSelectorTerms(o, v.node_affinity);
    o.e << YAML::EndMap << YAML::EndMap;
  }
  if (!v.claim_name.empty() || !v.claim_ns.empty()) {
    o.BeginMap("claimRef");
    o.KVIf("namespace", v.claim_ns);
    o.KVIf("name", v.claim_name);
    o.KVIf("uid", v.claim_uid);
    o.e << YAML::EndMap;
  }
  if (!v.csi_driver.empty() || !v.volume_handle.empty()) {
    o.BeginMap("csi");
    o.KVIf("driver", v.csi_driver);
    o.KVIf("volumeHandle", v.volume_handle);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndMap;
  if (!v.phase.empty()) {
    o.BeginMap("status");
    o.KV("phase", v.phase);
    o.e << YAML::EndMap;
  }
  o.EndDoc();
}

void PersistentVolumeClaim(Out& o, const PersistentVolumeClaimObject& c) {
  o.Doc("v1", "PersistentVolumeClaim");
  Meta(o, c.meta);
  o.BeginMap("spec");
  if (c.class_set) o.KV("storageClassName", c.storage_class);
  o.KVIf("volumeName", c.volume_name);
  AccessModes(o, c.access_modes);
  if (c.block) o.KV("volumeMode", "Block");
  o.BeginMap("resources");
  Storage(o, "requests", c.request);
  o.e << YAML::EndMap << YAML::EndMap;
  o.BeginMap("status");
  o.KV("phase", c.phase);
  o.e << YAML::EndMap;
  o.EndDoc();
}

void StorageClass(Out& o, const StorageClassObject& sc) {
  o.Doc("storage.k8s.io/v1", "StorageClass");
  Meta(o, sc.meta);
  o.KV("provisioner", sc.provisioner);
  o.KV("volumeBindingMode", sc.wait_for_first_consumer ? "WaitForFirstConsumer" : "Immediate");
  if (!sc.allowed_topologies.empty()) {
    o.BeginSeq("allowedTopologies");
    for (const NodeSelectorTerm& t : sc.allowed_topologies) {
      o.e << YAML::BeginMap;
      o.BeginSeq("matchLabelExpressions");
      for (const SelectorRequirement& r : t.match_expressions) {
        o.e << YAML::BeginMap;
        o.KV("key", r.key);
        o.Strings("values", r.values);
        o.e << YAML::EndMap;
      }
      o.e << YAML::EndSeq << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  o.EndDoc();
}

void CsiNode(Out& o, const CsiNodeObject& n) {
  o.Doc("storage.k8s.io/v1", "CSINode");
  Meta(o, n.meta);
  o.BeginMap("spec");
  o.BeginSeq("drivers");
  for (const CsiNodeDriver& d : n.drivers) {
    o.e << YAML::BeginMap;
    o.KV("name", d.name);
    if (d.allocatable >= 0) {
      o.BeginMap("allocatable");
      o.KInt("count", d.allocatable);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq << YAML::EndMap;
  o.EndDoc();
}

void Pod(Out& o, const PodObject& p) {
  o.Doc("v1", "Pod");
  Meta(o, p.meta);
  o.BeginMap("spec");
  o.KV("schedulerName", p.scheduler_name);
  o.KVIf("nodeName", p.node_name);
  o.KVIf("priorityClassName", p.priority_class_name);
  if (p.priority) o.KInt("priority", *p.priority);
  o.StringMap("nodeSelector", p.node_selector);
  if (!p.tolerations.empty()) {
    o.BeginSeq("tolerations");
    for (const Toleration& t : p.tolerations) {
      o.e << YAML::BeginMap;
      o.KVIf("key", t.key);
      o.KV("operator", t.op);
      o.KVIf("value", t.value);
      o.KVIf("effect", t.effect);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  Affinity(o, p);
  if (p.scheduling_gated) {
    o.BeginSeq("schedulingGates");
    o.e << YAML::BeginMap;
    o.KV("name", "gated");
    o.e << YAML::EndMap << YAML::EndSeq;
  }
  o.BeginSeq("containers");
  o.e << YAML::BeginMap;
  o.KV("name", "main");
  o.BeginMap("resources");
  ResourceMap(o, "requests", p.request, false);
  o.e << YAML::EndMap;
  HostPorts(o, p);
  o.e << YAML::EndMap << YAML::EndSeq;
  PodVolumes(o, p);
  PodClaims(o, p);
  o.e << YAML::EndMap;
  o.BeginMap("status");
  o.KV("phase", p.phase);
  o.KVIf("nominatedNodeName", p.nominated_node);
  PodClaimStatuses(o, p);
  // The one container written has no limits: the QoS class says what they made it.
  if (!p.numa.empty() && p.numa[0].guaranteed) o.KV("qosClass", "Guaranteed");
  o.e << YAML::EndMap;
  o.EndDoc();
}

void TopologyConstraint(Out& o, const std::optional<TopologyConstraintSpec>& c) {
  if (!c) return;
  o.BeginMap("topologyConstraint");
  o.KVIf("topology", c->topology);
  o.KVIf("requiredTopologyLevel", c->required_level);
  o.KVIf("preferredTopologyLevel", c->preferred_level);
  o.e << YAML::EndMap;
}

void PodGroup(Out& o, const PodGroupObject& g) {
  o.Doc("scheduling.run.ai/v2alpha2", "PodGroup");
  Meta(o, g.meta);
  o.BeginMap("spec");
  o.KV("queue", g.queue);
  o.KVIf("priorityClassName", g.priority_class_name);
  o.KVIf("preemptibility", g.preemptibility);
  if (g.min_member) o.KInt("minMember", *g.min_member);
  if (g.min_sub_group) o.KInt("minSubGroup", *g.min_sub_group);
  if (!g.sub_groups.empty()) {
    o.BeginSeq("subGroups");
    for (const SubGroupSpec& s : g.sub_groups) {
      o.e << YAML::BeginMap;
      o.KV("name", s.name);
      o.KVIf("parent", s.parent);
      if (s.min_member) o.KInt("minMember", *s.min_member);
      if (s.min_sub_group) o.KInt("minSubGroup", *s.min_sub_group);
      TopologyConstraint(o, s.topology_constraint);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  // A constraint read from the topology annotations is written back only through them.
  const bool annotated =
      g.meta.annotations.find(keys::kTopologyAnnotation) != g.meta.annotations.end();
  if (!annotated) TopologyConstraint(o, g.topology_constraint);
  if (g.preemption_delay_seconds) {
    o.KV("preemptionDelay", std::to_string(*g.preemption_delay_seconds) + "s");
  }
  if (g.staleness_grace_seconds &&
      g.meta.annotations.find(keys::kStalenessGracePeriod) == g.meta.annotations.end()) {
    o.KV("stalenessGracePeriod", std::to_string(*g.staleness_grace_seconds) + "s");
  }
  o.e << YAML::EndMap;
  o.EndDoc();
}

void QueueAmounts(Out& o, std::string_view key, const QueueResource& r, int scale) {
  o.BeginMap(key);
  o.KV("quota", r.quota < 0 ? "-1" : Decimal(r.quota, scale));
  o.KV("limit", r.limit < 0 ? "-1" : Decimal(r.limit, scale));
  o.KV("overQuotaWeight", Decimal(r.weight_milli, 3));
  o.e << YAML::EndMap;
}

void Queue(Out& o, const QueueObject& q) {
  o.Doc("scheduling.run.ai/v2", "Queue");
  Meta(o, q.meta);
  o.BeginMap("spec");
  o.KVIf("parentQueue", q.parent);
  o.KVIf("displayName", q.display_name);
  if (q.priority) o.KInt("priority", *q.priority);
  if (q.preempt_min_runtime) {
    o.KV("preemptMinRuntime", std::to_string(*q.preempt_min_runtime) + "s");
  }
  if (q.reclaim_min_runtime) {
    o.KV("reclaimMinRuntime", std::to_string(*q.reclaim_min_runtime) + "s");
  }
  if (q.has_resources) {
    o.BeginMap("resources");
    QueueAmounts(o, "gpu", q.gpu, 3);
    QueueAmounts(o, "cpu", q.cpu, 0);
    QueueAmounts(o, "memory", q.memory, 6);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndMap;
  o.EndDoc();
}

void PriorityClass(Out& o, const PriorityClassObject& pc) {
  o.Doc("scheduling.k8s.io/v1", "PriorityClass");
  Meta(o, pc.meta);
  o.KInt("value", pc.value);
  if (pc.global_default) o.KBool("globalDefault", true);
  o.EndDoc();
}

void Topology(Out& o, const TopologyObject& t) {
  o.Doc("kai.scheduler/v1alpha1", "Topology");
  Meta(o, t.meta);
  o.BeginMap("spec");
  o.BeginSeq("levels");
  for (const TopologyLevel& l : t.levels) {
    o.e << YAML::BeginMap;
    o.KV("nodeLabel", l.node_label);
    o.KVIf("alias", l.alias);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq << YAML::EndMap;
  o.EndDoc();
}

void NumaZones(Out& o, const NumaPlacementRecord& zones) {
  if (zones.empty()) return;
  o.BeginSeq("predictedNUMAZones");
  for (const NumaZoneAmount& z : zones) {
    o.e << YAML::BeginMap;
    o.KV("zone", z.zone);
    ResourceMap(o, "amount", z.amount, false);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
}

// One resource of a zone, as NodeResourceTopology lists them.
void ZoneResource(Out& o, std::string_view name, int64_t allocatable, int64_t available,
                  bool milli) {
  const auto text = [&](int64_t v) { return milli ? MilliQuantity(v) : std::to_string(v); };
  o.e << YAML::BeginMap;
  o.KV("name", name);
  o.KV("allocatable", text(allocatable));
  o.KV("available", text(available));
  o.e << YAML::EndMap;
}

void NumaZone(Out& o, const NumaZoneObject& z) {
  o.e << YAML::BeginMap;
  o.KV("name", z.name);
  o.KV("type", "Node");
  o.BeginSeq("resources");
  const Resources &a = z.allocatable, &v = z.available;
  if (a.milli_cpu || v.milli_cpu) ZoneResource(o, "cpu", a.milli_cpu, v.milli_cpu, true);
  if (a.memory || v.memory) ZoneResource(o, "memory", a.memory, v.memory, false);
  if (a.milli_gpu || v.milli_gpu) {
    ZoneResource(o, keys::kGpuResource, a.milli_gpu, v.milli_gpu, true);
  }
  Resources names = a;
  names += v;
  for (const auto& [id, amount] : names.scalars) {
    ZoneResource(o, ResourceName(id), a.Scalar(id), v.Scalar(id), false);
  }
  o.e << YAML::EndSeq << YAML::EndMap;
}

void NodeTopology(Out& o, const NodeTopologyObject& t) {
  static constexpr std::string_view kPolicies[] = {"none", "best-effort", "restricted",
                                                   "single-numa-node"};
  o.Doc("topology.node.k8s.io/v1alpha2", "NodeResourceTopology");
  Meta(o, t.meta);
  o.BeginSeq("attributes");
  o.e << YAML::BeginMap;
  o.KV("name", "topologyManagerPolicy");
  o.KV("value", kPolicies[static_cast<int>(t.policy)]);
  o.e << YAML::EndMap << YAML::BeginMap;
  o.KV("name", "topologyManagerScope");
  o.KV("value", t.scope == NumaScope::kPod ? "pod" : "container");
  o.e << YAML::EndMap << YAML::EndSeq;
  o.BeginSeq("zones");
  for (const NumaZoneObject& z : t.zones) NumaZone(o, z);
  o.e << YAML::EndSeq;
  o.EndDoc();
}

// A BindRequest's allocation of a claim: {devices, nodeSelector}.
void BindAllocation(Out& o, const std::vector<AllocatedDevice>& devices,
                    const std::vector<DeviceConfig>& config, const std::string& node) {
  o.BeginMap("allocation");
  AllocatedDevices(o, devices, config);
  if (!node.empty()) NodeSelector(o, {node});
  o.e << YAML::EndMap;
}

// spec.resourceClaimAllocations and spec.extendedResourceClaimAllocation.
void BindClaimAllocations(Out& o, const BindRequestObject& b) {
  if (!b.claim_allocations.empty()) {
    o.BeginSeq("resourceClaimAllocations");
    for (const ClaimAllocation& a : b.claim_allocations) {
      o.e << YAML::BeginMap;
      o.KV("name", a.name);
      BindAllocation(o, a.devices, a.config, a.node);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndSeq;
  }
  if (!b.extended_allocation) return;
  const ExtendedClaimAllocation& e = *b.extended_allocation;
  o.BeginMap("extendedResourceClaimAllocation");
  BindAllocation(o, e.devices, e.config, e.node);
  o.BeginSeq("deviceRequests");
  for (const DeviceRequestSpec& r : e.requests) {
    o.e << YAML::BeginMap;
    o.KV("name", r.name);
    o.BeginMap("exactly");
    o.KV("deviceClassName", r.device_class);
    o.KV("allocationMode", "ExactCount");
    o.KV("count", std::to_string(r.count));
    o.e << YAML::EndMap << YAML::EndMap;
  }
  o.e << YAML::EndSeq;
  o.BeginSeq("containerMappings");
  for (const ContainerRequestMapping& m : e.mappings) {
    o.e << YAML::BeginMap;
    o.KV("containerName", m.container);
    o.KV("resourceName", m.resource);
    o.KV("requestName", m.request);
    o.e << YAML::EndMap;
  }
  o.e << YAML::EndSeq << YAML::EndMap;
}

void BindRequest(Out& o, const BindRequestObject& b) {
  o.Doc("scheduling.run.ai/v1alpha2", "BindRequest");
  Meta(o, b.meta);
  o.BeginMap("spec");
  o.KV("podName", b.pod_name);
  o.KV("selectedNode", b.selected_node);
  o.KVIf("receivedResourceType", b.received_resource_type);
  o.Strings("selectedGPUGroups", b.selected_gpu_groups);
  if (b.gpu_count || !b.gpu_portion.empty()) {
    o.BeginMap("receivedGPU");
    o.KInt("count", b.gpu_count);
    o.KVIf("portion", b.gpu_portion);
    o.e << YAML::EndMap;
  }
  if (b.backoff_limit) o.KInt("backoffLimit", *b.backoff_limit);
  BindClaimAllocations(o, b);
  NumaZones(o, b.numa_zones);
  o.e << YAML::EndMap;
  o.BeginMap("status");
  o.KVIf("phase", b.phase);
  if (b.failed_attempts) o.KInt("failedAttempts", b.failed_attempts);
  o.e << YAML::EndMap;
  o.EndDoc();
}

void SearchBudgets(Out& o, const SearchBudgetsSetting& b) {
  o.BeginMap("scenarioSearchBudgets");
  auto durations = [&](const char* key, const std::map<std::string, std::string>& m) {
    if (m.empty()) return;
    o.BeginMap(key);
    for (const auto& [k, v] : m) o.KV(k, v);
    o.e << YAML::EndMap;
  };
  durations("maxActionSearchDuration", b.max_action);
  durations("maxGeneratorSearchDuration", b.max_generator);
  if (b.max_job) o.KV("maxJobSearchDuration", *b.max_job);
  if (b.min_job) o.KV("minJobSearchDuration", *b.min_job);
  o.e << YAML::EndMap;
}

void Shard(Out& o, const ShardObject& s) {
  o.Doc("kai.scheduler/v1", "SchedulingShard");
  Meta(o, s.meta);
  o.BeginMap("spec");
  o.KVIf("partitionLabelValue", s.partition_label_value);
  if (!s.placement_gpu.empty() || !s.placement_cpu.empty()) {
    o.BeginMap("placementStrategy");
    o.KVIf("gpu", s.placement_gpu);
    o.KVIf("cpu", s.placement_cpu);
    o.e << YAML::EndMap;
  }
  if (!s.actions.empty()) {
    o.BeginMap("actions");
    for (const ActionSetting& a : s.actions) {
      o.BeginMap(a.name);
      if (a.enabled) o.KBool("enabled", *a.enabled);
      if (a.priority) o.KInt("priority", *a.priority);
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  if (!s.plugins.empty()) {
    o.BeginMap("plugins");
    for (const PluginSetting& p : s.plugins) {
      o.BeginMap(p.name);
      if (p.enabled) o.KBool("enabled", *p.enabled);
      if (p.priority) o.KInt("priority", *p.priority);
      if (p.has_arguments) {
        o.BeginMap("arguments");
        for (const auto& [k, v] : p.arguments) o.KV(k, v);
        o.e << YAML::EndMap;
      }
      o.e << YAML::EndMap;
    }
    o.e << YAML::EndMap;
  }
  if (!s.args.empty()) {
    o.BeginMap("args");
    for (const auto& [k, v] : s.args) o.KV(k, v);
    o.e << YAML::EndMap;
  }
  if (s.search_budgets) SearchBudgets(o, *s.search_budgets);
  if (!s.queue_depth_per_action.empty()) {
    o.BeginMap("queueDepthPerAction");
    for (const auto& [k, v] : s.queue_depth_per_action) o.KV(k, v);
    o.e << YAML::EndMap;
  }
  if (s.preempt_min_runtime || s.reclaim_min_runtime) {
    o.BeginMap("minRuntime");
    if (s.preempt_min_runtime) o.KV("preemptMinRuntime", *s.preempt_min_runtime);
    if (s.reclaim_min_runtime) o.KV("reclaimMinRuntime", *s.reclaim_min_runtime);
    o.e << YAML::EndMap;
  }
  if (s.k_value) o.KV("kValue", *s.k_value);
  o.e << YAML::EndMap;
  o.EndDoc();
}

}  // namespace

std::string EncodeManifests(const ClusterState& state) {
  Out o;
  for (const auto& x : state.priority_classes) PriorityClass(o, x);
  for (const auto& x : state.queues) Queue(o, x);
  for (const auto& x : state.topologies) Topology(o, x);
  if (state.shard) Shard(o, *state.shard);
  for (const auto& x : state.nodes) Node(o, x);
  for (const auto& x : state.pod_groups) PodGroup(o, x);
  for (const auto& x : state.pods) Pod(o, x);
  for (const auto& x : state.bind_requests) BindRequest(o, x);
  for (const auto& x : state.dra.classes) DeviceClass(o, x);
  for (const auto& x : state.dra.slices) ResourceSlice(o, x);
  for (const auto& x : state.dra.templates) ResourceClaimTemplate(o, x);
  for (const auto& x : state.dra.claims) ResourceClaim(o, x);
  for (const auto& x : state.node_topologies) NodeTopology(o, x);
  for (const auto& x : state.storage.classes) StorageClass(o, x);
  for (const auto& x : state.storage.volumes) PersistentVolume(o, x);
  for (const auto& x : state.storage.claims) PersistentVolumeClaim(o, x);
  for (const auto& x : state.storage.csi_nodes) CsiNode(o, x);
  return std::string(o.e.c_str()) + "\n";
}

}  // namespace kai
