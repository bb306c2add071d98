// Dynamic Resource Allocation kinds (resource.k8s.io v1, v1beta2, v1beta1) and a pod's
// spec.resourceClaims. v1beta1 writes a request's fields on the request itself (v1 nests them
// under `exactly`) and a device's attributes and capacity under `basic`; both read into the same
// model (model/dra.h). Driver configuration (a claim's spec.devices.config, a class's spec.config,
// an allocation's devices.config) is read in its opaque form, its parameters kept as JSON text.
#include <algorithm>

#include "kai/core/k8s/decode_fields.h"
#include "kai/core/resource/quantity.h"

namespace kai::decoding {
namespace {

bool IsBeta1(const doc::Node& doc) {
  const doc::Node api = doc["apiVersion"];
  return api.IsScalar() && api.Scalar() == "resource.k8s.io/v1beta1";
}

std::vector<std::string> CelSelectors(const doc::Node& n, const std::string& path,
                                      ObjectContext& ctx) {
  std::vector<std::string> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index(path, i);
    auto expr = Str(n[i]["cel"], "expression", Join(p, "cel"), ctx);
    if (!expr || expr->empty()) {
      ctx.Fail(Join(p, "cel.expression"), "missing (kai reads CEL selectors only)");
      continue;
    }
    out.push_back(std::move(*expr));
  }
  return out;
}

// The fields of an exact request: `body` is `exactly` (v1) or the request itself (v1beta1).
void ExactRequest(const doc::Node& body, const std::string& path, DeviceRequestSpec& r,
                  ObjectContext& ctx) {
  r.device_class = Str(body, "deviceClassName", path, ctx).value_or("");
  if (r.device_class.empty()) ctx.Fail(Join(path, "deviceClassName"), "missing");
  const std::string mode = Str(body, "allocationMode", path, ctx).value_or("ExactCount");
  if (mode == "All") {
    r.mode = DeviceAllocationMode::kAll;
  } else if (mode != "ExactCount") {
    ctx.Fail(Join(path, "allocationMode"), "unknown mode \"" + mode + "\" (ExactCount or All)");
  }
  // An int64 (Kubernetes' type): KAI's tests ask math.MaxInt64 devices.
  if (auto text = Str(body, "count", path, ctx)) {
    const std::optional<int64_t> c = ParseWholeInteger(*text);
    if (!c || *c < 1) ctx.Fail(Join(path, "count"), "must be an integer of at least 1");
    r.count = c.value_or(1);
  }
  r.selectors = CelSelectors(body["selectors"], Join(path, "selectors"), ctx);
}

DeviceRequestSpec DecodeRequest(const doc::Node& n, const std::string& path, bool beta1,
                                ObjectContext& ctx) {
  DeviceRequestSpec r;
  r.name = Str(n, "name", path, ctx).value_or("");
  if (r.name.empty()) ctx.Fail(Join(path, "name"), "missing");
  if (n["firstAvailable"].IsDefined()) {
    r.first_available = true;
    return r;
  }
  if (beta1) {
    ExactRequest(n, path, r, ctx);
  } else if (n["exactly"].IsMap()) {
    ExactRequest(n["exactly"], Join(path, "exactly"), r, ctx);
  } else {
    ctx.Fail(Join(path, "exactly"), "missing (a request needs exactly or firstAvailable)");
  }
  return r;
}

std::vector<DeviceRequestSpec> DecodeRequests(const doc::Node& devices, const std::string& path,
                                              bool beta1, ObjectContext& ctx) {
  std::vector<DeviceRequestSpec> out;
  const doc::Node reqs = devices["requests"];
  const std::string rp = Join(path, "requests");
  if (!IsSeqOrAbsent(reqs, rp, ctx)) return out;
  for (size_t i = 0; i < reqs.size(); ++i) {
    out.push_back(DecodeRequest(reqs[i], Index(rp, i), beta1, ctx));
  }
  return out;
}

std::vector<AllocatedDevice> AllocatedDevices(const doc::Node& results, const std::string& path,
                                              ObjectContext& ctx) {
  std::vector<AllocatedDevice> out;
  if (!IsSeqOrAbsent(results, path, ctx)) return out;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string p = Index(path, i);
    AllocatedDevice d;
    d.request = Str(results[i], "request", p, ctx).value_or("");
    d.driver = Str(results[i], "driver", p, ctx).value_or("");
    d.pool = Str(results[i], "pool", p, ctx).value_or("");
    d.device = Str(results[i], "device", p, ctx).value_or("");
    if (d.driver.empty()) ctx.Fail(Join(p, "driver"), "missing");
    if (d.pool.empty()) ctx.Fail(Join(p, "pool"), "missing");
    if (d.device.empty()) ctx.Fail(Join(p, "device"), "missing");
    out.push_back(std::move(d));
  }
  return out;
}

