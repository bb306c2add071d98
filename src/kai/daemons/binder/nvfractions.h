#pragma once
// The binder's part of NvFractions (core/k8s/nvfractions.h): at PreBind of a fraction bind, the
// gpusharing plugin writes the GPUs it reserved to the pod's
// nvidia.com/container.<container>.gpus.devices annotation (comma-separated ids, as it writes
// NVIDIA_VISIBLE_DEVICES for a legacy fraction), which NVIDIA's gpu-fractioning runtime reads; such
// a pod has no GPU-sharing ConfigMaps. Rollback removes the annotation.
#include <optional>
#include <string>
#include <vector>

#include "kai/daemons/binder/objects.h"
#include "kai/kube/client/api_client.h"

namespace kai::binder {

// The container of the pod's NvFractions request; nullopt when the pod makes none. An error
// names the pod and the annotation when the request breaks a rule (admission refuses such pods).
Result<std::optional<std::string>> NvFractionsContainer(const PodView& pod);

// The devices annotation's value: the ids, comma-separated.
std::string DevicesValue(const std::vector<std::string>& gpu_ids);

// Sets the annotation (a merge patch of the pod); nothing when the pod already has that value.
Status WriteNvFractionsDevices(const k8s::ApiClient& client, const PodView& pod,
                               const std::string& container,
                               const std::vector<std::string>& gpu_ids);

// Removes the annotation; a pod that is gone has none.
Status RemoveNvFractionsDevices(const k8s::ApiClient& client, const PodView& pod,
                                const std::string& container);

}  // namespace kai::binder
