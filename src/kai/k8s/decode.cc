#include "kai/k8s/decode.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "kai/k8s/doc.h"

#include "kai/k8s/keys.h"
#include "kai/resource/quantity.h"

namespace kai {
namespace {

// Collects errors for one object; every message names source, object and field.
class ObjectContext {
 public:
  ObjectContext(const std::string& source, std::string ref, std::vector<std::string>& errors)
      : source_(source), ref_(std::move(ref)), errors_(errors) {}
  void Fail(std::string_view field, std::string_view message) {
    errors_.push_back(source_ + ": " + ref_ + ": " + std::string(field) + ": " +
                      std::string(message));
  }
  void SetRef(std::string ref) { ref_ = std::move(ref); }
  size_t ErrorCount() const { return errors_.size(); }

 private:
  const std::string& source_;
  std::string ref_;
  std::vector<std::string>& errors_;
};

std::string Join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  return std::string(a) + "." + std::string(b);
}

// Larger amounts are rejected so that sums over a cluster can never overflow int64.
constexpr int64_t kMaxAmount = int64_t{1} << 50;

std::string Index(std::string_view a, size_t i) {
  return std::string(a) + "[" + std::to_string(i) + "]";
}

// Reads an optional scalar string; reports a non-scalar.
std::optional<std::string> Str(const doc::Node& parent, std::string_view key, std::string_view path,
                               ObjectContext& ctx) {
  const doc::Node n = parent[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) {
    ctx.Fail(Join(path, key), "expected a string");
    return std::nullopt;
  }
  return std::string(n.Scalar());
}

bool IsMapOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  if (!n.IsDefined() || n.IsNull()) return false;
  if (!n.IsMap()) {
    ctx.Fail(path, "expected a mapping");
    return false;
  }
  return true;
}

bool IsSeqOrAbsent(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  if (!n.IsDefined() || n.IsNull()) return false;
  if (!n.IsSequence()) {
    ctx.Fail(path, "expected a list");
    return false;
  }
  return true;
}

std::optional<int64_t> Int(const doc::Node& parent, std::string_view key, std::string_view path,
                           ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  int64_t v = 0;
  const char* b = s->data();
  const char* e = b + s->size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e) {
    ctx.Fail(Join(path, key), "expected an integer, got \"" + *s + "\"");
    return std::nullopt;
  }
  if (v < -(int64_t{1} << 31) || v >= (int64_t{1} << 31)) {
    ctx.Fail(Join(path, key), "integer out of range: " + *s);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Bool(const doc::Node& parent, std::string_view key, std::string_view path,
                         ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  if (*s == "true" || *s == "True") return true;
  if (*s == "false" || *s == "False") return false;
  ctx.Fail(Join(path, key), "expected true or false, got \"" + *s + "\"");
  return std::nullopt;
}

std::optional<UnixSeconds> Time(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  auto t = ParseRfc3339(*s);
  if (!t) ctx.Fail(Join(path, key), "expected an RFC 3339 time, got \"" + *s + "\"");
  return t;
}

std::optional<int64_t> Duration(const doc::Node& parent, std::string_view key,
                                std::string_view path, ObjectContext& ctx) {
  auto s = Str(parent, key, path, ctx);
  if (!s) return std::nullopt;
  auto d = ParseGoDuration(*s);
  if (!d) ctx.Fail(Join(path, key), "expected a duration such as 60s or 5m, got \"" + *s + "\"");
  return d;
}

Labels StringMap(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  Labels out;
  if (!IsMapOrAbsent(n, path, ctx)) return out;
  for (const auto& [k, v] : n.Entries()) {
    const std::string key(k.Scalar());
    if (!v.IsScalar() && !v.IsNull()) {
      ctx.Fail(Join(path, key), "expected a string value");
      continue;
    }
    out[key] = std::string(v.Scalar());
  }
  return out;
}

std::vector<std::string> StringList(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  std::vector<std::string> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      ctx.Fail(Index(path, i), "expected a string");
      continue;
    }
    out.push_back(std::string(n[i].Scalar()));
  }
  return out;
}

// Parses a quantity into kai units for the named resource.
std::optional<int64_t> ResourceAmount(std::string_view name, const std::string& text,
                                      std::string_view path, ObjectContext& ctx) {
  const bool milli = name == "cpu" || name == keys::kGpuResource;
  auto r = ParseQuantity(text, milli ? 3 : 0);
  if (auto* err = std::get_if<QuantityError>(&r)) {
    ctx.Fail(path, err->message);
    return std::nullopt;
  }
  const int64_t v = std::get<int64_t>(r);
  if (v < 0) {
    ctx.Fail(path, "negative quantity \"" + text + "\"");
    return std::nullopt;
  }
  if (v > kMaxAmount) {
    ctx.Fail(path, "quantity too large \"" + text + "\"");
    return std::nullopt;
  }
  return v;
}