// The opaque configuration of a config entry: the driver and the parameters (a JSON object, kept
// as compact JSON text up to Kubernetes' limit).
void Opaque(const doc::Node& entry, const std::string& path, DeviceConfig& c, ObjectContext& ctx) {
  const doc::Node opaque = entry["opaque"];
  const std::string op = Join(path, "opaque");
  if (!opaque.IsMap()) {
    ctx.Fail(op, opaque.IsDefined() && !opaque.IsNull()
                     ? "expected a mapping"
                     : "missing (kai reads opaque driver configuration only)");
    return;
  }
  c.driver = Str(opaque, "driver", op, ctx).value_or("");
  if (c.driver.empty()) ctx.Fail(Join(op, "driver"), "missing");
  const doc::Node params = opaque["parameters"];
  const std::string pp = Join(op, "parameters");
  if (!params.IsDefined() || params.IsNull()) {
    ctx.Fail(pp, "missing");
  } else if (!params.IsMap()) {
    ctx.Fail(pp, "must be a JSON object");
  } else if (auto json = doc::ToCompactJson(params, kMaxOpaqueParametersBytes)) {
    c.parameters = std::move(*json);
  } else {
    ctx.Fail(pp, "longer than the limit of " + std::to_string(kMaxOpaqueParametersBytes) +
                     " bytes of JSON");
  }
}

// Where a config entry sits: a claim's spec.devices.config (requests), a class's spec.config
// (neither requests nor source), an allocation's devices.config (source and requests).
enum class ConfigPlace : uint8_t { kClaim, kClass, kAllocation };

void ConfigSource(const doc::Node& entry, const std::string& path, DeviceConfig& c,
                  ObjectContext& ctx) {
  const std::string source = Str(entry, "source", path, ctx).value_or("");
  if (source == "FromClass") {
    c.source = DeviceConfigSource::kClass;
  } else if (source != "FromClaim") {
    ctx.Fail(Join(path, "source"),
             source.empty() ? "missing (FromClass or FromClaim)"
                            : "unknown source \"" + source + "\" (FromClass or FromClaim)");
  }
}

std::vector<DeviceConfig> DecodeConfigs(const doc::Node& n, const std::string& path,
                                        ConfigPlace place, ObjectContext& ctx) {
  std::vector<DeviceConfig> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  const size_t limit =
      place == ConfigPlace::kAllocation ? kMaxAllocationConfigs : kMaxDeviceConfigs;
  if (n.size() > limit) {
    ctx.Fail(path, std::to_string(n.size()) + " entries, more than the limit of " +
                       std::to_string(limit));
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index(path, i);
    DeviceConfig c;
    if (!n[i].IsMap()) {
      ctx.Fail(p, "expected a mapping");
      continue;
    }
    if (place == ConfigPlace::kAllocation) ConfigSource(n[i], p, c, ctx);
    if (place != ConfigPlace::kClass) {
      c.requests = StringList(n[i]["requests"], Join(p, "requests"), ctx);
    }
    Opaque(n[i], p, c, ctx);
    out.push_back(std::move(c));
  }
  return out;
}

// A claim's config may name only its own requests (a subrequest as <request>/<subrequest>).
void CheckConfigRequests(const std::vector<DeviceConfig>& config,
                         const std::vector<DeviceRequestSpec>& requests, const std::string& path,
                         ObjectContext& ctx) {
  for (size_t i = 0; i < config.size(); ++i) {
    for (size_t j = 0; j < config[i].requests.size(); ++j) {
      const std::string& name = config[i].requests[j];
      const std::string base = name.substr(0, name.find('/'));
      const bool known = std::any_of(requests.begin(), requests.end(),
                                     [&](const DeviceRequestSpec& r) { return r.name == base; });
      if (!known) {
        ctx.Fail(Index(Join(Index(path, i), "requests"), j),
                 "\"" + name + "\" is not a request of the claim");
      }
    }
  }
}

