// The validating pod webhook: KAI's gpusharing and deviceaccess admission plugins
// (pkg/admission/webhook/v1alpha2/, pkg/binder/plugins/gpusharing/gpu-request/).
#include <algorithm>
#include <map>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/pod_view.h"
#include "kai/core/k8s/decode_fields.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/nvfractions.h"
#include "kai/core/resource/quantity.h"

namespace kai::admission {
namespace {

constexpr std::string_view kMpsAnnotation = "mps";
constexpr int kFractionScale = 18;  // the fraction is compared with 1 at 10^-18 exactly
constexpr int64_t kOneAtFractionScale = 1'000'000'000'000'000'000;

std::string AnnotationField(std::string_view key) {
  return "metadata.annotations." + std::string(key);
}

std::string Denial(const PodInfo& pod, std::string_view field, std::string_view rule) {
  return pod.ref + ": " + std::string(field) + ": " + std::string(rule);
}

// A plain decimal number, as Go's strconv.ParseFloat and a resource quantity both read it
// (KAI asks both): digits, one '.', an optional exponent; no SI or binary suffix.
bool PlainDecimal(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
}

// gpu-fraction strictly between 0 and 1, decided exactly (ParseQuantity, the scheduler's parser,
// at 10^-18; a value finer than that rounds up, so 1 - 10^-19 counts as 1, as a double does).
bool ValidFraction(std::string_view s) {
  if (!PlainDecimal(s)) return false;
  const Result<int64_t> v = ParseQuantity(s, kFractionScale);
  return v.ok() && v.value() > 0 && v.value() < kOneAtFractionScale;
}

bool PositiveInteger(std::string_view s) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  const std::optional<int64_t> v = decoding::ParseWholeInteger(s);
  return v && *v > 0;
}

bool HasWholeGpuLimit(const PodInfo& pod) {
  auto limit = [](const ContainerInfo& c) { return c.whole_gpu_limit; };
  return std::any_of(pod.containers.begin(), pod.containers.end(), limit) ||
         std::any_of(pod.init_containers.begin(), pod.init_containers.end(), limit);
}

// How the GPU-sharing annotations may combine (KAI's ValidateGpuRequests, in its order; an
// NvFractions request is a GPU share as gpu-memory is).
std::optional<std::string> CombinationError(const PodInfo& pod, bool whole_gpu, bool nv) {
  const std::string* fraction = pod.Annotation(keys::kGpuFraction);
  const std::string* memory = pod.Annotation(keys::kGpuMemory);
  const std::string* mps = pod.Annotation(kMpsAnnotation);
  if (!fraction && !memory && !nv && mps && *mps == "true") {
    return Denial(pod, AnnotationField(kMpsAnnotation),
                  "\"true\" needs a GPU share (gpu-fraction, gpu-memory or NvFractions)");
  }
  if (fraction && whole_gpu) {
    return Denial(pod, AnnotationField(keys::kGpuFraction),
                  "a GPU fraction cannot be combined with an nvidia.com/gpu limit");
  }
  if (memory && (fraction || whole_gpu)) {
    return Denial(pod, AnnotationField(keys::kGpuMemory),
                  std::string("gpu-memory cannot be combined with ") +
                      (fraction ? "gpu-fraction" : "an nvidia.com/gpu limit"));
  }
  if (pod.Annotation(keys::kGpuFractionNumDevices) && !fraction && !memory && !nv) {
    return Denial(pod, AnnotationField(keys::kGpuFractionNumDevices),
                  "needs gpu-fraction, gpu-memory or NvFractions (the share of each device)");
  }
  return std::nullopt;
}

std::optional<std::string> NumberError(const PodInfo& pod) {
  if (const std::string* v = pod.Annotation(keys::kGpuMemory); v && !PositiveInteger(*v)) {
    return Denial(pod, AnnotationField(keys::kGpuMemory),
                  "must be a positive integer (MiB), got \"" + *v + "\"");
  }
  if (const std::string* v = pod.Annotation(keys::kGpuFraction); v && !ValidFraction(*v)) {
    return Denial(pod, AnnotationField(keys::kGpuFraction),
                  "must be a decimal number strictly between 0 and 1 (a whole GPU is requested "
                  "as nvidia.com/gpu), got \"" +
                      *v + "\"");
  }
  if (const std::string* v = pod.Annotation(keys::kGpuFractionNumDevices);
      v && !PositiveInteger(*v)) {
    return Denial(pod, AnnotationField(keys::kGpuFractionNumDevices),
                  "must be a positive integer, got \"" + *v + "\"");
  }
  return std::nullopt;
}

// The NvFractions rules (k8s/nvfractions.h), the ones the scheduler's decoder applies.
std::optional<std::string> NvFractionsError(const PodInfo& pod,
                                            const nvfractions::PodFacts& facts) {
  const nvfractions::Parsed parsed = nvfractions::ParseNvFractions(facts);
  if (!parsed.error) return std::nullopt;
  return Denial(pod, parsed.error->field, parsed.error->message);
}

// The first NvFractions request or limit annotation (a field to name).
std::string NvFractionsField(const nvfractions::PodFacts& facts) {
  for (const nvfractions::Annotation& a : facts.annotations) {
    if (nvfractions::HasNvFractions({a})) return AnnotationField(a.key);
  }
  return "metadata.annotations";
}

std::optional<std::string> GpuSharingError(const PodInfo& pod, const Options& options) {
  const nvfractions::PodFacts facts = NvFractionsFacts(pod);
  const bool nv = nvfractions::HasNvFractions(facts.annotations);
  if (!options.gpu_sharing_enabled && (pod.RequestsGpuSharing() || nv)) {
    const bool fraction = pod.Annotation(keys::kGpuFraction) != nullptr;
    const bool memory = pod.Annotation(keys::kGpuMemory) != nullptr;
    return Denial(pod,
                  fraction ? AnnotationField(keys::kGpuFraction)
                  : memory ? AnnotationField(keys::kGpuMemory)
                           : NvFractionsField(facts),
                  "GPU sharing is disabled on this cluster");
  }
  if (nv) {
    if (auto e = NvFractionsError(pod, facts)) return e;
  }
  if (auto e = CombinationError(pod, HasWholeGpuLimit(pod), nv)) return e;
  return NumberError(pod);
}

// The value of every nvidia.com/container.<c>.gpus.devices annotation of a pod object.
std::map<std::string, std::string> DevicesAnnotations(const doc::Node& object) {
  std::map<std::string, std::string> out;
  for (const auto& e : object["metadata"]["annotations"].Entries()) {
    if (nvfractions::DevicesContainer(e.first.Scalar())) {
      out.emplace(std::string(e.first.Scalar()), std::string(e.second.Scalar()));
    }
  }
  return out;
}

// The first devices annotation whose value differs between the two (added, changed or removed).
std::optional<std::string> ChangedKey(const std::map<std::string, std::string>& before,
                                      const std::map<std::string, std::string>& after) {
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end() || it->second != value) return key;
  }
  for (const auto& entry : before) {
    if (!after.count(entry.first)) return entry.first;
  }
  return std::nullopt;
}

