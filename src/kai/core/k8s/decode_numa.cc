// NUMA inputs: NodeResourceTopology objects (topology.node.k8s.io/v1alpha2), what a pod asks the
// kubelet to align (QoS class, per-container requests) and the placement records of running pods.
#include <algorithm>

#include "kai/core/k8s/decode_fields.h"
#include "kai/core/k8s/keys.h"

namespace kai::decoding {
namespace {

struct NamedPolicy {
  std::string_view name;
  NumaPolicy policy;
  NumaScope scope;  // for the deprecated combined values of topologyPolicies
};

constexpr NamedPolicy kPolicies[] = {
    {"none", NumaPolicy::kNone, NumaScope::kContainer},
    {"best-effort", NumaPolicy::kBestEffort, NumaScope::kContainer},
    {"restricted", NumaPolicy::kRestricted, NumaScope::kContainer},
    {"single-numa-node", NumaPolicy::kSingleNumaNode, NumaScope::kContainer},
};

// The deprecated field topologyPolicies (policy and scope in one enum value).
constexpr NamedPolicy kLegacyPolicies[] = {
    {"None", NumaPolicy::kNone, NumaScope::kContainer},
    {"BestEffort", NumaPolicy::kBestEffort, NumaScope::kContainer},
    {"BestEffortContainerLevel", NumaPolicy::kBestEffort, NumaScope::kContainer},
    {"BestEffortPodLevel", NumaPolicy::kBestEffort, NumaScope::kPod},
    {"Restricted", NumaPolicy::kRestricted, NumaScope::kContainer},
    {"RestrictedContainerLevel", NumaPolicy::kRestricted, NumaScope::kContainer},
    {"RestrictedPodLevel", NumaPolicy::kRestricted, NumaScope::kPod},
    {"SingleNUMANodeContainerLevel", NumaPolicy::kSingleNumaNode, NumaScope::kContainer},
    {"SingleNUMANodePodLevel", NumaPolicy::kSingleNumaNode, NumaScope::kPod},
};

template <size_t N>
const NamedPolicy* FindPolicy(const NamedPolicy (&table)[N], std::string_view name) {
  for (const NamedPolicy& p : table) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// The attributes topologyManagerPolicy and topologyManagerScope; the deprecated topologyPolicies
// when the policy attribute is absent. The kubelet's default scope is container.
void DecodePolicy(const doc::Node& doc, NodeTopologyObject& t, ObjectContext& ctx) {
  std::optional<std::string> policy, scope;
  const doc::Node attrs = doc["attributes"];
  if (IsSeqOrAbsent(attrs, "attributes", ctx)) {
    for (size_t i = 0; i < attrs.size(); ++i) {
      const std::string p = Index("attributes", i);
      const std::string name = Str(attrs[i], "name", p, ctx).value_or("");
      if (name == "topologyManagerPolicy") policy = Str(attrs[i], "value", p, ctx).value_or("");
      if (name == "topologyManagerScope") scope = Str(attrs[i], "value", p, ctx).value_or("");
    }
  }
  if (policy) {
    const NamedPolicy* found = FindPolicy(kPolicies, *policy);
    if (!found) ctx.Fail("attributes.topologyManagerPolicy", "unknown policy \"" + *policy + "\"");
    if (found) t.policy = found->policy;
    if (scope && *scope != "pod" && *scope != "container") {
      ctx.Fail("attributes.topologyManagerScope",
               "must be pod or container, got \"" + *scope + "\"");
    }
    t.scope = scope == "pod" ? NumaScope::kPod : NumaScope::kContainer;
    return;
  }
  const std::vector<std::string> legacy =
      StringList(doc["topologyPolicies"], "topologyPolicies", ctx);
  if (legacy.empty()) return;
  const NamedPolicy* found = FindPolicy(kLegacyPolicies, legacy.front());
  if (!found) ctx.Fail("topologyPolicies[0]", "unknown policy \"" + legacy.front() + "\"");
  if (found) t.policy = found->policy, t.scope = found->scope;
}

// One resource of a zone: allocatable and available (available defaults to allocatable).
void DecodeZoneResource(const doc::Node& r, const std::string& path, NumaZoneObject& zone,
                        ObjectContext& ctx) {
  const std::string name = Str(r, "name", path, ctx).value_or("");
  if (name.empty()) {
    ctx.Fail(Join(path, "name"), "missing");
    return;
  }
  const std::optional<std::string> alloc = Str(r, "allocatable", path, ctx);
  if (!alloc) {
    ctx.Fail(Join(path, "allocatable"), "missing");
    return;
  }
  AddQuantity(zone.allocatable, name, *alloc, Join(path, "allocatable"), ctx);
  const std::string avail = Str(r, "available", path, ctx).value_or(*alloc);
  AddQuantity(zone.available, name, avail, Join(path, "available"), ctx);
}

void DecodeZone(const doc::Node& z, const std::string& path, NodeTopologyObject& t,
                ObjectContext& ctx) {
  const std::string type = Str(z, "type", path, ctx).value_or("");
  if (type.empty()) ctx.Fail(Join(path, "type"), "missing");
  if (type != "Node") return;  // sockets, dies, ...: the kubelet aligns NUMA nodes only
  NumaZoneObject zone;
  zone.name = Str(z, "name", path, ctx).value_or("");
  if (zone.name.empty()) ctx.Fail(Join(path, "name"), "missing");
  const doc::Node res = z["resources"];
  const std::string rp = Join(path, "resources");
  if (IsSeqOrAbsent(res, rp, ctx)) {
    for (size_t i = 0; i < res.size(); ++i) DecodeZoneResource(res[i], Index(rp, i), zone, ctx);
  }
  for (const NumaZoneObject& other : t.zones) {
    if (other.name == zone.name)
      ctx.Fail(Join(path, "name"), "duplicate zone \"" + zone.name + "\"");
  }
  t.zones.push_back(std::move(zone));
}

// ---- pods ----

bool IsHugePages(std::string_view name) { return name.starts_with("hugepages-"); }

// Kubernetes' Guaranteed QoS: every container (init ones too) limits cpu and memory and requests
// exactly its limits (a request not given defaults to the limit).
bool ContainerGuaranteed(const doc::Node& c, std::string_view path, ObjectContext& ctx) {
  const doc::Node limits_node = c["resources"]["limits"];
  if (!limits_node["cpu"].IsDefined() || !limits_node["memory"].IsDefined()) return false;
  const Resources limits = ResourceList(limits_node, Join(path, "resources.limits"), ctx);
  const Resources requests = ContainerRequest(c, path, ctx);
  return requests.milli_cpu == limits.milli_cpu && requests.memory == limits.memory;
}

bool AllGuaranteed(const doc::Node& list, std::string_view path, ObjectContext& ctx) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (!ContainerGuaranteed(list[i], Index(path, i), ctx)) return false;
  }
  return true;
}

// status.qosClass when the API server set it, else Kubernetes' rule.
bool IsGuaranteed(const doc::Node& doc, ObjectContext& ctx) {
  const doc::Node spec = doc["spec"];
  if (const auto qos = Str(doc["status"], "qosClass", "status", ctx)) return *qos == "Guaranteed";
  const doc::Node containers = spec["containers"];
  if (!containers.IsSequence() || containers.size() == 0) return false;
  return AllGuaranteed(containers, "spec.containers", ctx) &&
         AllGuaranteed(spec["initContainers"], "spec.initContainers", ctx);
}

// A container's request as the kubelet aligns it: CPU only as whole exclusive CPUs of a
// Guaranteed pod (the static CPU manager leaves fractional CPUs in the shared pool).
Resources AlignedRequest(Resources r, bool guaranteed) {
  if (!guaranteed || r.milli_cpu % kMilliPerUnit != 0) r.milli_cpu = 0;
  r.pods = 0;
  return r;
}

// Asks for something only the device manager aligns (GPUs, other extended resources).
bool AsksDevices(const Resources& r) {
  if (r.milli_gpu > 0) return true;
  return std::any_of(r.scalars.begin(), r.scalars.end(),
                     [](const auto& s) { return !IsHugePages(ResourceName(s.first)); });
}

// The pod-scope request: Kubernetes' pod request shape (max of the long-running sum and each init
// container's peak, plus overhead) over the aligned container requests.
Resources PodScopeRequest(const PodNumaRequest& n, const std::vector<bool>& init_sidecar,
                          const Resources& overhead) {
  Resources sidecars, peak;
  size_t s = 0, serial = 0;
  for (bool sidecar : init_sidecar) {
    if (sidecar) {
      sidecars += n.concurrent[s++];
      peak = Max(peak, sidecars);
    } else {
      peak = Max(peak, n.serial[serial++] + sidecars);
    }
  }
  Resources running = sidecars;
  for (size_t c = s; c < n.concurrent.size(); ++c) running += n.concurrent[c];
  Resources total = Max(running, peak);
  total += overhead;
  return total;
}

}  // namespace