void AddResource(Resources& res, std::string_view name, int64_t amount) {
  if (name == "cpu") {
    res.milli_cpu = amount;
  } else if (name == "memory") {
    res.memory = amount;
  } else if (name == keys::kGpuResource) {
    res.milli_gpu = amount;
  } else if (name == "pods") {
    res.pods = amount;
  } else {
    res.SetScalar(InternResource(name), amount);
  }
}

Resources ResourceList(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  Resources res;
  if (!IsMapOrAbsent(n, path, ctx)) return res;
  for (const auto& [k, value] : n.Entries()) {
    const std::string name(k.Scalar());
    const std::string field = Join(path, name);
    if (!value.IsScalar()) {
      ctx.Fail(field, "expected a quantity");
      continue;
    }
    if (auto v = ResourceAmount(name, std::string(value.Scalar()), field, ctx)) {
      AddResource(res, name, *v);
    }
  }
  return res;
}

ObjectMeta DecodeMeta(const doc::Node& doc, const std::string& kind, bool namespaced,
                      const std::string& source, ObjectContext& ctx) {
  ObjectMeta m;
  m.kind = kind;
  m.source = source;
  const doc::Node md = doc["metadata"];
  if (!IsMapOrAbsent(md, "metadata", ctx)) {
    ctx.Fail("metadata.name", "missing");
    return m;
  }
  m.name = Str(md, "name", "metadata", ctx).value_or("");
  if (namespaced) m.ns = Str(md, "namespace", "metadata", ctx).value_or("default");
  ctx.SetRef(m.Ref());
  if (m.name.empty()) ctx.Fail("metadata.name", "missing");
  m.uid = Str(md, "uid", "metadata", ctx).value_or("");
  if (m.uid.empty()) m.uid = namespaced ? m.ns + "/" + m.name : m.name;
  m.labels = StringMap(md["labels"], "metadata.labels", ctx);
  m.annotations = StringMap(md["annotations"], "metadata.annotations", ctx);
  m.creation = Time(md, "creationTimestamp", "metadata", ctx);
  m.deletion = Time(md, "deletionTimestamp", "metadata", ctx);
  return m;
}

