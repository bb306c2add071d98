#include "kai/core/scaleadjuster/pod_facts.h"

#include <array>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/nvfractions.h"
#include "kai/core/resource/quantity.h"

namespace kai::scaleadjuster {
namespace {

// The integer fields of the subtrees copied (weights of preferred terms, toleration seconds);
// every other scalar there is a string in the Pod schema.
constexpr std::array<std::string_view, 4> kIntegerPaths = {
    "tolerations[].tolerationSeconds",
    "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight",
    "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight",
    "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight",
};

bool IsIntegerPath(const std::string& path) {
  for (std::string_view p : kIntegerPaths) {
    if (p == path) return true;
  }
  return false;
}

void WriteScalar(k8s::JsonWriter& w, std::string_view text, const std::string& path) {
  if (IsIntegerPath(path)) {
    if (auto v = ParseQuantity(text, 0); v.ok() && std::to_string(*v) == text) {
      w.Int64(*v);
      return;
    }
  }
  k8s::Str(w, text);
}

void WriteNode(k8s::JsonWriter& w, const doc::Node& n, const std::string& path) {
  switch (n.type()) {
    case doc::Type::kScalar:
      WriteScalar(w, n.Scalar(), path);
      return;
    case doc::Type::kMap:
      w.StartObject();
      for (const auto& e : n.Entries()) {
        k8s::Str(w, e.first.Scalar());
        WriteNode(w, e.second, path + "." + std::string(e.first.Scalar()));
      }
      w.EndObject();
      return;
    case doc::Type::kSequence:
      w.StartArray();
      for (size_t i = 0; i < n.size(); ++i) WriteNode(w, n[i], path + "[]");
      w.EndArray();
      return;
    default:
      w.Null();
  }
}

Result<int64_t> Quantity(const doc::Node& n, int scale, const std::string& field,
                         const std::string& ref) {
  if (!n.IsDefined() || n.IsNull()) return int64_t{0};
  auto q = ParseQuantity(n.Scalar(), scale);
  if (!q.ok()) return Error{ref + ": " + field + ": " + q.error().message};
  return q;
}

Status ReadContainers(const doc::Node& containers, const std::string& ref, PodFacts& f) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const std::string path = "spec.containers[" + std::to_string(i) + "].resources.requests";
    const doc::Node req = containers[i]["resources"]["requests"];
    if (!req.IsMap()) continue;
    f.has_requests = true;
    auto cpu = Quantity(req["cpu"], 3, path + ".cpu", ref);
    if (!cpu.ok()) return cpu.error();
    auto mem = Quantity(req["memory"], 0, path + ".memory", ref);
    if (!mem.ok()) return mem.error();
    f.cpu_milli += *cpu;
    f.memory_bytes += *mem;
    if (i == 0) {
      auto gpu =
          Quantity(req[keys::kGpuResource], 0, path + "." + std::string(keys::kGpuResource), ref);
      if (!gpu.ok()) return gpu.error();
      f.gpu_request = *gpu;
    }
  }
  return Ok();
}

std::optional<PodCondition> ScheduledCondition(const doc::Node& conditions) {
  for (size_t i = 0; i < conditions.size(); ++i) {
    if (conditions[i]["type"].Scalar() == "PodScheduled") {
      return PodCondition{std::string(conditions[i]["status"].Scalar()),
                          std::string(conditions[i]["reason"].Scalar())};
    }
  }
  return std::nullopt;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out;
}

// The fields kai's pod decoder reads (meta, scheduler, node, phase, the GPU share).
void ReadDecoded(const doc::Node& pod, const std::string& source, PodFacts& f) {
  ClusterState scratch;
  const Status decoded = DecodeObject(pod, "v1", "Pod", source, scratch);
  if (scratch.pods.empty()) {
    f.decode_error = decoded.ok() ? "not decoded" : JoinLines(ProblemsOf(decoded));
    return;
  }
  const PodObject& p = scratch.pods.front();
  f.labels = p.meta.labels;
  f.annotations = p.meta.annotations;
  f.scheduler_name = std::string(p.scheduler_name);
  f.node_name = std::string(p.node_name);
  f.phase = std::string(p.phase);
  f.terminating = p.meta.deletion.has_value();
  f.gpu_sharing = p.gpu_sharing;
  if (!decoded.ok()) f.decode_error = JoinLines(ProblemsOf(decoded));
}

}  // namespace

bool PodFacts::AnnotatedFractional() const {
  for (std::string_view key : {keys::kGpuFraction, keys::kGpuMemory}) {
    auto it = annotations.find(key);
    if (it != annotations.end() && !it->second.empty()) return true;
  }
  // NvFractions (k8s/nvfractions.h): per-container GPU memory.
  for (const auto& [key, value] : annotations) {
    if (!value.empty() && nvfractions::HasNvFractions({{key, value}})) return true;
  }
  return false;
}

bool PodFacts::Unschedulable() const {
  return scheduled && scheduled->status == "False" && scheduled->reason == "Unschedulable";
}

std::string SubtreeJson(const doc::Node& node, const std::string& path) {
  if (!node.IsDefined() || node.IsNull()) return "";
  return k8s::Json([&](k8s::JsonWriter& w) { WriteNode(w, node, path); });
}

Result<PodFacts> ReadPodFacts(const doc::Node& pod, const std::string& source) {
  PodFacts f;
  const doc::Node meta = pod["metadata"];
  f.ns = std::string(meta["namespace"].Scalar());
  f.name = std::string(meta["name"].Scalar());
  if (f.name.empty()) return Error{source + ": Pod: metadata.name: missing"};
  const std::string ref = source + ": Pod " + f.Key();
  ReadDecoded(pod, source, f);
  const doc::Node spec = pod["spec"];
  if (Status s = ReadContainers(spec["containers"], ref, f); !s.ok()) return s.error();
  f.scheduled = ScheduledCondition(pod["status"]["conditions"]);
  f.affinity_json = SubtreeJson(spec["affinity"], "affinity");
  f.tolerations_json = SubtreeJson(spec["tolerations"], "tolerations");
  f.node_selector_json = SubtreeJson(spec["nodeSelector"], "nodeSelector");
  return f;
}

}  // namespace kai::scaleadjuster
