// Decoders of objects.h: only the fields KAI's status controllers read.
#include <cstdlib>

#include "kai/core/controllers/objects.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/nvfractions.h"

namespace kai::controllers {
namespace {

std::string Text(const doc::Node& n) { return std::string(n.Scalar()); }

std::string RefOf(std::string_view kind, const doc::Node& obj) {
  const doc::Node md = obj["metadata"];
  const std::string ns = Text(md["namespace"]);
  return std::string(kind) + " " + (ns.empty() ? "" : ns + "/") + Text(md["name"]);
}

Error FieldError(const std::string& ref, std::string_view field, const std::string& why) {
  return Error{ref + ": " + std::string(field) + ": " + why};
}

std::optional<std::string> Annotation(const doc::Node& obj, std::string_view key) {
  const doc::Node v = obj["metadata"]["annotations"][key];
  if (!v.IsScalar()) return std::nullopt;
  return Text(v);
}

Result<TextList> ReadTexts(const doc::Node& map, const std::string& ref, std::string_view field) {
  TextList out;
  for (const auto& e : map.Entries()) {
    const std::string name = Text(e.first);
    const std::string text = Text(e.second);
    if (!ParseKubeQuantity(text).ok()) {
      return FieldError(ref, std::string(field) + "." + name, "not a quantity: \"" + text + "\"");
    }
    out.emplace(name, text);
  }
  return out;
}

Status AddRequests(const doc::Node& containers, const std::string& ref, ResourceList& total) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const std::string field = "spec.containers[" + std::to_string(i) + "].resources.requests";
    auto texts = ReadTexts(containers[i]["resources"]["requests"], ref, field);
    if (!texts.ok()) return texts.error();
    ResourceList one;
    for (const auto& [name, text] : *texts) one.emplace(name, ParseKubeQuantity(text).value());
    total = Sum(total, one);
  }
  return Ok();
}

bool PodScheduled(const doc::Node& conditions) {
  for (size_t i = 0; i < conditions.size(); ++i) {
    if (conditions[i]["type"].Scalar() == "PodScheduled") {
      return conditions[i]["status"].Scalar() == "True";
    }
  }
  return false;
}

Result<double> ReadQuota(const doc::Node& resources, std::string_view name,
                         const std::string& ref) {
  const doc::Node v = resources[name]["quota"];
  if (!v.IsDefined() || v.IsNull()) return 0.0;
  const std::string text = Text(v);
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') {
    return FieldError(ref, "spec.resources." + std::string(name) + ".quota",
                      "not a number: \"" + text + "\"");
  }
  return d;
}

Result<ResourcesStatus> ReadResourcesStatus(const doc::Node& rs, const std::string& ref,
                                            std::string_view prefix) {
  const std::string p(prefix);
  auto requested = ReadTexts(rs["requested"], ref, p + "requested");
  if (!requested.ok()) return requested.error();
  auto allocated = ReadTexts(rs["allocated"], ref, p + "allocated");
  if (!allocated.ok()) return allocated.error();
  auto non_preemptible =
      ReadTexts(rs["allocatedNonPreemptible"], ref, p + "allocatedNonPreemptible");
  if (!non_preemptible.ok()) return non_preemptible.error();
  return ResourcesStatus{std::move(*requested), std::move(*allocated), std::move(*non_preemptible)};
}

// An NvFractions request (k8s/nvfractions.h) in MiB, as a gpu-memory annotation would say it;
// nullopt when the pod makes none or a broken one (the scheduler skips such a pod).
std::optional<std::string> NvFractionsMemory(const doc::Node& obj) {
  nvfractions::PodFacts facts;
  for (const auto& e : obj["metadata"]["annotations"].Entries()) {
    if (nvfractions::Relevant(e.first.Scalar())) {
      facts.annotations.push_back({e.first.Scalar(), e.second.Scalar()});
    }
  }
  if (!nvfractions::HasNvFractions(facts.annotations)) return std::nullopt;
  for (const char* list : {"initContainers", "containers"}) {
    const doc::Node l = obj["spec"][list];
    for (size_t i = 0; i < l.size(); ++i) facts.containers.push_back(l[i]["name"].Scalar());
  }
  const nvfractions::Parsed parsed = nvfractions::ParseNvFractions(facts);
  if (!parsed.request) return std::nullopt;
  return std::to_string(parsed.request->request_mib);
}

}  // namespace