std::vector<SelectorRequirement> Requirements(const doc::Node& n, std::string_view path,
                                              ObjectContext& ctx) {
  static const std::set<std::string> kOps = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  std::vector<SelectorRequirement> out;
  if (!IsSeqOrAbsent(n, path, ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index(path, i);
    SelectorRequirement r;
    r.key = Str(n[i], "key", p, ctx).value_or("");
    r.op = Str(n[i], "operator", p, ctx).value_or("");
    r.values = StringList(n[i]["values"], Join(p, "values"), ctx);
    if (r.key.empty()) ctx.Fail(Join(p, "key"), "missing");
    if (!kOps.count(r.op)) ctx.Fail(Join(p, "operator"), "unknown operator \"" + r.op + "\"");
    out.push_back(std::move(r));
  }
  return out;
}

LabelSelector DecodeLabelSelector(const doc::Node& n, std::string_view path, ObjectContext& ctx) {
  LabelSelector s;
  s.matches_nothing = !n.IsDefined() || n.IsNull();
  if (!IsMapOrAbsent(n, path, ctx)) return s;
  s.match_labels = StringMap(n["matchLabels"], Join(path, "matchLabels"), ctx);
  s.match_expressions = Requirements(n["matchExpressions"], Join(path, "matchExpressions"), ctx);
  return s;
}

PodAffinityTerm DecodePodAffinityTerm(const doc::Node& n, const std::string& tp,
                                      ObjectContext& ctx) {
  PodAffinityTerm t;
  t.selector = DecodeLabelSelector(n["labelSelector"], Join(tp, "labelSelector"), ctx);
  t.namespaces = StringList(n["namespaces"], Join(tp, "namespaces"), ctx);
  const doc::Node ns_sel = n["namespaceSelector"];
  if (ns_sel.IsDefined() && !ns_sel.IsNull()) {
    const std::string nsp = Join(tp, "namespaceSelector");
    if (IsMapOrAbsent(ns_sel, nsp, ctx)) {
      // Namespace labels are not part of what kai reads, so only {} can be evaluated.
      if (ns_sel.size() != 0) ctx.Fail(nsp, "only {} (every namespace) is supported");
      t.all_namespaces = true;
    }
  }
  t.topology_key = Str(n, "topologyKey", tp, ctx).value_or("");
  if (t.topology_key.empty()) ctx.Fail(Join(tp, "topologyKey"), "missing");
  return t;
}

std::vector<PodAffinityTerm> PodAffinityTerms(const doc::Node& n, std::string_view path,
                                              ObjectContext& ctx) {
  std::vector<PodAffinityTerm> out;
  const std::string p = Join(path, "requiredDuringSchedulingIgnoredDuringExecution");
  const doc::Node terms = n["requiredDuringSchedulingIgnoredDuringExecution"];
  if (!IsSeqOrAbsent(terms, p, ctx)) return out;
  for (size_t i = 0; i < terms.size(); ++i) {
    out.push_back(DecodePodAffinityTerm(terms[i], Index(p, i), ctx));
  }
  return out;
}

std::vector<WeightedPodAffinityTerm> WeightedPodAffinityTerms(const doc::Node& n,
                                                              std::string_view path,
                                                              ObjectContext& ctx) {
  std::vector<WeightedPodAffinityTerm> out;
  const std::string p = Join(path, "preferredDuringSchedulingIgnoredDuringExecution");
  const doc::Node terms = n["preferredDuringSchedulingIgnoredDuringExecution"];
  if (!IsSeqOrAbsent(terms, p, ctx)) return out;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string tp = Index(p, i);
    WeightedPodAffinityTerm w;
    w.weight = static_cast<int>(Int(terms[i], "weight", tp, ctx).value_or(0));
    if (w.weight < 1 || w.weight > 100) ctx.Fail(Join(tp, "weight"), "must be in 1..100");
    const doc::Node term = terms[i]["podAffinityTerm"];
    const std::string termp = Join(tp, "podAffinityTerm");
    if (!term.IsDefined() || !IsMapOrAbsent(term, termp, ctx)) {
      ctx.Fail(termp, "missing");
      continue;
    }
    w.term = DecodePodAffinityTerm(term, termp, ctx);
    out.push_back(std::move(w));
  }
  return out;
}

void DecodeAffinity(const doc::Node& spec, PodObject& pod, ObjectContext& ctx) {
  const doc::Node aff = spec["affinity"];
  if (!IsMapOrAbsent(aff, "spec.affinity", ctx)) return;
  const doc::Node na = aff["nodeAffinity"];
  if (IsMapOrAbsent(na, "spec.affinity.nodeAffinity", ctx)) {
    const std::string p =
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    const doc::Node req = na["requiredDuringSchedulingIgnoredDuringExecution"];
    if (IsMapOrAbsent(req, p, ctx)) {
      const doc::Node terms = req["nodeSelectorTerms"];
      const std::string tp = Join(p, "nodeSelectorTerms");
      if (IsSeqOrAbsent(terms, tp, ctx)) {
        for (size_t i = 0; i < terms.size(); ++i) {
          NodeSelectorTerm t;
          t.match_expressions = Requirements(terms[i]["matchExpressions"],
                                             Join(Index(tp, i), "matchExpressions"), ctx);
          t.match_fields =
              Requirements(terms[i]["matchFields"], Join(Index(tp, i), "matchFields"), ctx);
          pod.required_node_affinity.push_back(std::move(t));
        }
      }
    }
  }
  const doc::Node pa = aff["podAffinity"];
  if (IsMapOrAbsent(pa, "spec.affinity.podAffinity", ctx)) {
    pod.required_pod_affinity = PodAffinityTerms(pa, "spec.affinity.podAffinity", ctx);
    pod.preferred_pod_affinity = WeightedPodAffinityTerms(pa, "spec.affinity.podAffinity", ctx);
  }
  const doc::Node paa = aff["podAntiAffinity"];
  if (IsMapOrAbsent(paa, "spec.affinity.podAntiAffinity", ctx)) {
    pod.required_pod_anti_affinity = PodAffinityTerms(paa, "spec.affinity.podAntiAffinity", ctx);
    pod.preferred_pod_anti_affinity =
        WeightedPodAffinityTerms(paa, "spec.affinity.podAntiAffinity", ctx);
  }
}