void DecodeNodeTopology(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                        ClusterState& state) {
  NodeTopologyObject t;
  t.meta = DecodeMeta(doc, "NodeResourceTopology", false, source, ctx);
  DecodePolicy(doc, t, ctx);
  const doc::Node zones = doc["zones"];
  if (IsSeqOrAbsent(zones, "zones", ctx)) {
    for (size_t i = 0; i < zones.size(); ++i) DecodeZone(zones[i], Index("zones", i), t, ctx);
  }
  state.node_topologies.push_back(std::move(t));
}

NumaPlacementRecord DecodeNumaRecord(const doc::Node& n, std::string_view path,
                                     ObjectContext& ctx) {
  NumaPlacementRecord out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index(path, i);
    NumaZoneAmount z;
    z.zone = Str(n[i], "zone", p, ctx).value_or("");
    if (z.zone.empty()) ctx.Fail(Join(p, "zone"), "missing");
    z.amount = ResourceList(n[i]["amount"], Join(p, "amount"), ctx);
    z.amount.pods = 0;
    out.push_back(std::move(z));
  }
  return out;
}

namespace {

// A placement annotation: a JSON list of {zone, amount}.
NumaPlacementRecord AnnotationRecord(const PodObject& pod, std::string_view key,
                                     ObjectContext& ctx) {
  const auto it = pod.meta.annotations.find(key);
  if (it == pod.meta.annotations.end() || it->second.empty()) return {};
  const std::string field = "metadata.annotations." + std::string(key);
  const Result<doc::Document> parsed = doc::ParseJson(it->second);
  if (!parsed.ok()) {
    ctx.Fail(field, "must be a JSON list of {zone, amount}: " + parsed.error().message);
    return {};
  }
  const std::vector<doc::Node> roots = parsed->Roots();
  if (roots.size() != 1 || !roots[0].IsSequence()) {
    ctx.Fail(field, "must be a JSON list of {zone, amount}");
    return {};
  }
  return DecodeNumaRecord(roots[0], field, ctx);
}

void DecodeContainers(const doc::Node& spec, bool guaranteed, PodNumaRequest& n,
                      std::vector<bool>& init_sidecar, ObjectContext& ctx) {
  const doc::Node inits = spec["initContainers"];
  for (size_t i = 0; inits.IsSequence() && i < inits.size(); ++i) {
    const std::string p = Index("spec.initContainers", i);
    const Resources r = AlignedRequest(ContainerRequest(inits[i], p, ctx), guaranteed);
    const bool sidecar = Str(inits[i], "restartPolicy", p, ctx).value_or("") == "Always";
    (sidecar ? n.concurrent : n.serial).push_back(r);
    init_sidecar.push_back(sidecar);
  }
  const doc::Node containers = spec["containers"];
  for (size_t i = 0; containers.IsSequence() && i < containers.size(); ++i) {
    const std::string p = Index("spec.containers", i);
    n.concurrent.push_back(AlignedRequest(ContainerRequest(containers[i], p, ctx), guaranteed));
  }
}

}  // namespace

void DecodePodNuma(const doc::Node& doc, PodObject& pod, ObjectContext& ctx) {
  // The containers' fields were checked by DecodePod: reading them again reports nothing twice.
  const std::string no_source;
  std::vector<std::string> reported;
  ObjectContext quiet(no_source, "", reported);
  PodNumaRequest n;
  n.guaranteed = IsGuaranteed(doc, quiet);
  n.observed = AnnotationRecord(pod, keys::kNumaPlacementObserved, ctx);
  n.predicted = AnnotationRecord(pod, keys::kNumaPlacementPredicted, ctx);
  const bool relevant =
      n.guaranteed || AsksDevices(pod.request) || !n.observed.empty() || !n.predicted.empty();
  if (!relevant) return;
  const doc::Node spec = doc["spec"];
  std::vector<bool> init_sidecar;
  DecodeContainers(spec, n.guaranteed, n, init_sidecar, quiet);
  n.pod_scope =
      PodScopeRequest(n, init_sidecar, ResourceList(spec["overhead"], "spec.overhead", quiet));
  pod.numa.push_back(std::move(n));
}

}  // namespace kai::decoding
