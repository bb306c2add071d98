#include "kai/core/admission/hamicore.h"

#include "kai/core/k8s/keys.h"

namespace kai::admission {

EnvSetting CudaMemoryLimitEnv(std::string_view capabilities_config_map) {
  const std::string_view name = keys::kCudaDeviceMemoryLimitEnv;
  EnvSetting out;
  out.entry.name = std::string(name);
  out.entry.value_from = true;
  out.entry.config_map = std::string(capabilities_config_map);
  out.entry.key = std::string(name);
  out.entry.optional = true;
  out.json = ConfigMapKeyEnvJson(name, capabilities_config_map, /*optional=*/true);
  return out;
}

}  // namespace kai::admission