// The node names an allocation's node selector allows (In on metadata.name or
// kubernetes.io/hostname); any other form allows every node.
void AllocationNodes(const doc::Node& selector, std::vector<std::string>& nodes, bool& any) {
  const doc::Node terms = selector["nodeSelectorTerms"];
  if (!terms.IsSequence()) return;
  for (size_t t = 0; t < terms.size(); ++t) {
    for (const char* list : {"matchFields", "matchExpressions"}) {
      const doc::Node reqs = terms[t][list];
      for (size_t i = 0; reqs.IsSequence() && i < reqs.size(); ++i) {
        const doc::Node key = reqs[i]["key"];
        const doc::Node op = reqs[i]["operator"];
        if (!key.IsScalar() || !op.IsScalar() || op.Scalar() != "In") continue;
        if (key.Scalar() != "metadata.name" && key.Scalar() != "kubernetes.io/hostname") continue;
        const doc::Node values = reqs[i]["values"];
        for (size_t v = 0; values.IsSequence() && v < values.size(); ++v) {
          if (values[v].IsScalar()) nodes.emplace_back(values[v].Scalar());
        }
        any = false;
      }
    }
  }
}

void ClaimStatus(const doc::Node& status, ResourceClaimObject& c, ObjectContext& ctx) {
  if (!IsMapOrAbsent(status, "status", ctx)) return;
  const doc::Node alloc = status["allocation"];
  if (IsMapOrAbsent(alloc, "status.allocation", ctx) && alloc.IsDefined() && !alloc.IsNull()) {
    c.allocated = true;
    c.devices =
        AllocatedDevices(alloc["devices"]["results"], "status.allocation.devices.results", ctx);
    c.allocation_config =
        DecodeConfigs(alloc["devices"]["config"], "status.allocation.devices.config",
                      ConfigPlace::kAllocation, ctx);
    AllocationNodes(alloc["nodeSelector"], c.selector_nodes, c.selector_any_node);
  }
  const doc::Node reserved = status["reservedFor"];
  if (!IsSeqOrAbsent(reserved, "status.reservedFor", ctx)) return;
  for (size_t i = 0; i < reserved.size(); ++i) {
    const std::string p = Index("status.reservedFor", i);
    ClaimConsumer r{Str(reserved[i], "resource", p, ctx).value_or(""),
                    Str(reserved[i], "name", p, ctx).value_or(""),
                    Str(reserved[i], "uid", p, ctx).value_or("")};
    if (r.name.empty()) ctx.Fail(Join(p, "name"), "missing");
    c.reserved_for.push_back(std::move(r));
  }
}

std::optional<DeviceAttribute> Attribute(const doc::Node& n, const std::string& path,
                                         ObjectContext& ctx) {
  DeviceAttribute a;
  if (auto v = Int(n, "int", path, ctx)) {
    a.kind = DeviceAttribute::Kind::kInt;
    a.int_value = *v;
  } else if (auto b = Bool(n, "bool", path, ctx)) {
    a.kind = DeviceAttribute::Kind::kBool;
    a.bool_value = *b;
  } else if (auto s = Str(n, "string", path, ctx)) {
    a.string_value = std::move(*s);
  } else if (auto ver = Str(n, "version", path, ctx)) {
    a.kind = DeviceAttribute::Kind::kVersion;
    a.string_value = std::move(*ver);
  } else {
    ctx.Fail(path, "an attribute needs one of int, bool, string, version");
    return std::nullopt;
  }
  return a;
}

void Capacities(const doc::Node& n, const std::string& path, SliceDevice& d, ObjectContext& ctx) {
  if (!IsMapOrAbsent(n, path, ctx)) return;
  for (const auto& e : n.Entries()) {
    const std::string name(e.first.Scalar());
    const doc::Node value = e.second;
    const std::string p = Join(path, name);
    // v1: {value: <quantity>}; early v1beta1: the quantity itself.
    const doc::Node q = value.IsMap() ? value["value"] : value;
    if (!q.IsScalar()) {
      ctx.Fail(Join(p, "value"), "expected a quantity");
      continue;
    }
    auto r = ParseQuantity(q.Scalar(), 0);
    if (!r.ok() || r.value() < 0) {
      ctx.Fail(Join(p, "value"), r.ok() ? "negative quantity" : r.error().message);
      continue;
    }
    d.capacity[name] = r.value();
  }
}

SliceDevice DecodeDevice(const doc::Node& n, const std::string& path, bool beta1,
                         ObjectContext& ctx) {
  SliceDevice d;
  d.name = Str(n, "name", path, ctx).value_or("");
  if (d.name.empty()) ctx.Fail(Join(path, "name"), "missing");
  const doc::Node body = beta1 ? n["basic"] : n;
  const std::string bp = beta1 ? Join(path, "basic") : path;
  const doc::Node attrs = body["attributes"];
  if (IsMapOrAbsent(attrs, Join(bp, "attributes"), ctx)) {
    for (const auto& e : attrs.Entries()) {
      const std::string name(e.first.Scalar());
      auto a = Attribute(e.second, Join(Join(bp, "attributes"), name), ctx);
      if (a) d.attributes[name] = std::move(*a);
    }
  }
  Capacities(body["capacity"], Join(bp, "capacity"), d, ctx);
  return d;
}

