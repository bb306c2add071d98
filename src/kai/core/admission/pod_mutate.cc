// The mutating pod webhook: KAI's gpusharing, hamicore (with --hami-core-enabled), deviceaccess
// and runtimeenforcement plugins, in the order KAI registers them (cmd/admission/main.go), as JSON
// Patch operations on the request's pod.
// The ConfigMap names are the ones the binder derives again (binder/objects.h
// SharingConfigMapNames): "<prefix>-<index>" (init containers "<prefix>-i<index>") and
// "<that>-evar", with <prefix> in the pod's runai/shared-gpu-configmap annotation.
#include <algorithm>
#include <cctype>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/hamicore.h"
#include "kai/core/admission/pod_view.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"

namespace kai::admission {
namespace {

constexpr std::string_view kSharedGpuSuffix = "shared-gpu";
// The ConfigMap's volume is "<capabilities>-vol" and a volume name is at most 63 characters:
// room for "-vol", the random part and its two '-', "shared-gpu", "-<index>" and "-evar".
constexpr size_t kMaxVolumeName = 63;

std::string JsonString(std::string_view s) {
  return k8s::Json([&](k8s::JsonWriter& w) { k8s::Str(w, s); });
}

std::string ValueEnvJson(std::string_view name, std::string_view value) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "name", name);
    k8s::KeyStr(w, "value", value);
    w.EndObject();
  });
}

std::string EnvFromJson(std::string_view config_map) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::Str(w, "configMapRef");
    w.StartObject();
    k8s::KeyStr(w, "name", config_map);
    k8s::Str(w, "optional");
    w.Bool(false);
    w.EndObject();
    w.EndObject();
  });
}

std::string ConfigMapVolumeJson(std::string_view name, std::string_view config_map) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "name", name);
    k8s::Str(w, "configMap");
    w.StartObject();
    k8s::KeyStr(w, "name", config_map);
    w.EndObject();
    w.EndObject();
  });
}

class PatchBuilder {
 public:
  void Add(std::string path, std::string value) {
    ops_.push_back({"add", std::move(path), std::move(value)});
  }
  void Replace(std::string path, std::string value) {
    ops_.push_back({"replace", std::move(path), std::move(value)});
  }
  // Appends to the array at `path`, first creating it when `exists` is false.
  void Append(const std::string& path, bool& exists, const std::string& value) {
    if (exists) {
      Add(path + "/-", value);
    } else {
      Add(path, "[" + value + "]");
      exists = true;
    }
  }
  std::vector<PatchOp> Take() { return std::move(ops_); }

 private:
  std::vector<PatchOp> ops_;
};

// Sets env `desired` on the container: nothing when its last entry of that name (the one that
// takes effect) already says so, else that entry replaced, else one appended.
void UpsertEnv(PatchBuilder& patch, ContainerInfo& c, const EnvEntry& desired,
               const std::string& json) {
  auto same_name = [&](const EnvEntry& e) { return e.name == desired.name; };
  const auto it = std::find_if(c.env.rbegin(), c.env.rend(), same_name);
  if (it == c.env.rend()) {
    patch.Append(c.Path() + "/env", c.has_env, json);
    c.env.push_back(desired);
    return;
  }
  if (it->value == desired.value && it->value_from == desired.value_from &&
      it->config_map == desired.config_map && it->key == desired.key &&
      it->optional == desired.optional) {
    return;
  }
  const size_t index = static_cast<size_t>(std::distance(it, c.env.rend())) - 1;
  patch.Replace(c.Path() + "/env/" + std::to_string(index), json);
  *it = desired;
}

void SetEnvFromConfigMap(PatchBuilder& patch, ContainerInfo& c, std::string_view name,
                         const std::string& config_map) {
  EnvEntry e{std::string(name), std::nullopt, true, config_map, std::string(name), false};
  UpsertEnv(patch, c, e, ConfigMapKeyEnvJson(name, config_map));
}

// KAI's volume name of a ConfigMap: "<name>-vol", lower case, runs of characters a DNS label may
// not hold replaced by '-', no '-' at either end.
std::string ConfigVolumeName(const std::string& config_map) {
  std::string out;
  for (char ch : config_map + "-vol") {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (ok) {
      out += c;
    } else if (out.empty() || out.back() != '-') {
      out += '-';
    }
  }
  const size_t b = out.find_first_not_of('-'), e = out.find_last_not_of('-');
  return b == std::string::npos ? std::string() : out.substr(b, e - b + 1);
}

// "<base>-<random>-shared-gpu": base is the pod's first owner's name (a pod made from a template
// has no name yet), else its name or generateName, cut so that every name derived from the
// prefix fits a volume name.
std::string NewPrefix(const PodInfo& pod, const ContainerInfo& c, const RandomSuffix& random) {
  std::string base = !pod.owner_name.empty() ? pod.owner_name
                     : !pod.name.empty()     ? pod.name
                                             : pod.generate_name;
  const size_t reserved = std::string_view("-vol").size() + kConfigMapSuffixLength + 2 +
                          kSharedGpuSuffix.size() + std::to_string(c.index).size() + 1 +
                          std::string_view("-evar").size();
  if (base.size() > kMaxVolumeName - reserved) base.resize(kMaxVolumeName - reserved);
  while (!base.empty() && (base.back() == '.' || base.back() == '-')) base.pop_back();
  std::string prefix = random(kConfigMapSuffixLength) + "-" + std::string(kSharedGpuSuffix);
  return base.empty() ? prefix : base + "-" + prefix;
}

