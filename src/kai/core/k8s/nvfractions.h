#pragma once
// NvFractions (KAI v0.18): a pod asks for GPU memory per container, in annotations the
// gpu-fractioning runtime enforces:
//   nvidia.com/container.<container>.gpu-memory.request: 7680Mi   (a Kubernetes memory quantity)
//   nvidia.com/container.<container>.gpu-memory.limit:   8192Mi   (optional; the request
//                                                                  defaults to it)
// The scheduler counts the request in MiB as it counts a gpu-memory annotation (per device, times
// gpu-fraction-num-devices); the binder writes the GPU ids it chose to
//   nvidia.com/container.<container>.gpus.devices
// which only the binder may write (admission checks who does).
//
// The rules that concern the pod alone are written once, in ParseNvFractions, which the pod
// decoder (k8s/decode_pod.cc), admission (admission/pod_validate.cc) and the binder
// (daemons/binder) call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kai::nvfractions {

inline constexpr std::string_view kKeyPrefix = "nvidia.com/container.";
inline constexpr std::string_view kRequestSuffix = ".gpu-memory.request";
inline constexpr std::string_view kLimitSuffix = ".gpu-memory.limit";
inline constexpr std::string_view kDevicesSuffix = ".gpus.devices";

std::string RequestKey(std::string_view container);
std::string LimitKey(std::string_view container);
std::string DevicesKey(std::string_view container);

// The container a gpus.devices key names; nullopt when `key` is not such a key.
std::optional<std::string_view> DevicesContainer(std::string_view key);

struct Annotation {
  std::string_view key, value;
};

// What ParseNvFractions reads of a pod.
struct PodFacts {
  // The pod's annotations; only those Relevant() names are read, so a caller may pass just them.
  std::vector<Annotation> annotations;
  std::vector<std::string_view> containers;  // the names of containers and initContainers
  bool whole_gpu = false;                    // a container requests or limits nvidia.com/gpu
};

// Whether ParseNvFractions reads annotation `key`: an NvFractions request or limit, or a legacy
// GPU-sharing annotation it checks against (gpu-fraction, gpu-memory,
// gpu-fraction-container-name).
bool Relevant(std::string_view key);

// What a valid NvFractions pod asks for.
struct Request {
  std::string container;
  int64_t request_mib = 0;  // bytes rounded up to whole MiB, as the runtime reads them
  int64_t limit_mib = 0;    // the request when no limit is given
};

// A broken rule: the field ("metadata.annotations.<key>") and what is wrong with it.
struct FieldError {
  std::string field, message;
};

struct Parsed {
  std::optional<Request> request;  // nullopt: the pod asks for nothing through NvFractions
  std::optional<FieldError> error;
};

// The pod's NvFractions request, or the first rule it breaks, in this order: annotations for
// more than one container; a container the pod does not have; gpu-fraction or gpu-memory
// alongside; a gpu-fraction-container-name naming another container; a whole nvidia.com/gpu; a
// request or limit that is not a positive memory quantity; a request above the limit.
Parsed ParseNvFractions(const PodFacts& pod);

// Whether the pod has an NvFractions request or limit annotation (valid or not).
bool HasNvFractions(const std::vector<Annotation>& annotations);

}  // namespace kai::nvfractions