// An allocation a BindRequest carries: its devices, their configuration and the one node its
// selector names.
void BindAllocation(const doc::Node& alloc, const std::string& path,
                    std::vector<AllocatedDevice>& devices, std::vector<DeviceConfig>& config,
                    std::string& node, ObjectContext& ctx) {
  if (!alloc.IsMap()) {
    ctx.Fail(path, "missing");
    return;
  }
  devices = AllocatedDevices(alloc["devices"]["results"], Join(path, "devices.results"), ctx);
  config = DecodeConfigs(alloc["devices"]["config"], Join(path, "devices.config"),
                         ConfigPlace::kAllocation, ctx);
  std::vector<std::string> nodes;
  bool any = true;
  AllocationNodes(alloc["nodeSelector"], nodes, any);
  if (nodes.size() == 1) node = nodes[0];
}

std::vector<ContainerRequestMapping> Mappings(const doc::Node& n, const std::string& path,
                                              ObjectContext& ctx) {
  std::vector<ContainerRequestMapping> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index(path, i);
    ContainerRequestMapping m{Str(n[i], "containerName", p, ctx).value_or(""),
                              Str(n[i], "resourceName", p, ctx).value_or(""),
                              Str(n[i], "requestName", p, ctx).value_or("")};
    if (m.container.empty()) ctx.Fail(Join(p, "containerName"), "missing");
    if (m.request.empty()) ctx.Fail(Join(p, "requestName"), "missing");
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

void DecodeBindRequestAllocations(const doc::Node& spec, BindRequestObject& b, ObjectContext& ctx) {
  const doc::Node claims = spec["resourceClaimAllocations"];
  const std::string cp = "spec.resourceClaimAllocations";
  if (IsSeqOrAbsent(claims, cp, ctx)) {
    for (size_t i = 0; i < claims.size(); ++i) {
      const std::string p = Index(cp, i);
      ClaimAllocation a;
      a.name = Str(claims[i], "name", p, ctx).value_or("");
      if (a.name.empty()) ctx.Fail(Join(p, "name"), "missing");
      BindAllocation(claims[i]["allocation"], Join(p, "allocation"), a.devices, a.config, a.node,
                     ctx);
      b.claim_allocations.push_back(std::move(a));
    }
  }
  const doc::Node ext = spec["extendedResourceClaimAllocation"];
  const std::string ep = "spec.extendedResourceClaimAllocation";
  if (!IsMapOrAbsent(ext, ep, ctx) || !ext.IsDefined() || ext.IsNull()) return;
  ExtendedClaimAllocation e;
  BindAllocation(ext["allocation"], Join(ep, "allocation"), e.devices, e.config, e.node, ctx);
  const doc::Node reqs = ext["deviceRequests"];
  const std::string rp = Join(ep, "deviceRequests");
  if (IsSeqOrAbsent(reqs, rp, ctx)) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      e.requests.push_back(DecodeRequest(reqs[i], Index(rp, i), false, ctx));
    }
  }
  e.mappings = Mappings(ext["containerMappings"], Join(ep, "containerMappings"), ctx);
  b.extended_allocation = std::move(e);
}

void DecodeResourceClaim(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state) {
  ResourceClaimObject c;
  c.meta = DecodeMeta(doc, "ResourceClaim", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!spec.IsMap()) {
    ctx.Fail("spec", "missing");
    return;
  }
  c.requests = DecodeRequests(spec["devices"], "spec.devices", IsBeta1(doc), ctx);
  c.config =
      DecodeConfigs(spec["devices"]["config"], "spec.devices.config", ConfigPlace::kClaim, ctx);
  CheckConfigRequests(c.config, c.requests, "spec.devices.config", ctx);
  ClaimStatus(doc["status"], c, ctx);
  state.dra.claims.push_back(std::move(c));
}

void DecodeResourceClaimTemplate(const doc::Node& doc, const std::string& source,
                                 ObjectContext& ctx, ClusterState& state) {
  ResourceClaimTemplateObject t;
  t.meta = DecodeMeta(doc, "ResourceClaimTemplate", true, source, ctx);
  const doc::Node spec = doc["spec"]["spec"];
  if (!spec.IsMap()) {
    ctx.Fail("spec.spec", "missing");
    return;
  }
  t.requests = DecodeRequests(spec["devices"], "spec.spec.devices", IsBeta1(doc), ctx);
  t.config = DecodeConfigs(spec["devices"]["config"], "spec.spec.devices.config",
                           ConfigPlace::kClaim, ctx);
  CheckConfigRequests(t.config, t.requests, "spec.spec.devices.config", ctx);
  state.dra.templates.push_back(std::move(t));
}

