#pragma once
// The binder's hamicore plugin (KAI's B/plugins/hamicore): HAMi-core's GPU memory limit for a
// GPU share. Admission (--hami-core-enabled) points the fraction container's
// CUDA_DEVICE_MEMORY_LIMIT at the capabilities ConfigMap (an optional key); at PreBind this plugin
// writes that key: the node's GPU memory (its nvidia.com/gpu.memory label, MiB per GPU) times the
// portion of a GPU the BindRequest received, rounded down, as "<MiB>m" (HAMi-core's unit).
//
// It runs after gpusharing (priority 50 against 100), which makes the ConfigMap; BuildPlugins
// refuses a configuration that enables it without gpusharing or orders it first. As KAI's, a
// node without a usable label, or a request without a usable portion, gets no limit: the bind
// goes on (the variable is optional) and the reason is logged, naming the label or the field.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kai/daemons/binder/plugins.h"

namespace kai::binder {

// The limit for `request` on node `node` whose nvidia.com/gpu.memory label is `gpu_memory_label`
// (nullopt: the node has none), in MiB: floor(label * portion), exact. Errors name the node's
// label or the BindRequest's spec.receivedGPU.portion: a label that is not a positive integer, a
// portion that is not a number above 0 and at most 1 (a limit above the GPU's memory), a limit
// that rounds to 0.
Result<int64_t> CudaMemoryLimitMib(std::string_view node,
                                   const std::optional<std::string>& gpu_memory_label,
                                   const BindRequestObject& request);

// The ConfigMap value of a limit: "<MiB>m".
std::string CudaMemoryLimitValue(int64_t mib);

// Whether `config` may run hamicore: when it is enabled, gpusharing is enabled too and runs
// before it (a higher priority). The error names both plugins and their priorities.
Status CheckHamiCoreOrder(const PluginConfig& config);

std::unique_ptr<BindPlugin> MakeHamiCore(const k8s::ApiClient& client,
                                         std::function<void(const std::string&)> log);

}  // namespace kai::binder