// A container's effective request: requests, defaulted per resource from limits (Kubernetes).
Resources ContainerRequest(const doc::Node& c, std::string_view path, ObjectContext& ctx) {
  const doc::Node res = c["resources"];
  if (!IsMapOrAbsent(res, Join(path, "resources"), ctx)) return {};
  Resources requests = ResourceList(res["requests"], Join(path, "resources.requests"), ctx);
  const Resources limits = ResourceList(res["limits"], Join(path, "resources.limits"), ctx);
  const doc::Node req_node = res["requests"];
  auto has_request = [&](std::string_view name) {
    return req_node.IsDefined() && req_node.IsMap() && req_node[std::string(name)].IsDefined();
  };
  if (!has_request("cpu") && limits.milli_cpu) requests.milli_cpu = limits.milli_cpu;
  if (!has_request("memory") && limits.memory) requests.memory = limits.memory;
  if (!has_request(keys::kGpuResource) && limits.milli_gpu) requests.milli_gpu = limits.milli_gpu;
  for (const auto& [id, amount] : limits.scalars) {
    if (!has_request(ResourceName(id))) requests.SetScalar(id, amount);
  }
  return requests;
}

// Kubernetes' effective pod request: max(sum of app containers + sidecars, each init container's
// peak) + overhead, plus one `pods` slot.
Resources PodRequest(const doc::Node& spec, ObjectContext& ctx) {
  Resources app;
  const doc::Node containers = spec["containers"];
  if (!containers.IsDefined() || !containers.IsSequence() || containers.size() == 0) {
    ctx.Fail("spec.containers", "missing or empty");
  } else {
    for (size_t i = 0; i < containers.size(); ++i) {
      app += ContainerRequest(containers[i], Index("spec.containers", i), ctx);
    }
  }
  Resources sidecars, init_peak;
  const doc::Node inits = spec["initContainers"];
  if (IsSeqOrAbsent(inits, "spec.initContainers", ctx)) {
    for (size_t i = 0; i < inits.size(); ++i) {
      const std::string p = Index("spec.initContainers", i);
      const Resources r = ContainerRequest(inits[i], p, ctx);
      if (Str(inits[i], "restartPolicy", p, ctx).value_or("") == "Always") {
        sidecars += r;
        init_peak = Max(init_peak, sidecars);
      } else {
        init_peak = Max(init_peak, r + sidecars);
      }
    }
  }
  Resources total = Max(app + sidecars, init_peak);
  total += ResourceList(spec["overhead"], "spec.overhead", ctx);
  total.pods = 1;
  return total;
}

void DecodeGpuSharing(PodObject& pod, ObjectContext& ctx) {
  const auto& ann = pod.meta.annotations;
  const std::string base = "metadata.annotations.";
  if (auto it = ann.find(keys::kGpuFraction); it != ann.end()) {
    auto r = ParseQuantity(it->second, 3);
    const auto* v = std::get_if<int64_t>(&r);
    if (!v || *v <= 0 || *v >= kMilliPerUnit) {
      ctx.Fail(base + std::string(keys::kGpuFraction),
               "must be a number strictly between 0 and 1, got \"" + it->second + "\"");
    } else {
      pod.gpu_sharing.fraction_milli = *v;
    }
  }
  if (auto it = ann.find(keys::kGpuMemory); it != ann.end()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || p != it->second.data() + it->second.size() || v <= 0) {
      ctx.Fail(base + std::string(keys::kGpuMemory),
               "must be a positive integer (MiB), got \"" + it->second + "\"");
    } else {
      pod.gpu_sharing.memory_mib = v;
    }
  }
  if (auto it = ann.find(keys::kGpuFractionNumDevices); it != ann.end()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || p != it->second.data() + it->second.size() || v <= 0) {
      ctx.Fail(base + std::string(keys::kGpuFractionNumDevices),
               "must be a positive integer, got \"" + it->second + "\"");
    } else {
      pod.gpu_sharing.num_devices = v;
    }
  }
  if (pod.gpu_sharing.IsShared() && pod.request.milli_gpu > 0) {
    ctx.Fail("spec.containers.resources",
             "a pod asking for a GPU fraction or GPU memory must not "
             "also request nvidia.com/gpu");
  }
}

void DecodeGpuGroups(PodObject& pod) {
  for (const auto& [k, v] : pod.meta.labels) {
    if (k == keys::kGpuGroupLabel) {
      std::vector<std::string>& groups = pod.gpu_groups.Mutable();
      groups.insert(groups.begin(), v);
    } else if (k.rfind(std::string(keys::kGpuGroupLabel) + "/", 0) == 0) {
      pod.gpu_groups.push_back(v);
    }
  }
}