// An extended resource name: <domain>/<name>, the domain not Kubernetes' own (the implicit
// deviceclass.resource.kubernetes.io/ names are every class's already).
void CheckExtendedResourceName(const std::string& name, ObjectContext& ctx) {
  if (name.empty()) return;
  const size_t slash = name.find('/');
  const std::string domain = slash == std::string::npos ? "" : name.substr(0, slash);
  const bool kubernetes =
      domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") || domain == "k8s.io";
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size() ||
      name.find('/', slash + 1) != std::string::npos || kubernetes) {
    ctx.Fail("spec.extendedResourceName",
             "must be an extended resource name <domain>/<name> outside kubernetes.io, got \"" +
                 name + "\"");
  }
}

void DecodeDeviceClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                       ClusterState& state) {
  DeviceClassObject c;
  c.meta = DecodeMeta(doc, "DeviceClass", false, source, ctx);
  c.selectors = CelSelectors(doc["spec"]["selectors"], "spec.selectors", ctx);
  c.extended_resource_name = Str(doc["spec"], "extendedResourceName", "spec", ctx).value_or("");
  CheckExtendedResourceName(c.extended_resource_name, ctx);
  c.config = DecodeConfigs(doc["spec"]["config"], "spec.config", ConfigPlace::kClass, ctx);
  state.dra.classes.push_back(std::move(c));
}

void DecodeResourceSlice(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state) {
  ResourceSliceObject s;
  s.meta = DecodeMeta(doc, "ResourceSlice", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!spec.IsMap()) {
    ctx.Fail("spec", "missing");
    return;
  }
  s.driver = Str(spec, "driver", "spec", ctx).value_or("");
  if (s.driver.empty()) ctx.Fail("spec.driver", "missing");
  s.pool = Str(spec["pool"], "name", "spec.pool", ctx).value_or("");
  if (s.pool.empty()) ctx.Fail("spec.pool.name", "missing");
  s.node_name = Str(spec, "nodeName", "spec", ctx).value_or("");
  s.all_nodes = Bool(spec, "allNodes", "spec", ctx).value_or(false);
  const bool beta1 = IsBeta1(doc);
  const doc::Node devices = spec["devices"];
  if (IsSeqOrAbsent(devices, "spec.devices", ctx)) {
    for (size_t i = 0; i < devices.size(); ++i) {
      s.devices.push_back(DecodeDevice(devices[i], Index("spec.devices", i), beta1, ctx));
    }
  }
  state.dra.slices.push_back(std::move(s));
}

CompactVector<PodClaimRef> PodResourceClaims(const doc::Node& spec, const doc::Node& status,
                                             ObjectContext& ctx) {
  CompactVector<PodClaimRef> out;
  const doc::Node claims = spec["resourceClaims"];
  if (!IsSeqOrAbsent(claims, "spec.resourceClaims", ctx)) return out;
  for (size_t i = 0; i < claims.size(); ++i) {
    const std::string p = Index("spec.resourceClaims", i);
    PodClaimRef r;
    r.name = Str(claims[i], "name", p, ctx).value_or("");
    // Kubernetes 1.26 to 1.30 wrote the reference under `source`.
    const bool old_form = claims[i]["source"].IsMap();
    const doc::Node ref = old_form ? claims[i]["source"] : claims[i];
    const std::string rp = old_form ? Join(p, "source") : p;
    r.claim_name = Str(ref, "resourceClaimName", rp, ctx).value_or("");
    r.template_name = Str(ref, "resourceClaimTemplateName", rp, ctx).value_or("");
    if (r.name.empty()) ctx.Fail(Join(p, "name"), "missing");
    if (r.claim_name.empty() == r.template_name.empty()) {
      ctx.Fail(p, "needs exactly one of resourceClaimName and resourceClaimTemplateName");
    }
    out.push_back(std::move(r));
  }
  const doc::Node statuses = status["resourceClaimStatuses"];
  for (size_t i = 0; statuses.IsSequence() && i < statuses.size(); ++i) {
    const std::string p = Index("status.resourceClaimStatuses", i);
    const std::string name = Str(statuses[i], "name", p, ctx).value_or("");
    const std::string generated = Str(statuses[i], "resourceClaimName", p, ctx).value_or("");
    for (PodClaimRef& r : out) {
      if (r.FromTemplate() && r.name == name) r.claim_name = generated;
    }
  }
  return out;
}

}  // namespace kai::decoding
