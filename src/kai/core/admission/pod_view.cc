#include "kai/core/admission/pod_view.h"

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::admission {
namespace {

// A request or limit of a GPU (whole or MIG) that is not zero.
bool NonZeroGpu(const doc::Node& list) {
  for (const auto& e : list.Entries()) {
    const std::string_view name = e.first.Scalar();
    if (name != keys::kGpuResource && name.rfind(keys::kMigResourcePrefix, 0) != 0) continue;
    const Result<int64_t> q = ParseQuantity(e.second.Scalar(), 3);
    if (!q.ok() || q.value() != 0) return true;
  }
  return false;
}

std::vector<EnvEntry> ReadEnv(const doc::Node& env) {
  std::vector<EnvEntry> out;
  for (size_t i = 0; i < env.size(); ++i) {
    const doc::Node e = env[i];
    EnvEntry v;
    v.name = std::string(e["name"].Scalar());
    if (e["value"].IsScalar()) v.value = std::string(e["value"].Scalar());
    v.value_from = e["valueFrom"].IsMap();
    const doc::Node ref = e["valueFrom"]["configMapKeyRef"];
    v.config_map = std::string(ref["name"].Scalar());
    v.key = std::string(ref["key"].Scalar());
    v.optional = ref["optional"].Scalar() == "true";
    out.push_back(std::move(v));
  }
  return out;
}

ContainerInfo ReadContainer(const doc::Node& c, bool init, size_t index) {
  ContainerInfo out;
  out.name = std::string(c["name"].Scalar());
  out.init = init;
  out.index = index;
  out.has_env = c["env"].IsSequence();
  out.env = ReadEnv(c["env"]);
  const doc::Node env_from = c["envFrom"];
  out.has_env_from = env_from.IsSequence();
  for (size_t i = 0; i < env_from.size(); ++i) {
    const doc::Node ref = env_from[i]["configMapRef"];
    if (ref.IsMap()) out.env_from_config_maps.emplace_back(ref["name"].Scalar());
  }
  const doc::Node res = c["resources"];
  out.whole_gpu_limit = res["limits"][keys::kGpuResource].IsDefined();
  out.whole_gpu_request = res["requests"][keys::kGpuResource].IsDefined();
  out.requests_gpu = NonZeroGpu(res["requests"]) || NonZeroGpu(res["limits"]);
  return out;
}

std::vector<ContainerInfo> ReadContainers(const doc::Node& list, bool init) {
  std::vector<ContainerInfo> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(ReadContainer(list[i], init, i));
  return out;
}

std::string PodRef(const Request& request, const doc::Node& md) {
  std::string ns(md["namespace"].Scalar()), name(md["name"].Scalar());
  if (ns.empty()) ns = request.ns;
  if (name.empty()) name = request.name;
  if (name.empty() && md["generateName"].IsScalar()) {
    name = std::string(md["generateName"].Scalar()) + "*";
  }
  return "Pod " + ns + "/" + name;
}

}  // namespace

std::string ContainerInfo::Path() const {
  return std::string(init ? "/spec/initContainers/" : "/spec/containers/") + std::to_string(index);
}

std::string ContainerInfo::Field() const {
  return std::string(init ? "spec.initContainers[" : "spec.containers[") + std::to_string(index) +
         "]";
}

const std::string* PodInfo::Annotation(std::string_view key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

bool PodInfo::RequestsGpuSharing() const {
  return Annotation(keys::kGpuFraction) || Annotation(keys::kGpuMemory);
}

PodInfo ReadPodInfo(const Request& request, const doc::Node& pod) {
  const doc::Node md = pod["metadata"], spec = pod["spec"];
  PodInfo p;
  p.ref = PodRef(request, md);
  p.name = std::string(md["name"].Scalar());
  if (p.name.empty()) p.name = request.name;
  p.generate_name = std::string(md["generateName"].Scalar());
  p.owner_name = std::string(md["ownerReferences"][0]["name"].Scalar());
  for (const auto& e : md["annotations"].Entries()) {
    p.annotations.emplace(std::string(e.first.Scalar()), std::string(e.second.Scalar()));
  }
  p.scheduler_name = spec["schedulerName"].IsScalar() ? std::string(spec["schedulerName"].Scalar())
                                                      : "default-scheduler";
  if (spec["runtimeClassName"].IsScalar()) {
    p.runtime_class_name = std::string(spec["runtimeClassName"].Scalar());
  }
  p.init_containers = ReadContainers(spec["initContainers"], true);
  p.containers = ReadContainers(spec["containers"], false);
  p.has_volumes = spec["volumes"].IsSequence();
  const doc::Node volumes = spec["volumes"];
  for (size_t i = 0; i < volumes.size(); ++i) {
    p.volumes.push_back({std::string(volumes[i]["name"].Scalar()),
                         std::string(volumes[i]["configMap"]["name"].Scalar())});
  }
  return p;
}

nvfractions::PodFacts NvFractionsFacts(const PodInfo& pod) {
  nvfractions::PodFacts facts;
  for (const auto& [key, value] : pod.annotations) facts.annotations.push_back({key, value});
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const ContainerInfo& c : *list) {
      facts.containers.push_back(c.name);
      facts.whole_gpu = facts.whole_gpu || c.whole_gpu_limit || c.whole_gpu_request;
    }
  }
  return facts;
}

const ContainerInfo* NvFractionsContainer(const PodInfo& pod) {
  const nvfractions::Parsed parsed = nvfractions::ParseNvFractions(NvFractionsFacts(pod));
  if (!parsed.request) return nullptr;
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const ContainerInfo& c : *list) {
      if (c.name == parsed.request->container) return &c;
    }
  }
  return nullptr;
}

Result<ContainerInfo*> FractionContainer(PodInfo& pod) {
  if (pod.containers.empty()) return static_cast<ContainerInfo*>(nullptr);
  const std::string* name = pod.Annotation(keys::kGpuFractionContainerName);
  if (!name) return &pod.containers[0];
  for (auto* list : {&pod.init_containers, &pod.containers}) {
    for (ContainerInfo& c : *list) {
      if (c.name == *name) return &c;
    }
  }
  return Error{pod.ref + ": metadata.annotations." + std::string(keys::kGpuFractionContainerName) +
               ": no container or init container is named \"" + *name + "\""};
}

std::string ConfigMapKeyEnvJson(std::string_view name, std::string_view config_map, bool optional) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "name", name);
    k8s::Str(w, "valueFrom");
    w.StartObject();
    k8s::Str(w, "configMapKeyRef");
    w.StartObject();
    k8s::KeyStr(w, "key", name);
    k8s::KeyStr(w, "name", config_map);
    if (optional) {
      k8s::Str(w, "optional");
      w.Bool(true);
    }
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
}

}  // namespace kai::admission