std::vector<Toleration> Tolerations(const doc::Node& n, ObjectContext& ctx) {
  std::vector<Toleration> out;
  if (!IsSeqOrAbsent(n, "spec.tolerations", ctx)) return out;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = Index("spec.tolerations", i);
    Toleration t;
    t.key = Str(n[i], "key", p, ctx).value_or("");
    t.op = Str(n[i], "operator", p, ctx).value_or("Equal");
    t.value = Str(n[i], "value", p, ctx).value_or("");
    t.effect = Str(n[i], "effect", p, ctx).value_or("");
    if (t.op != "Equal" && t.op != "Exists") {
      ctx.Fail(Join(p, "operator"), "must be Equal or Exists, got \"" + t.op + "\"");
    }
    out.push_back(std::move(t));
  }
  return out;
}

void DecodePod(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
               ClusterState& state) {
  PodObject pod;
  pod.meta = DecodeMeta(doc, "Pod", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) {
    ctx.Fail("spec", "missing");
    return;
  }
  pod.scheduler_name = Str(spec, "schedulerName", "spec", ctx).value_or("default-scheduler");
  pod.node_name = Str(spec, "nodeName", "spec", ctx).value_or("");
  pod.priority_class_name = Str(spec, "priorityClassName", "spec", ctx).value_or("");
  if (auto p = Int(spec, "priority", "spec", ctx)) pod.priority = static_cast<int>(*p);
  pod.node_selector = StringMap(spec["nodeSelector"], "spec.nodeSelector", ctx);
  pod.tolerations = Tolerations(spec["tolerations"], ctx);
  DecodeAffinity(spec, pod, ctx);
  const doc::Node gates = spec["schedulingGates"];
  pod.scheduling_gated = gates.IsDefined() && gates.IsSequence() && gates.size() > 0;
  pod.request = PodRequest(spec, ctx);
  const doc::Node status = doc["status"];
  if (IsMapOrAbsent(status, "status", ctx)) {
    pod.phase = Str(status, "phase", "status", ctx).value_or("Pending");
    pod.nominated_node = Str(status, "nominatedNodeName", "status", ctx).value_or("");
  }
  static const std::set<std::string> kPhases = {"Pending", "Running", "Succeeded", "Failed",
                                                "Unknown"};
  if (!kPhases.count(pod.phase)) ctx.Fail("status.phase", "unknown phase \"" + pod.phase + "\"");
  if (auto it = pod.meta.annotations.find(keys::kPodGroupAnnotation);
      it != pod.meta.annotations.end()) {
    pod.pod_group = it->second;
  }
  if (auto it = pod.meta.labels.find(keys::kSubGroupLabel); it != pod.meta.labels.end()) {
    pod.sub_group = it->second;
  }
  DecodeGpuSharing(pod, ctx);
  DecodeGpuGroups(pod);
  state.pods.push_back(std::move(pod));
}

void DecodeNodeConditions(const doc::Node& conds, NodeObject& node, ObjectContext& ctx) {
  if (!IsSeqOrAbsent(conds, "status.conditions", ctx)) return;
  for (size_t i = 0; i < conds.size(); ++i) {
    const std::string p = Index("status.conditions", i);
    const std::string type = Str(conds[i], "type", p, ctx).value_or("");
    const std::string st = Str(conds[i], "status", p, ctx).value_or("");
    if (type == "Ready" && st != "True") {
      node.ready = false;
      node.bad_conditions.push_back("NotReady");
    } else if (type != "Ready" && st == "True") {
      node.bad_conditions.push_back(type);
    }
  }
}

void DecodeNode(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                ClusterState& state) {
  NodeObject node;
  node.meta = DecodeMeta(doc, "Node", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    node.unschedulable = Bool(spec, "unschedulable", "spec", ctx).value_or(false);
    const doc::Node taints = spec["taints"];
    if (IsSeqOrAbsent(taints, "spec.taints", ctx)) {
      for (size_t i = 0; i < taints.size(); ++i) {
        const std::string p = Index("spec.taints", i);
        Taint t{Str(taints[i], "key", p, ctx).value_or(""),
                Str(taints[i], "value", p, ctx).value_or(""),
                Str(taints[i], "effect", p, ctx).value_or("")};
        if (t.key.empty()) ctx.Fail(Join(p, "key"), "missing");
        node.taints.push_back(std::move(t));
      }
    }
  }
  const doc::Node status = doc["status"];
  if (IsMapOrAbsent(status, "status", ctx)) {
    node.capacity = ResourceList(status["capacity"], "status.capacity", ctx);
    const doc::Node alloc = status["allocatable"];
    node.allocatable =
        alloc.IsDefined() ? ResourceList(alloc, "status.allocatable", ctx) : node.capacity;
    DecodeNodeConditions(status["conditions"], node, ctx);
  }
  state.nodes.push_back(std::move(node));
}

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