// The prefix the pod's annotation names, else a new one written to the annotation.
std::string SharingPrefix(PatchBuilder& patch, const PodInfo& pod, const ContainerInfo& c,
                          const RandomSuffix& random) {
  const std::string* existing = pod.Annotation(keys::kSharedGpuConfigMapAnnotation);
  if (existing && !existing->empty()) return *existing;
  // The pod has annotations: the GPU share is asked for in them.
  const std::string prefix = NewPrefix(pod, c, random);
  patch.Add("/metadata/annotations/" + PointerToken(keys::kSharedGpuConfigMapAnnotation),
            JsonString(prefix));
  return prefix;
}

void SetConfigMapVolume(PatchBuilder& patch, PodInfo& pod, const std::string& config_map) {
  const std::string name = ConfigVolumeName(config_map);
  const auto it = std::find_if(pod.volumes.begin(), pod.volumes.end(),
                               [&](const VolumeInfo& v) { return v.name == name; });
  const std::string json = ConfigMapVolumeJson(name, config_map);
  if (it == pod.volumes.end()) {
    patch.Append("/spec/volumes", pod.has_volumes, json);
    pod.volumes.push_back({name, config_map});
  } else if (it->config_map != config_map) {
    patch.Replace("/spec/volumes/" + std::to_string(it - pod.volumes.begin()), json);
    it->config_map = config_map;
  }
}

void AddEnvFrom(PatchBuilder& patch, ContainerInfo& c, const std::string& config_map) {
  const auto& names = c.env_from_config_maps;
  if (std::find(names.begin(), names.end(), config_map) != names.end()) return;
  patch.Append(c.Path() + "/envFrom", c.has_env_from, EnvFromJson(config_map));
  c.env_from_config_maps.push_back(config_map);
}

void MutateGpuSharing(PatchBuilder& patch, PodInfo& pod, ContainerInfo& c, const Options& options,
                      const RandomSuffix& random) {
  const std::string prefix = SharingPrefix(patch, pod, c, random);
  const std::string capabilities = prefix + "-" + (c.init ? "i" : "") + std::to_string(c.index);
  SetEnvFromConfigMap(patch, c, keys::kNvidiaVisibleDevices, capabilities);
  SetEnvFromConfigMap(patch, c, keys::kRunaiNumOfGpusEnv, capabilities);
  SetEnvFromConfigMap(patch, c, keys::kGpuPortionEnv, capabilities);
  if (options.hami_core_enabled) {  // KAI's hamicore plugin, registered right after gpusharing
    const EnvSetting limit = CudaMemoryLimitEnv(capabilities);
    UpsertEnv(patch, c, limit.entry, limit.json);
  }
  SetConfigMapVolume(patch, pod, capabilities);
  AddEnvFrom(patch, c, capabilities + "-evar");
}

// NVIDIA_VISIBLE_DEVICES=void on every container that neither takes the GPU share nor requests
// a GPU, so that it sees no GPU of the node.
void BlockDeviceAccess(PatchBuilder& patch, PodInfo& pod, const ContainerInfo* fraction) {
  for (auto* list : {&pod.init_containers, &pod.containers}) {
    for (ContainerInfo& c : *list) {
      if (&c == fraction || c.requests_gpu) continue;
      const EnvEntry e{std::string(keys::kNvidiaVisibleDevices), "void", false, "", "", false};
      UpsertEnv(patch, c, e, ValueEnvJson(keys::kNvidiaVisibleDevices, "void"));
    }
  }
}

void SetRuntimeClass(PatchBuilder& patch, const PodInfo& pod, const ContainerInfo* nv,
                     const Options& options) {
  if (options.gpu_fraction_runtime_class_name.empty()) return;
  if (!pod.RequestsGpuSharing() && !nv) return;
  if (pod.runtime_class_name && !pod.runtime_class_name->empty()) return;
  patch.Add("/spec/runtimeClassName", JsonString(options.gpu_fraction_runtime_class_name));
}

std::optional<std::string> NamespaceMismatch(const Request& request, const PodInfo& pod) {
  const std::string ns(request.object["metadata"]["namespace"].Scalar());
  if (ns.empty() || request.ns.empty() || ns == request.ns) return std::nullopt;
  return pod.ref + ": metadata.namespace: \"" + ns + "\" is not the request's namespace \"" +
         request.ns + "\"";
}

}  // namespace

Verdict MutatePod(const Request& request, const Options& options, const RandomSuffix& random) {
  if (request.operation != Operation::kCreate) return Verdict::Allow();
  PodInfo pod = ReadPodInfo(request, request.object);
  if (pod.scheduler_name != options.scheduler_name) return Verdict::Allow();
  if (auto e = NamespaceMismatch(request, pod)) return Verdict::Deny(*e, "namespace_mismatch");
  ContainerInfo* fraction = nullptr;
  if (pod.RequestsGpuSharing()) {
    auto r = FractionContainer(pod);
    if (!r.ok()) return Verdict::Deny(r.error().message, "gpu_sharing");
    fraction = r.value();
  }
  // An NvFractions pod gets no ConfigMap environment: the runtime reads its annotations.
  const ContainerInfo* nv = NvFractionsContainer(pod);
  PatchBuilder patch;
  if (fraction) MutateGpuSharing(patch, pod, *fraction, options, random);
  if (options.block_nvidia_visible_devices) BlockDeviceAccess(patch, pod, fraction ? fraction : nv);
  SetRuntimeClass(patch, pod, nv, options);
  Verdict v;
  v.patch = patch.Take();
  return v;
}

}  // namespace kai::admission