Result<PodFacts> DecodePodFacts(const doc::Node& obj) {
  const std::string ref = RefOf("Pod", obj);
  PodFacts p;
  p.ns = Text(obj["metadata"]["namespace"]);
  p.name = Text(obj["metadata"]["name"]);
  p.pod_group = Annotation(obj, keys::kPodGroupAnnotation).value_or("");
  p.phase = Text(obj["status"]["phase"]);
  p.node_name = Text(obj["spec"]["nodeName"]);
  p.scheduled = PodScheduled(obj["status"]["conditions"]);
  if (auto s = AddRequests(obj["spec"]["containers"], ref, p.container_requests); !s.ok()) {
    return s.error();
  }
  p.gpu_fraction = Annotation(obj, keys::kGpuFraction);
  p.gpu_memory = Annotation(obj, keys::kGpuMemory);
  if (!p.gpu_memory) p.gpu_memory = NvFractionsMemory(obj);
  p.fraction_devices = Annotation(obj, keys::kGpuFractionNumDevices);
  p.received_type = Annotation(obj, keys::kReceivedResourceType);
  return p;
}

Result<NodeFacts> DecodeNodeFacts(const doc::Node& obj) {
  NodeFacts n;
  n.name = Text(obj["metadata"]["name"]);
  for (const auto& e : obj["metadata"]["labels"].Entries()) {
    const std::string key = Text(e.first);
    if (key == keys::kNodeGpuMemory || key.rfind("beta.amd.com/gpu.vram", 0) == 0) {
      n.gpu_memory_labels.emplace(key, Text(e.second));
    }
  }
  return n;
}

Result<PriorityClassFacts> DecodePriorityClassFacts(const doc::Node& obj) {
  PriorityClassFacts pc;
  pc.name = Text(obj["metadata"]["name"]);
  const std::string value = Text(obj["value"]);
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0') {
    return FieldError(RefOf("PriorityClass", obj), "value", "not an integer: \"" + value + "\"");
  }
  pc.value = static_cast<int>(v);
  pc.global_default = obj["globalDefault"].Scalar() == "true";
  return pc;
}

Result<PodGroupFacts> DecodePodGroupFacts(const doc::Node& obj) {
  const std::string ref = RefOf("PodGroup", obj);
  PodGroupFacts pg;
  pg.ns = Text(obj["metadata"]["namespace"]);
  pg.name = Text(obj["metadata"]["name"]);
  pg.queue = Text(obj["spec"]["queue"]);
  pg.priority_class_name = Text(obj["spec"]["priorityClassName"]);
  pg.preemptibility = Text(obj["spec"]["preemptibility"]);
  auto status =
      ReadResourcesStatus(obj["status"]["resourcesStatus"], ref, "status.resourcesStatus.");
  if (!status.ok()) return status.error();
  pg.status = std::move(*status);
  return pg;
}

Result<QueueFacts> DecodeQueueFacts(const doc::Node& obj) {
  const std::string ref = RefOf("Queue", obj);
  QueueFacts q;
  q.name = Text(obj["metadata"]["name"]);
  q.parent = Text(obj["spec"]["parentQueue"]);
  q.display_name = Text(obj["spec"]["displayName"]);
  const doc::Node resources = obj["spec"]["resources"];
  q.has_resources = resources.IsMap();
  auto gpu = ReadQuota(resources, "gpu", ref);
  auto cpu = ReadQuota(resources, "cpu", ref);
  auto memory = ReadQuota(resources, "memory", ref);
  for (const auto* r : {&gpu, &cpu, &memory}) {
    if (!r->ok()) return r->error();
  }
  q.gpu_quota = *gpu;
  q.cpu_quota = *cpu;
  q.memory_quota = *memory;
  auto status = ReadResourcesStatus(obj["status"], ref, "status.");
  if (!status.ok()) return status.error();
  q.status.requested = std::move(status->requested);
  q.status.allocated = std::move(status->allocated);
  q.status.allocated_non_preemptible = std::move(status->allocated_non_preemptible);
  const doc::Node children = obj["status"]["childQueues"];
  for (size_t i = 0; i < children.size(); ++i) q.status.child_queues.push_back(Text(children[i]));
  return q;
}

}  // namespace kai::controllers
