#include "kai/core/controllers/pod_group_status.h"

#include <algorithm>
#include <cctype>

#include "kai/core/controllers/status_patch.h"
#include "kai/core/k8s/keys.h"

namespace kai::controllers {
namespace {

using i128 = __int128;
constexpr std::string_view kGpu = "nvidia.com/gpu";
constexpr std::string_view kGpuMemoryResource = "run.ai/gpu.memory";
constexpr std::string_view kAmdMemoryPrefix = "beta.amd.com/gpu.vram";
constexpr i128 kNano = 1000000000;
constexpr int kNonPreemptibleThreshold = 100;
constexpr int kDefaultPriority = 50;

std::string PodRef(const PodFacts& p) { return "Pod " + p.ns + "/" + p.name; }

Error AnnotationError(const PodFacts& p, std::string_view key, const std::string& why) {
  return Error{PodRef(p) + ": annotation " + std::string(key) + ": " + why};
}

// A quantity that must be a whole number (Quantity.AsInt64 succeeding).
std::optional<int64_t> WholeNumber(const KubeQuantity& q) {
  if (q.nano % kNano != 0) return std::nullopt;
  const i128 v = q.nano / kNano;
  if (v > INT64_MAX || v < INT64_MIN) return std::nullopt;
  return static_cast<int64_t>(v);
}

// A decimal integer as strconv.Atoi / ParseInt read it.
std::optional<int64_t> StrictInt(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 18) return std::nullopt;
  int64_t v = 0;
  for (size_t k = i; k < s.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
    v = v * 10 + (s[k] - '0');
  }
  return s[0] == '-' ? -v : v;
}

Result<int64_t> FractionsCount(const PodFacts& p) {
  if (!p.fraction_devices) return int64_t{1};
  auto q = ParseKubeQuantity(*p.fraction_devices);
  if (!q.ok()) return AnnotationError(p, keys::kGpuFractionNumDevices, q.error().message);
  auto n = WholeNumber(*q);
  if (!n) return AnnotationError(p, keys::kGpuFractionNumDevices, "not an integer");
  return *n;
}

Status AddScaled(const PodFacts& p, std::string_view key, const std::optional<std::string>& text,
                 int64_t count, std::string_view resource, ResourceList& out) {
  if (!text) return Ok();
  auto q = ParseKubeQuantity(*text);
  if (!q.ok()) return AnnotationError(p, key, q.error().message);
  q->nano *= count;
  out[std::string(resource)] = *q;
  return Ok();
}

Result<ResourceList> Requested(const PodFacts& p) {
  auto count = FractionsCount(p);
  if (!count.ok()) return count.error();
  ResourceList sharing;
  if (auto s = AddScaled(p, keys::kGpuFraction, p.gpu_fraction, *count, kGpu, sharing); !s.ok()) {
    return s.error();
  }
  if (auto s = AddScaled(p, keys::kGpuMemory, p.gpu_memory, *count, kGpuMemoryResource, sharing);
      !s.ok()) {
    return s.error();
  }
  return Sum(p.container_requests, sharing);
}

Result<KubeQuantity> FractionOfMemory(const PodFacts& p, const PodGroupInputs& in) {
  auto mib = StrictInt(*p.gpu_memory);
  if (!mib)
    return AnnotationError(p, keys::kGpuMemory, "not an integer: \"" + *p.gpu_memory + "\"");
  const NodeFacts* node = in.node ? in.node(p.node_name) : nullptr;
  if (!node) return Error{PodRef(p) + ": its node \"" + p.node_name + "\" is not known"};
  auto per_gpu = NodeGpuMemory(*node);
  if (!per_gpu.ok()) return Error{PodRef(p) + ": " + per_gpu.error().message};
  if (per_gpu->nano <= 0) return Error{PodRef(p) + ": node " + node->name + " has no GPU memory"};
  const i128 num = static_cast<i128>(*mib) * kNano * kNano;
  const i128 nano = num / per_gpu->nano + (num % per_gpu->nano != 0 ? 1 : 0);
  return KubeQuantity{nano, QuantityFormat::kDecimalSI};
}

Result<ResourceList> ReceivedFraction(const PodFacts& p, const PodGroupInputs& in) {
  ResourceList out;
  if (p.received_type.value_or("") != "Fraction") return out;
  if (p.gpu_fraction) {
    auto q = ParseKubeQuantity(*p.gpu_fraction);
    if (!q.ok()) return AnnotationError(p, keys::kGpuFraction, q.error().message);
    out[std::string(kGpu)] = *q;
    return out;
  }
  if (!p.gpu_memory) {
    return Error{PodRef(p) + ": received a fraction but has neither the gpu-fraction nor the " +
                 "gpu-memory annotation"};
  }
  auto q = FractionOfMemory(p, in);
  if (!q.ok()) return q.error();
  out[std::string(kGpu)] = *q;
  return out;
}

bool Active(const PodFacts& p) { return p.phase == "Pending" || p.phase == "Running"; }
bool Allocated(const PodFacts& p) {
  return p.phase == "Running" || (p.phase == "Pending" && p.scheduled);
}

int PriorityOf(const PodGroupFacts& pg, const std::vector<PriorityClassFacts>& classes) {
  for (const auto& pc : classes) {
    if (!pg.priority_class_name.empty() && pc.name == pg.priority_class_name) return pc.value;
  }
  for (const auto& pc : classes) {
    if (pc.global_default) return pc.value;
  }
  return kDefaultPriority;
}

std::vector<const PodFacts*> SortedPods(std::vector<const PodFacts*> pods) {
  std::sort(pods.begin(), pods.end(), [](const PodFacts* a, const PodFacts* b) {
    return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
  });
  return pods;
}

Result<KubeQuantity> AmdMemory(const std::string& label) {
  // KAI reads the amount from the label's name (its first digit onwards) and divides it by 10^6.
  const size_t digit = label.find_first_of("0123456789");
  if (digit == std::string::npos) return Error{"label " + label + ": no amount"};
  auto q = ParseKubeQuantity(std::string_view(label).substr(digit));
  if (!q.ok() || !WholeNumber(*q)) return Error{"label " + label + ": not a whole amount"};
  return KubeQuantity{q->nano / 1000000, QuantityFormat::kDecimalSI};
}

}  // namespace