// Queue amounts: gpu in devices (-> milli-GPU), cpu in millicores, memory in MB (-> bytes).
std::optional<int64_t> QueueAmount(const doc::Node& n, std::string_view key, int scale,
                                   std::string_view path, ObjectContext& ctx) {
  auto s = Str(n, key, path, ctx);
  if (!s) return std::nullopt;
  auto r = ParseQuantity(*s, 0);
  if (const auto* v = std::get_if<int64_t>(&r);
      v && *v == -1 && s->find('.') == std::string::npos) {
    return -1;
  }
  r = ParseQuantity(*s, scale);
  if (auto* err = std::get_if<QuantityError>(&r)) {
    ctx.Fail(Join(path, key), err->message);
    return std::nullopt;
  }
  const int64_t v = std::get<int64_t>(r);
  if (v < 0) {
    ctx.Fail(Join(path, key), "must be -1 (unlimited) or a non-negative number, got " + *s);
    return std::nullopt;
  }
  if (v > kMaxAmount) {
    ctx.Fail(Join(path, key), "too large: " + *s);
    return std::nullopt;
  }
  return v;
}

QueueResource DecodeQueueResource(const doc::Node& n, std::string_view name, int scale,
                                  ObjectContext& ctx) {
  QueueResource q;
  const std::string path = "spec.resources." + std::string(name);
  if (!IsMapOrAbsent(n, path, ctx)) return q;
  q.quota = QueueAmount(n, "quota", scale, path, ctx).value_or(0);
  q.limit = QueueAmount(n, "limit", scale, path, ctx).value_or(0);
  auto w = QueueAmount(n, "overQuotaWeight", 3, path, ctx).value_or(0);
  q.weight_milli = w < 0 ? -kMilliPerUnit : w;
  return q;
}

void DecodeQueue(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state) {
  QueueObject q;
  q.meta = DecodeMeta(doc, "Queue", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    q.parent = Str(spec, "parentQueue", "spec", ctx).value_or("");
    if (auto p = Int(spec, "priority", "spec", ctx)) q.priority = static_cast<int>(*p);
    q.preempt_min_runtime = Duration(spec, "preemptMinRuntime", "spec", ctx);
    q.reclaim_min_runtime = Duration(spec, "reclaimMinRuntime", "spec", ctx);
    const doc::Node res = spec["resources"];
    if (IsMapOrAbsent(res, "spec.resources", ctx)) {
      q.has_resources = true;
      q.gpu = DecodeQueueResource(res["gpu"], "gpu", 3, ctx);
      q.cpu = DecodeQueueResource(res["cpu"], "cpu", 0, ctx);
      q.memory = DecodeQueueResource(res["memory"], "memory", 6, ctx);
    }
  }
  state.queues.push_back(std::move(q));
}

void DecodePriorityClass(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                         ClusterState& state) {
  PriorityClassObject pc;
  pc.meta = DecodeMeta(doc, "PriorityClass", false, source, ctx);
  auto v = Int(doc, "value", "", ctx);
  if (!v) ctx.Fail("value", "missing");
  pc.value = static_cast<int>(v.value_or(0));
  pc.global_default = Bool(doc, "globalDefault", "", ctx).value_or(false);
  state.priority_classes.push_back(std::move(pc));
}

void DecodeTopology(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                    ClusterState& state) {
  TopologyObject t;
  t.meta = DecodeMeta(doc, "Topology", false, source, ctx);
  const doc::Node levels = doc["spec"]["levels"];
  if (IsSeqOrAbsent(levels, "spec.levels", ctx)) {
    for (size_t i = 0; i < levels.size(); ++i) {
      const std::string p = Index("spec.levels", i);
      TopologyLevel l{Str(levels[i], "nodeLabel", p, ctx).value_or(""),
                      Str(levels[i], "alias", p, ctx).value_or("")};
      if (l.node_label.empty()) ctx.Fail(Join(p, "nodeLabel"), "missing");
      t.levels.push_back(std::move(l));
    }
  }
  if (t.levels.empty()) ctx.Fail("spec.levels", "a Topology needs at least one level");
  state.topologies.push_back(std::move(t));
}