// Only the binder writes the GPUs it chose for an NvFractions container: a pod is not created
// with them, and no one else changes them.
std::optional<std::string> DevicesWriterError(const Request& request, const PodInfo& pod,
                                              const Options& options) {
  const auto after = DevicesAnnotations(request.object);
  if (request.operation == Operation::kCreate) {
    if (after.empty()) return std::nullopt;
    return Denial(pod, AnnotationField(after.begin()->first),
                  "only the binder writes it, after it has chosen the pod's GPUs");
  }
  const auto key = ChangedKey(DevicesAnnotations(request.old_object), after);
  if (!key || request.username == options.nvfractions_devices_writer) return std::nullopt;
  return Denial(pod, AnnotationField(*key),
                "only the binder (" + options.nvfractions_devices_writer +
                    ") may change it, not \"" + request.username + "\"");
}

// NVIDIA_VISIBLE_DEVICES of a container the GPU share does not go to: only "void" or "none",
// never from a reference (KAI's deviceaccess plugin).
std::optional<std::string> VisibleDevicesError(const PodInfo& pod, const ContainerInfo& c) {
  for (size_t i = 0; i < c.env.size(); ++i) {
    const EnvEntry& e = c.env[i];
    if (e.name != keys::kNvidiaVisibleDevices) continue;
    const std::string field = c.Field() + ".env[" + std::to_string(i) + "]";
    if (e.value && !e.value->empty() && *e.value != "void" && *e.value != "none") {
      return Denial(pod, field,
                    "container \"" + c.name + "\" sets NVIDIA_VISIBLE_DEVICES to \"" + *e.value +
                        "\"; only \"void\" or \"none\" are allowed (the device plugin assigns "
                        "GPUs)");
    }
    if ((!e.value || e.value->empty()) && e.value_from) {
      return Denial(pod, field,
                    "container \"" + c.name +
                        "\" takes NVIDIA_VISIBLE_DEVICES from a reference; only the values "
                        "\"void\" or \"none\" are allowed");
    }
  }
  return std::nullopt;
}

std::optional<std::string> DeviceAccessError(PodInfo& pod) {
  const ContainerInfo* fraction = nullptr;
  if (pod.RequestsGpuSharing()) {
    auto r = FractionContainer(pod);
    if (!r.ok()) return r.error().message;
    fraction = r.value();
  }
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const ContainerInfo& c : *list) {
      if (&c == fraction) continue;
      if (auto e = VisibleDevicesError(pod, c)) return e;
    }
  }
  return std::nullopt;
}

}  // namespace

Verdict ValidatePod(const Request& request, const Options& options) {
  if (request.operation == Operation::kDelete) return Verdict::Allow();
  PodInfo pod = ReadPodInfo(request, request.object);
  if (pod.scheduler_name != options.scheduler_name) return Verdict::Allow();
  if (auto e = DevicesWriterError(request, pod, options)) {
    return Verdict::Deny(*e, "nvfractions_devices");
  }
  if (auto e = GpuSharingError(pod, options)) return Verdict::Deny(*e, "gpu_sharing");
  if (options.block_nvidia_visible_devices) {
    if (auto e = DeviceAccessError(pod)) return Verdict::Deny(*e, "device_access");
  }
  return Verdict::Allow();
}

}  // namespace kai::admission