bool IsPreemptible(const PodGroupFacts& pg, const std::vector<PriorityClassFacts>& classes) {
  if (pg.preemptibility == "preemptible") return true;
  if (pg.preemptibility == "non-preemptible") return false;
  return PriorityOf(pg, classes) < kNonPreemptibleThreshold;
}

Result<KubeQuantity> NodeGpuMemory(const NodeFacts& node) {
  std::optional<KubeQuantity> nvidia, amd;
  for (const auto& [key, value] : node.gpu_memory_labels) {
    if (key == keys::kNodeGpuMemory) {
      auto mib = StrictInt(value);
      if (!mib) return Error{"node " + node.name + ": label " + key + ": not an integer"};
      nvidia = KubeQuantity{static_cast<i128>(*mib) * kNano, QuantityFormat::kDecimalSI};
    } else if (!amd && key.rfind(kAmdMemoryPrefix, 0) == 0) {
      auto q = AmdMemory(key);
      if (!q.ok()) return Error{"node " + node.name + ": " + q.error().message};
      amd = *q;
    }
  }
  if (nvidia && amd)
    return Error{"node " + node.name + " has both NVIDIA and AMD GPU memory labels"};
  if (!nvidia && !amd) return Error{"node " + node.name + " has no GPU memory label"};
  return nvidia ? *nvidia : *amd;
}

Result<ResourcesStatus> ComputePodGroupStatus(const PodGroupInputs& in) {
  ResourceList requested, allocated;
  for (const PodFacts* p : SortedPods(in.pods)) {
    if (Active(*p)) {
      auto r = Requested(*p);
      if (!r.ok()) return r.error();
      requested = Sum(requested, *r);
    }
    if (Allocated(*p)) {
      auto received = ReceivedFraction(*p, in);
      if (!received.ok()) return received.error();
      allocated = Sum(allocated, Sum(p->container_requests, *received));
    }
  }
  static const std::vector<PriorityClassFacts> kNone;
  const auto& classes = in.priority_classes ? *in.priority_classes : kNone;
  ResourcesStatus s;
  s.requested = Texts(requested);
  s.allocated = Texts(allocated);
  s.allocated_non_preemptible = IsPreemptible(*in.pod_group, classes)
                                    ? in.pod_group->status.allocated_non_preemptible
                                    : s.allocated;
  return s;
}

std::string PodGroupStatusPatch(const ResourcesStatus& held, const ResourcesStatus& next) {
  if (held == next) return "{}";
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::Str(w, "status");
    w.StartObject();
    k8s::Str(w, "resourcesStatus");
    w.StartObject();
    WriteListPatch(w, "allocated", held.allocated, next.allocated);
    WriteListPatch(w, "allocatedNonPreemptible", held.allocated_non_preemptible,
                   next.allocated_non_preemptible);
    WriteListPatch(w, "requested", held.requested, next.requested);
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
}

}  // namespace kai::controllers
