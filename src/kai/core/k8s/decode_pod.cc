#include "kai/core/k8s/decode_fields.h"

#include <algorithm>
#include <map>
#include <set>

#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/nvfractions.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/resource/quantity.h"

namespace kai::decoding {

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

std::vector<NodeSelectorTerm> NodeSelectorTerms(const doc::Node& terms, std::string_view path,
                                                ObjectContext& ctx) {
  std::vector<NodeSelectorTerm> out;
  if (!IsSeqOrAbsent(terms, path, ctx)) return out;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string p = Index(path, i);
    NodeSelectorTerm t;
    t.match_expressions =
        Requirements(terms[i]["matchExpressions"], Join(p, "matchExpressions"), ctx);
    t.match_fields = Requirements(terms[i]["matchFields"], Join(p, "matchFields"), ctx);
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

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
        for (NodeSelectorTerm& t : NodeSelectorTerms(terms, tp, ctx)) {
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

}  // namespace

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

namespace {

// What a running container reports under in-place resize (KEP-1287): the resources the kubelet
// admitted (allocatedResources) and those it applied (resources.requests).
struct StatusResources {
  Resources allocated, actual;
};
using ContainerStatuses = std::map<std::string, StatusResources, std::less<>>;

// status.containerStatuses or status.initContainerStatuses, by container name: the entries that
// report resources.
void ReadContainerStatuses(const doc::Node& list, const std::string& path, ContainerStatuses& out,
                           ObjectContext& ctx) {
  if (!IsSeqOrAbsent(list, path, ctx)) return;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = Index(path, i);
    const doc::Node alloc = list[i]["allocatedResources"];
    const doc::Node res = list[i]["resources"];
    if (!alloc.IsDefined() && !res.IsDefined()) continue;
    StatusResources r;
    r.allocated = ResourceList(alloc, Join(p, "allocatedResources"), ctx);
    if (IsMapOrAbsent(res, Join(p, "resources"), ctx)) {
      r.actual = ResourceList(res["requests"], Join(p, "resources.requests"), ctx);
    }
    out[Str(list[i], "name", p, ctx).value_or("")] = r;
  }
}

// A resize the kubelet cannot admit: condition PodResizePending with reason Infeasible (Kubernetes
// 1.33+), or status.resize Infeasible (1.27-1.32).
bool ResizeInfeasible(const doc::Node& status) {
  if (!status.IsDefined() || !status.IsMap()) return false;
  const doc::Node legacy = status["resize"];
  if (legacy.IsDefined() && legacy.IsScalar() && legacy.Scalar() == "Infeasible") return true;
  const doc::Node conds = status["conditions"];
  if (!conds.IsDefined() || !conds.IsSequence()) return false;
  for (size_t i = 0; i < conds.size(); ++i) {
    const doc::Node type = conds[i]["type"], reason = conds[i]["reason"];
    if (type.IsDefined() && type.IsScalar() && type.Scalar() == "PodResizePending" &&
        reason.IsDefined() && reason.IsScalar() && reason.Scalar() == "Infeasible") {
      return true;
    }
  }
  return false;
}

struct ResizeView {
  ContainerStatuses statuses;
  bool infeasible = false;
};

ResizeView ReadResize(const doc::Node& status, ObjectContext& ctx) {
  ResizeView v;
  if (!status.IsDefined() || !status.IsMap()) return v;
  ReadContainerStatuses(status["containerStatuses"], "status.containerStatuses", v.statuses, ctx);
  ReadContainerStatuses(status["initContainerStatuses"], "status.initContainerStatuses", v.statuses,
                        ctx);
  v.infeasible = ResizeInfeasible(status);
  return v;
}

// A container's request as kube-scheduler counts it under in-place resize: the largest of the spec,
// the admitted and the applied requests while a resize may still happen; the admitted and applied
// ones alone once it is infeasible. Only CPU and memory can be resized: the rest is the spec's.
Resources ResizedRequest(Resources spec_request, const doc::Node& c, const ResizeView& resize) {
  if (resize.statuses.empty()) return spec_request;
  const doc::Node name = c["name"];
  if (!name.IsDefined() || !name.IsScalar()) return spec_request;
  auto it = resize.statuses.find(name.Scalar());
  if (it == resize.statuses.end()) return spec_request;
  const StatusResources& st = it->second;
  auto pick = [&](int64_t spec, int64_t allocated, int64_t actual) {
    const int64_t reported = std::max(allocated, actual);
    return resize.infeasible ? reported : std::max(spec, reported);
  };
  spec_request.milli_cpu =
      pick(spec_request.milli_cpu, st.allocated.milli_cpu, st.actual.milli_cpu);
  spec_request.memory = pick(spec_request.memory, st.allocated.memory, st.actual.memory);
  return spec_request;
}

// Kubernetes' effective pod request: max(sum of app containers + sidecars, each init container's
// peak) + overhead, plus one `pods` slot; running containers as resized (ResizedRequest).
Resources PodRequest(const doc::Node& spec, const ResizeView& resize, ObjectContext& ctx) {
  Resources app;
  const doc::Node containers = spec["containers"];
  if (!containers.IsDefined() || !containers.IsSequence() || containers.size() == 0) {
    ctx.Fail("spec.containers", "missing or empty");
  } else {
    for (size_t i = 0; i < containers.size(); ++i) {
      app += ResizedRequest(ContainerRequest(containers[i], Index("spec.containers", i), ctx),
                            containers[i], resize);
    }
  }
  Resources sidecars, init_peak;
  const doc::Node inits = spec["initContainers"];
  if (IsSeqOrAbsent(inits, "spec.initContainers", ctx)) {
    for (size_t i = 0; i < inits.size(); ++i) {
      const std::string p = Index("spec.initContainers", i);
      const Resources r = ContainerRequest(inits[i], p, ctx);
      if (Str(inits[i], "restartPolicy", p, ctx).value_or("") == "Always") {
        sidecars += ResizedRequest(r, inits[i], resize);
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

// The names a container's resources.requests will hold once the API server defaults them from
// the limits, sorted: the position of an extended resource among them names its device request.
std::vector<std::string> RequestNames(const doc::Node& res) {
  std::set<std::string> names;
  for (const char* part : {"requests", "limits"}) {
    const doc::Node m = res[part];
    if (!m.IsMap()) continue;
    for (const doc::Node::Entry& e : m.Entries()) names.insert(std::string(e.first.Scalar()));
  }
  return {names.begin(), names.end()};
}

// A whole count of an extended resource in a container's request (nvidia.com/gpu is kept in
// milli-GPU); 0 when it is not a whole positive number.
int64_t WholeCount(const Resources& r, const std::string& name) {
  if (name == keys::kGpuResource)
    return r.milli_gpu % kMilliPerUnit ? 0 : r.milli_gpu / kMilliPerUnit;
  return std::max<int64_t>(r.Scalar(InternResource(name)), 0);
}

// Reads a container already checked by PodRequest: its errors are reported once, there.
void AddExtendedRequests(const doc::Node& c, std::string_view path, int32_t index, bool short_lived,
                         PodObject& pod) {
  const doc::Node res = c["resources"];
  if (!res.IsMap()) return;
  const std::vector<std::string> names = RequestNames(res);
  std::vector<std::string> ignored;
  const std::string no_source;  // ObjectContext keeps a reference to it
  ObjectContext quiet(no_source, "", ignored);
  Resources request;
  bool computed = false;
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].find('/') == std::string::npos) continue;
    if (!computed) {
      request = ContainerRequest(c, path, quiet);
      computed = true;
    }
    const int64_t count = WholeCount(request, names[k]);
    if (count <= 0) continue;
    pod.extended_requests.push_back({Str(c, "name", path, quiet).value_or(""), names[k], count,
                                     index, static_cast<int32_t>(k), short_lived});
  }
}

// The extended resources of every container, init containers first (KEP-5004's container order).
void DecodeExtendedRequests(const doc::Node& spec, PodObject& pod) {
  int32_t index = 0;
  const doc::Node inits = spec["initContainers"];
  for (size_t i = 0; inits.IsSequence() && i < inits.size(); ++i, ++index) {
    const doc::Node restart = inits[i]["restartPolicy"];
    const bool sidecar = restart.IsScalar() && restart.Scalar() == "Always";
    AddExtendedRequests(inits[i], Index("spec.initContainers", i), index, !sidecar, pod);
  }
  const doc::Node containers = spec["containers"];
  for (size_t i = 0; containers.IsSequence() && i < containers.size(); ++i, ++index) {
    AddExtendedRequests(containers[i], Index("spec.containers", i), index, false, pod);
  }
}

// The number of a GPU-sharing annotation, in its units (the gpu-fraction in milli-GPU, the others
// whole); nullopt when it is not one.
using AnnotationParser = std::optional<int64_t> (*)(std::string_view text);

std::optional<int64_t> MilliUnits(std::string_view text) {
  const Result<int64_t> r = ParseQuantity(text, 3);
  return r.ok() ? std::optional<int64_t>(r.value()) : std::nullopt;
}

// A GPU-sharing annotation's value when the pod has it: parsed, positive and below `below` (when
// given), else an error naming the annotation ("must be <expected>, got ...") and nullopt.
std::optional<int64_t> SharingAnnotation(const PodObject& pod, std::string_view key,
                                         AnnotationParser parse, std::optional<int64_t> below,
                                         std::string_view expected, ObjectContext& ctx) {
  const auto it = pod.meta.annotations.find(key);
  if (it == pod.meta.annotations.end()) return std::nullopt;
  const std::optional<int64_t> v = parse(it->second);
  if (!v || *v <= 0 || (below && *v >= *below)) {
    ctx.Fail("metadata.annotations." + std::string(key),
             "must be " + std::string(expected) + ", got \"" + it->second + "\"");
    return std::nullopt;
  }
  return v;
}

void DecodeGpuSharing(PodObject& pod, ObjectContext& ctx) {
  if (auto v = SharingAnnotation(pod, keys::kGpuFraction, MilliUnits, kMilliPerUnit,
                                 "a number strictly between 0 and 1", ctx)) {
    pod.gpu_sharing.fraction_milli = *v;
  }
  if (auto v = SharingAnnotation(pod, keys::kGpuMemory, ParseWholeInteger, std::nullopt,
                                 "a positive integer (MiB)", ctx)) {
    pod.gpu_sharing.memory_mib = *v;
  }
  if (auto v = SharingAnnotation(pod, keys::kGpuFractionNumDevices, ParseWholeInteger, std::nullopt,
                                 "a positive integer", ctx)) {
    pod.gpu_sharing.num_devices = *v;
  }
  if (pod.gpu_sharing.IsShared() && pod.request.milli_gpu > 0) {
    ctx.Fail("spec.containers.resources",
             "a pod asking for a GPU fraction or GPU memory must not "
             "also request nvidia.com/gpu");
  }
}

// The names of the pod's containers and init containers.
std::vector<std::string_view> ContainerNames(const doc::Node& spec) {
  std::vector<std::string_view> out;
  for (const char* list : {"initContainers", "containers"}) {
    const doc::Node l = spec[list];
    for (size_t i = 0; l.IsSequence() && i < l.size(); ++i) {
      if (l[i]["name"].IsScalar()) out.push_back(l[i]["name"].Scalar());
    }
  }
  return out;
}

// NvFractions (k8s/nvfractions.h): the request counts as a gpu-memory annotation does. A pod
// breaking its rules is reported with the field named and asks for no GPU memory.
void DecodeNvFractions(const doc::Node& spec, PodObject& pod, ObjectContext& ctx) {
  nvfractions::PodFacts facts;
  for (const auto& [key, value] : pod.meta.annotations) {
    if (nvfractions::Relevant(key)) facts.annotations.push_back({key, value});
  }
  if (!nvfractions::HasNvFractions(facts.annotations)) return;
  facts.containers = ContainerNames(spec);
  facts.whole_gpu = pod.request.milli_gpu > 0;
  const nvfractions::Parsed parsed = nvfractions::ParseNvFractions(facts);
  if (parsed.error) {
    ctx.Fail(parsed.error->field, parsed.error->message);
    return;
  }
  pod.gpu_sharing.memory_mib = parsed.request->request_mib;
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

}  // namespace

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
  const doc::Node status = doc["status"];
  pod.request = PodRequest(spec, ReadResize(status, ctx), ctx);
  DecodeExtendedRequests(spec, pod);
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
  pod.resource_claims = PodResourceClaims(spec, status, ctx);
  DecodeGpuSharing(pod, ctx);
  DecodeNvFractions(spec, pod, ctx);
  DecodeGpuGroups(pod);
  ReadTypedLabels(pod);
  DecodePodNuma(doc, pod, ctx);
  DecodePodStorage(spec, pod, ctx);
  state.pods.push_back(std::move(pod));
}

}  // namespace kai::decoding
