#include <algorithm>
#include <iterator>

#include "kai/core/k8s/decode_fields.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

// Storage kinds (model/storage.h) and what a pod asks of them: its claims and host ports.
namespace kai::decoding {
namespace {

// A storage size in bytes. Volumes may be far larger than anything summed over a cluster, so the
// bound is int64's, not kMaxAmount.
std::optional<int64_t> StorageSize(const doc::Node& list, std::string_view path,
                                   ObjectContext& ctx) {
  if (!IsMapOrAbsent(list, path, ctx)) return std::nullopt;
  const doc::Node v = list["storage"];
  if (!v.IsDefined() || v.IsNull()) return std::nullopt;
  const std::string field = Join(path, "storage");
  if (!v.IsScalar()) {
    ctx.Fail(field, "expected a quantity");
    return std::nullopt;
  }
  auto r = ParseQuantity(v.Scalar(), 0);
  if (!r.ok()) {
    ctx.Fail(field, r.error().message);
    return std::nullopt;
  }
  if (*r < 0) {
    ctx.Fail(field, "negative quantity \"" + std::string(v.Scalar()) + "\"");
    return std::nullopt;
  }
  return *r;
}

uint8_t AccessModes(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  uint8_t out = 0;
  const std::vector<std::string> modes = StringList(n, path, ctx);
  for (size_t i = 0; i < modes.size(); ++i) {
    const auto* known = std::find_if(std::begin(kAccessModeNames), std::end(kAccessModeNames),
                                     [&](const auto& m) { return m.second == modes[i]; });
    if (known == std::end(kAccessModeNames)) {
      ctx.Fail(Index(path, i), "unknown access mode \"" + modes[i] + "\"");
      continue;
    }
    out |= known->first;
  }
  return out;
}

bool BlockMode(const doc::Node& spec, std::string_view path, ObjectContext& ctx) {
  const std::string mode = Str(spec, "volumeMode", path, ctx).value_or("Filesystem");
  if (mode != "Filesystem" && mode != "Block") {
    ctx.Fail(Join(path, "volumeMode"), "must be Filesystem or Block, got \"" + mode + "\"");
  }
  return mode == "Block";
}

// allowedTopologies: [{matchLabelExpressions: [{key, values}]}], each expression an `In`.
std::vector<NodeSelectorTerm> AllowedTopologies(const doc::Node& n, ObjectContext& ctx) {
  std::vector<NodeSelectorTerm> out;
  if (!IsSeqOrAbsent(n, "allowedTopologies", ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Join(Index("allowedTopologies", i), "matchLabelExpressions");
    const doc::Node exprs = n[i]["matchLabelExpressions"];
    NodeSelectorTerm t;
    if (!IsSeqOrAbsent(exprs, p, ctx)) continue;
    for (size_t j = 0; j < exprs.size(); ++j) {
      const std::string ep = Index(p, j);
      SelectorRequirement r;
      r.key = Str(exprs[j], "key", ep, ctx).value_or("");
      r.op = "In";
      r.values = StringList(exprs[j]["values"], Join(ep, "values"), ctx);
      if (r.key.empty()) ctx.Fail(Join(ep, "key"), "missing");
      if (r.values.empty()) ctx.Fail(Join(ep, "values"), "missing");
      t.match_expressions.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

void DecodeContainerPorts(const doc::Node& containers, std::string_view path, PodObject& pod,
                          ObjectContext& ctx) {
  if (!containers.IsSequence()) return;
  for (size_t i = 0; i < containers.size(); ++i) {
    const std::string pp = Join(Index(path, i), "ports");
    const doc::Node ports = containers[i]["ports"];
    if (!IsSeqOrAbsent(ports, pp, ctx)) continue;
    for (size_t j = 0; j < ports.size(); ++j) {
      const std::string p = Index(pp, j);
      const std::optional<int64_t> host = Int(ports[j], "hostPort", p, ctx);
      if (!host || *host == 0) continue;
      if (*host < 1 || *host > 65535) {
        ctx.Fail(Join(p, "hostPort"), "must be in 1..65535, got " + std::to_string(*host));
        continue;
      }
      HostPort hp;
      hp.port = static_cast<int32_t>(*host);
      hp.protocol = Str(ports[j], "protocol", p, ctx).value_or("TCP");
      if (hp.protocol != "TCP" && hp.protocol != "UDP" && hp.protocol != "SCTP") {
        ctx.Fail(Join(p, "protocol"),
                 "must be TCP, UDP or SCTP, got \"" + std::string(hp.protocol.view()) + "\"");
      }
      hp.host_ip = Str(ports[j], "hostIP", p, ctx).value_or("");
      if (hp.host_ip == "0.0.0.0" || hp.host_ip == "::") hp.host_ip.clear();
      pod.host_ports.push_back(std::move(hp));
    }
  }
}

}  // namespace

void DecodePersistentVolume(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                            ClusterState& state) {
  PersistentVolumeObject pv;
  pv.meta = DecodeMeta(doc, "PersistentVolume", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) return;
  pv.storage_class = Str(spec, "storageClassName", "spec", ctx).value_or("");
  pv.capacity = StorageSize(spec["capacity"], "spec.capacity", ctx).value_or(0);
  pv.access_modes = AccessModes(spec["accessModes"], "spec.accessModes", ctx);
  pv.block = BlockMode(spec, "spec", ctx);
  const doc::Node na = spec["nodeAffinity"];
  if (IsMapOrAbsent(na, "spec.nodeAffinity", ctx) &&
      IsMapOrAbsent(na["required"], "spec.nodeAffinity.required", ctx)) {
    pv.node_affinity = NodeSelectorTerms(na["required"]["nodeSelectorTerms"],
                                         "spec.nodeAffinity.required.nodeSelectorTerms", ctx);
  }
  const doc::Node ref = spec["claimRef"];
  if (IsMapOrAbsent(ref, "spec.claimRef", ctx)) {
    pv.claim_ns = Str(ref, "namespace", "spec.claimRef", ctx).value_or("");
    pv.claim_name = Str(ref, "name", "spec.claimRef", ctx).value_or("");
    pv.claim_uid = Str(ref, "uid", "spec.claimRef", ctx).value_or("");
  }
  const doc::Node csi = spec["csi"];
  if (IsMapOrAbsent(csi, "spec.csi", ctx)) {
    pv.csi_driver = Str(csi, "driver", "spec.csi", ctx).value_or("");
    pv.volume_handle = Str(csi, "volumeHandle", "spec.csi", ctx).value_or("");
  }
  if (IsMapOrAbsent(doc["status"], "status", ctx)) {
    pv.phase = Str(doc["status"], "phase", "status", ctx).value_or("");
  }
  state.storage.volumes.push_back(std::move(pv));
}

void DecodePersistentVolumeClaim(const doc::Node& doc, const std::string& source,
                                 ObjectContext& ctx, ClusterState& state) {
  PersistentVolumeClaimObject pvc;
  pvc.meta = DecodeMeta(doc, "PersistentVolumeClaim", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) return;
  const doc::Node sc = spec["storageClassName"];
  pvc.class_set = sc.IsDefined() && !sc.IsNull();
  pvc.storage_class = Str(spec, "storageClassName", "spec", ctx).value_or("");
  pvc.volume_name = Str(spec, "volumeName", "spec", ctx).value_or("");
  pvc.access_modes = AccessModes(spec["accessModes"], "spec.accessModes", ctx);
  pvc.block = BlockMode(spec, "spec", ctx);
  if (IsMapOrAbsent(spec["resources"], "spec.resources", ctx)) {
    pvc.request =
        StorageSize(spec["resources"]["requests"], "spec.resources.requests", ctx).value_or(0);
  }
  if (IsMapOrAbsent(doc["status"], "status", ctx)) {
    pvc.phase = Str(doc["status"], "phase", "status", ctx).value_or("Pending");
  }
  if (auto it = pvc.meta.annotations.find(keys::kSelectedNodeAnnotation);
      it != pvc.meta.annotations.end()) {
    pvc.selected_node = it->second;
  }
  state.storage.claims.push_back(std::move(pvc));
}

void DecodeStorageClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                        ClusterState& state) {
  StorageClassObject sc;
  sc.meta = DecodeMeta(doc, "StorageClass", false, source, ctx);
  sc.provisioner = Str(doc, "provisioner", "", ctx).value_or("");
  if (sc.provisioner.empty()) ctx.Fail("provisioner", "missing");
  const std::string mode = Str(doc, "volumeBindingMode", "", ctx).value_or("Immediate");
  if (mode != "Immediate" && mode != "WaitForFirstConsumer") {
    ctx.Fail("volumeBindingMode",
             "must be Immediate or WaitForFirstConsumer, got \"" + mode + "\"");
  }
  sc.wait_for_first_consumer = mode == "WaitForFirstConsumer";
  auto it = sc.meta.annotations.find(keys::kDefaultStorageClassAnnotation);
  sc.is_default = it != sc.meta.annotations.end() && it->second == "true";
  sc.allowed_topologies = AllowedTopologies(doc["allowedTopologies"], ctx);
  state.storage.classes.push_back(std::move(sc));
}

void DecodeCsiNode(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                   ClusterState& state) {
  CsiNodeObject n;
  n.meta = DecodeMeta(doc, "CSINode", false, source, ctx);
  const doc::Node drivers = doc["spec"]["drivers"];
  if (IsMapOrAbsent(doc["spec"], "spec", ctx) && IsSeqOrAbsent(drivers, "spec.drivers", ctx)) {
    for (size_t i = 0; i < drivers.size(); ++i) {
      const std::string p = Index("spec.drivers", i);
      CsiNodeDriver d;
      d.name = Str(drivers[i], "name", p, ctx).value_or("");
      if (d.name.empty()) ctx.Fail(Join(p, "name"), "missing");
      const doc::Node alloc = drivers[i]["allocatable"];
      if (IsMapOrAbsent(alloc, Join(p, "allocatable"), ctx)) {
        if (auto c = Int(alloc, "count", Join(p, "allocatable"), ctx)) {
          if (*c < 0) ctx.Fail(Join(p, "allocatable.count"), "must not be negative");
          d.allocatable = *c;
        }
      }
      n.drivers.push_back(std::move(d));
    }
  }
  state.storage.csi_nodes.push_back(std::move(n));
}

void DecodePodStorage(const doc::Node& spec, PodObject& pod, ObjectContext& ctx) {
  const doc::Node volumes = spec["volumes"];
  if (IsSeqOrAbsent(volumes, "spec.volumes", ctx)) {
    for (size_t i = 0; i < volumes.size(); ++i) {
      const std::string p = Index("spec.volumes", i);
      const doc::Node v = volumes[i];
      if (v["persistentVolumeClaim"].IsDefined() && !v["persistentVolumeClaim"].IsNull()) {
        const std::string claim =
            Str(v["persistentVolumeClaim"], "claimName", Join(p, "persistentVolumeClaim"), ctx)
                .value_or("");
        if (claim.empty()) ctx.Fail(Join(p, "persistentVolumeClaim.claimName"), "missing");
        pod.volume_claims.push_back({claim, false});
      } else if (v["ephemeral"].IsDefined() && !v["ephemeral"].IsNull()) {
        const std::string name = Str(v, "name", p, ctx).value_or("");
        if (name.empty()) ctx.Fail(Join(p, "name"), "missing");
        pod.volume_claims.push_back({pod.meta.name + "-" + name, true});
      }
    }
  }
  DecodeContainerPorts(spec["initContainers"], "spec.initContainers", pod, ctx);
  DecodeContainerPorts(spec["containers"], "spec.containers", pod, ctx);
}

}  // namespace kai::decoding
