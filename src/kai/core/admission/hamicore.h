#pragma once
// Internal to admission/: KAI's admission hamicore plugin (on with --hami-core-enabled). The
// fraction container reads CUDA_DEVICE_MEMORY_LIMIT, HAMi-core's GPU memory limit, from its
// capabilities ConfigMap, where the binder's hamicore plugin writes it at bind time. The key is
// optional: a pod bound without a limit (a node with no nvidia.com/gpu.memory label) starts, with
// no limit. Runs right after the GPU-sharing mutation, which names the ConfigMap.
#include <string>
#include <string_view>

#include "kai/core/admission/pod_view.h"

namespace kai::admission {

// The env entry, as the pod rules read one, and as JSON for the patch.
struct EnvSetting {
  EnvEntry entry;
  std::string json;
};

// CUDA_DEVICE_MEMORY_LIMIT from key CUDA_DEVICE_MEMORY_LIMIT of `capabilities_config_map`,
// optional.
EnvSetting CudaMemoryLimitEnv(std::string_view capabilities_config_map);

}  // namespace kai::admission
