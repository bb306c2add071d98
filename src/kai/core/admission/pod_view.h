#pragma once
// Internal to admission/: what the pod rules read of a Pod in an AdmissionReview request, with
// each list's position kept so that a patch can point into it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/admission/admission.h"
#include "kai/core/k8s/nvfractions.h"

namespace kai::admission {

struct EnvEntry {
  std::string name;
  std::optional<std::string> value;  // "value", when set
  bool value_from = false;           // "valueFrom", any source
  std::string config_map, key;       // valueFrom.configMapKeyRef
  bool optional = false;             // valueFrom.configMapKeyRef.optional
};

// An env entry as JSON for a patch: `name` from key `name` of ConfigMap `config_map`.
std::string ConfigMapKeyEnvJson(std::string_view name, std::string_view config_map,
                                bool optional = false);

struct ContainerInfo {
  std::string name;
  bool init = false;
  size_t index = 0;  // within containers or initContainers
  bool has_env = false, has_env_from = false;
  std::vector<EnvEntry> env;
  std::vector<std::string> env_from_config_maps;  // envFrom[].configMapRef.name
  bool whole_gpu_limit = false;                   // resources.limits has nvidia.com/gpu
  bool whole_gpu_request = false;                 // resources.requests has nvidia.com/gpu
  bool requests_gpu = false;  // a non-zero nvidia.com/gpu or MIG request (or limit)

  std::string Path() const;   // "/spec/containers/0" or "/spec/initContainers/1"
  std::string Field() const;  // "spec.containers[0]"
};

struct VolumeInfo {
  std::string name, config_map;
};

struct PodInfo {
  std::string ref;  // "Pod namespace/name"
  std::string name, generate_name, owner_name;
  std::string scheduler_name;
  std::optional<std::string> runtime_class_name;
  bool has_volumes = false;
  std::map<std::string, std::string, std::less<>> annotations;
  std::vector<ContainerInfo> init_containers, containers;
  std::vector<VolumeInfo> volumes;

  const std::string* Annotation(std::string_view key) const;
  // gpu-fraction or gpu-memory is set (KAI's RequestsGPUFraction).
  bool RequestsGpuSharing() const;
};

PodInfo ReadPodInfo(const Request& request, const doc::Node& pod);

// What the NvFractions rules read of the pod (k8s/nvfractions.h); views into `pod`.
nvfractions::PodFacts NvFractionsFacts(const PodInfo& pod);
// The container a valid NvFractions request names; nullptr when the pod has none.
const ContainerInfo* NvFractionsContainer(const PodInfo& pod);

// The container the GPU share goes to: the one gpu-fraction-container-name names (init
// containers first), else the first container; nullptr when the pod has no container, an error
// when the name matches none. The pointer is into `pod`.
Result<ContainerInfo*> FractionContainer(PodInfo& pod);

}  // namespace kai::admission