void DecodeBindRequest(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                       ClusterState& state) {
  BindRequestObject b;
  b.meta = DecodeMeta(doc, "BindRequest", true, source, ctx);
  const doc::Node spec = doc["spec"];
  if (!IsMapOrAbsent(spec, "spec", ctx)) {
    ctx.Fail("spec", "missing");
    return;
  }
  b.pod_name = Str(spec, "podName", "spec", ctx).value_or("");
  b.selected_node = Str(spec, "selectedNode", "spec", ctx).value_or("");
  b.received_resource_type = Str(spec, "receivedResourceType", "spec", ctx).value_or("");
  b.selected_gpu_groups = StringList(spec["selectedGPUGroups"], "spec.selectedGPUGroups", ctx);
  if (b.pod_name.empty()) ctx.Fail("spec.podName", "missing");
  if (b.selected_node.empty()) ctx.Fail("spec.selectedNode", "missing");
  const doc::Node status = doc["status"];
  if (auto v = Int(spec, "backoffLimit", "spec", ctx)) b.backoff_limit = static_cast<int>(*v);
  if (IsMapOrAbsent(status, "status", ctx)) {
    b.phase = Str(status, "phase", "status", ctx).value_or("");
    b.failed_attempts = static_cast<int>(Int(status, "failedAttempts", "status", ctx).value_or(0));
  }
  state.bind_requests.push_back(std::move(b));
}

void DecodeShard(const doc::Node& doc, const std::string& source, ObjectContext& ctx,
                 ClusterState& state) {
  ShardObject s;
  s.meta = DecodeMeta(doc, "SchedulingShard", false, source, ctx);
  const doc::Node spec = doc["spec"];
  if (IsMapOrAbsent(spec, "spec", ctx)) {
    const doc::Node actions = spec["actions"];
    if (IsMapOrAbsent(actions, "spec.actions", ctx)) {
      for (const auto& [key, value] : actions.Entries()) {
        const std::string name(key.Scalar());
        const std::string p = "spec.actions." + name;
        ActionSetting a{name, Bool(value, "enabled", p, ctx), std::nullopt};
        if (auto pr = Int(value, "priority", p, ctx)) a.priority = static_cast<int>(*pr);
        s.actions.push_back(std::move(a));
      }
    }
    const doc::Node plugins = spec["plugins"];
    if (IsMapOrAbsent(plugins, "spec.plugins", ctx)) {
      for (const auto& [key, value] : plugins.Entries()) {
        PluginSetting ps;
        ps.name = std::string(key.Scalar());
        const std::string p = "spec.plugins." + ps.name;
        ps.enabled = Bool(value, "enabled", p, ctx);
        if (auto pr = Int(value, "priority", p, ctx)) ps.priority = static_cast<int>(*pr);
        const doc::Node args = value["arguments"];
        if (args.IsDefined() && !args.IsNull()) {
          ps.has_arguments = true;
          for (const auto& [k, v] : StringMap(args, p + ".arguments", ctx)) ps.arguments[k] = v;
        }
        s.plugins.push_back(std::move(ps));
      }
    }
    const doc::Node placement = spec["placementStrategy"];
    if (IsMapOrAbsent(placement, "spec.placementStrategy", ctx)) {
      s.placement_gpu = Str(placement, "gpu", "spec.placementStrategy", ctx).value_or("");
      s.placement_cpu = Str(placement, "cpu", "spec.placementStrategy", ctx).value_or("");
    }
    s.partition_label_value = Str(spec, "partitionLabelValue", "spec", ctx).value_or("");
    for (const auto& [k, v] : StringMap(spec["args"], "spec.args", ctx)) s.args[k] = v;
  }
  state.shard = std::move(s);
}

using DecodeFn = void (*)(const doc::Node&, const std::string&, ObjectContext&, ClusterState&);

struct KindDecoder {
  std::string_view api_version;
  std::string_view kind;
  DecodeFn fn;
};

constexpr KindDecoder kDecoders[] = {
    {"v1", "Node", DecodeNode},
    {"v1", "Pod", DecodePod},
    {"scheduling.run.ai/v2", "Queue", DecodeQueue},
    {"scheduling.run.ai/v2alpha2", "PodGroup", DecodePodGroup},
    {"scheduling.k8s.io/v1", "PriorityClass", DecodePriorityClass},
    {"kai.scheduler/v1alpha1", "Topology", DecodeTopology},
    {"kai.scheduler/v1", "SchedulingShard", DecodeShard},
    {"scheduling.run.ai/v1alpha2", "BindRequest", DecodeBindRequest},
};

void DecodeKind(const doc::Node& doc, std::string_view api, std::string_view kind,
                const std::string& source, ObjectContext& ctx, ClusterState& state) {
  for (const KindDecoder& d : kDecoders) {
    if (d.kind != kind) continue;
    if (d.api_version != api) {
      ctx.Fail("apiVersion", "unsupported apiVersion \"" + std::string(api) + "\" for kind " +
                                 std::string(kind) + " (kai reads " + std::string(d.api_version) +
                                 ")");
      return;
    }
    d.fn(doc, source, ctx, state);
    return;
  }
  state.warnings.push_back(source + ": ignoring object of kind " + std::string(api) + "/" +
                           std::string(kind));
}

void DecodeDocument(const doc::Node& doc, const std::string& source, size_t index,
                    ClusterState& state, std::vector<std::string>& errors, bool in_list = false) {
  if (!doc.IsDefined() || doc.IsNull()) return;
  ObjectContext ctx(source, "document " + std::to_string(index + 1), errors);
  if (!doc.IsMap()) {
    ctx.Fail("(root)", "expected a Kubernetes object (a mapping)");
    return;
  }
  const std::string api = Str(doc, "apiVersion", "", ctx).value_or("");
  const std::string kind = Str(doc, "kind", "", ctx).value_or("");
  if (kind.empty()) {
    ctx.Fail("kind", "missing");
    return;
  }
  if (kind == "List" || kind.ends_with("List")) {
    if (in_list) {
      ctx.Fail("kind", "a List inside a List is not supported");
      return;
    }
    const doc::Node items = doc["items"];
    if (IsSeqOrAbsent(items, "items", ctx)) {
      // The API server's typed lists (PodList, ...) leave kind and apiVersion out of the items.
      const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
      for (size_t i = 0; i < items.size(); ++i) {
        if (!item_kind.empty() && items[i].IsMap() && !items[i]["kind"].IsDefined()) {
          ObjectContext item_ctx(source, "document " + std::to_string(i + 1), errors);
          DecodeKind(items[i], api, item_kind, source, item_ctx, state);
        } else {
          DecodeDocument(items[i], source, i, state, errors, true);
        }
      }
    }
    return;
  }
  DecodeKind(doc, api, kind, source, ctx, state);
}

}  // namespace

std::string ObjectMeta::Ref() const {
  return ns.empty() ? kind + " " + name : kind + " " + ns + "/" + name;
}

namespace {

// Every top-level value of a parsed stream, as one document each.
std::vector<std::string> DecodeParsed(const Result<doc::Document>& parsed,
                                      const std::string& source, ClusterState& state) {
  std::vector<std::string> errors;
  if (!parsed.ok()) {
    errors.push_back(source + ": " + parsed.error().message);
    return errors;
  }
  const std::vector<doc::Node> docs = parsed->Roots();
  for (size_t i = 0; i < docs.size(); ++i) DecodeDocument(docs[i], source, i, state, errors);
  return errors;
}

}  // namespace

std::vector<std::string> DecodeManifestText(std::string_view text, const std::string& source,
                                            ClusterState& state) {
  return DecodeParsed(doc::ParseYaml(text), source, state);
}

std::vector<std::string> DecodeJsonText(std::string_view text, const std::string& source,
                                        ClusterState& state) {
  return DecodeParsed(doc::ParseJson(text), source, state);
}

std::vector<std::string> DecodeObject(const doc::Node& object, std::string_view api_version,
                                      std::string_view kind, const std::string& source,
                                      ClusterState& state) {
  std::vector<std::string> errors;
  ObjectContext ctx(source, std::string(kind), errors);
  if (!object.IsMap()) {
    ctx.Fail("(root)", "expected a Kubernetes object (a mapping)");
    return errors;
  }
  DecodeKind(object, api_version, kind, source, ctx, state);
  return errors;
}

Result<ClusterState> CheckDecoded(ClusterState state, std::vector<std::string> errors) {
  if (errors.empty()) errors = ValidateCluster(state);
  if (errors.empty()) {
    for (auto& w : QuotaWarnings(state)) state.warnings.push_back(std::move(w));
  }
  if (!errors.empty()) {
    std::string msg;
    for (const auto& e : errors) msg += (msg.empty() ? "" : "\n") + e;
    return Error{msg};
  }
  return state;
}

}  // namespace kai
