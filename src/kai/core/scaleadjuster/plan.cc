#include "kai/core/scaleadjuster/plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/pod_security.h"
#include "kai/core/resource/quantity.h"
#include "kai/core/scaleadjuster/calculator.h"

namespace kai::scaleadjuster {
namespace {

using PodIndex = std::map<std::string, const PodFacts*>;

PodIndex IndexPods(const std::vector<PodFacts>& pods) {
  PodIndex index;
  for (const PodFacts& p : pods) index.emplace(p.Key(), &p);
  return index;
}

std::string Label(const PodFacts& pod, std::string_view key) {
  auto it = pod.labels.find(key);
  return it == pod.labels.end() ? "" : it->second;
}

std::string UnneededIn(const PodFacts& scaling, const PodIndex& index) {
  if (scaling.phase == "Succeeded") return "it completed";
  const std::string ns = Label(scaling, kSharedGpuPodNamespace);
  const std::string name = Label(scaling, kSharedGpuPodName);
  if (ns.empty() || name.empty()) return "it names no fractional pod (labels missing)";
  const std::string key = ns + "/" + name;
  auto it = index.find(key);
  if (it == index.end()) return "pod " + key + " is gone or bound";
  const PodFacts& pod = *it->second;
  if (!pod.node_name.empty()) return "pod " + key + " is bound to " + pod.node_name;
  if (pod.Finished()) return "pod " + key + " finished";
  if (pod.scheduled && !pod.Unschedulable()) return "pod " + key + " is no longer unschedulable";
  return "";
}

bool ByNamespaceThenName(const PodFacts* a, const PodFacts* b) {
  if (a->ns != b->ns) return a->ns < b->ns;
  return a->name < b->name;
}

void WriteRequests(k8s::JsonWriter& w, const PodFacts& pod, int64_t devices, bool with_cpu_mem) {
  w.StartObject();
  k8s::KeyStr(w, keys::kGpuResource, std::to_string(devices));
  if (with_cpu_mem) {
    k8s::KeyStr(w, "cpu", FormatMilli(pod.cpu_milli));
    k8s::KeyStr(w, "memory", std::to_string(pod.memory_bytes));
  }
  w.EndObject();
}

void WriteContainer(k8s::JsonWriter& w, const AdjusterConfig& c, const PodFacts& pod,
                    int64_t devices) {
  w.StartObject();
  k8s::KeyStr(w, "name", kScalingPodContainer);
  k8s::KeyStr(w, "image", c.image);
  k8s::KeyStr(w, "imagePullPolicy", "IfNotPresent");
  k8s::Str(w, "resources");
  w.StartObject();
  k8s::Str(w, "requests");
  WriteRequests(w, pod, devices, pod.has_requests);
  k8s::Str(w, "limits");
  WriteRequests(w, pod, devices, false);
  w.EndObject();
  k8s::Str(w, "securityContext");
  w.RawValue(k8s::kRestrictedContainerSecurityContext.data(),
             k8s::kRestrictedContainerSecurityContext.size(), rapidjson::kObjectType);
  w.EndObject();
}

void WriteRaw(k8s::JsonWriter& w, std::string_view key, const std::string& json,
              rapidjson::Type type) {
  if (json.empty()) return;
  k8s::Str(w, key);
  w.RawValue(json.data(), json.size(), type);
}

void WriteSpec(k8s::JsonWriter& w, const AdjusterConfig& c, const PodFacts& pod, int64_t devices) {
  w.StartObject();
  WriteRaw(w, "affinity", pod.affinity_json, rapidjson::kObjectType);
  WriteRaw(w, "tolerations", pod.tolerations_json, rapidjson::kArrayType);
  WriteRaw(w, "nodeSelector", pod.node_selector_json, rapidjson::kObjectType);
  k8s::KeyStr(w, "restartPolicy", "OnFailure");
  k8s::KeyStr(w, "serviceAccountName", c.service_account);
  // Restricted, as the reservation pods, so that kai-scale-adjust enforces that level.
  k8s::Str(w, "securityContext");
  w.RawValue(k8s::kRestrictedPodSecurityContext.data(), k8s::kRestrictedPodSecurityContext.size(),
             rapidjson::kObjectType);
  k8s::Str(w, "containers");
  w.StartArray();
  WriteContainer(w, c, pod, devices);
  w.EndArray();
  w.EndObject();
}

// Scaling pods still needed, and what to do with the others.
std::vector<const PodFacts*> Prune(const std::vector<PodFacts>& scaling, const PodIndex& index,
                                   AdjustPlan& plan) {
  std::vector<const PodFacts*> sorted, remaining;
  for (const PodFacts& s : scaling) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(), ByNamespaceThenName);
  for (const PodFacts* s : sorted) {
    // Being deleted: neither deleted again (that would restart the cool-down on every pass
    // until it is gone) nor counted.
    if (s->terminating) continue;
    if (std::string why = UnneededIn(*s, index); !why.empty()) {
      plan.deletes.push_back({s->name, why});
      continue;
    }
    remaining.push_back(s);
    if (!s->scheduled && s->node_name.empty()) plan.status_patches.push_back(s->name);
  }
  return remaining;
}

// KAI's createNewScalingPods: a pod gets a scaling pod when the scaling pods' GPUs fall short of
// what all the unschedulable fractions need, or when it needs more devices than any of them has.
// `names`: every scaling pod's (a terminating one's name is not free yet).
void PlanCreates(const AdjusterConfig& c, const std::vector<const PodFacts*>& candidates,
                 const std::vector<const PodFacts*>& existing, std::set<std::string> names,
                 AdjustPlan& plan) {
  NeededDevices needed = CountNeededDevices(candidates, c.memory_fraction_centi);
  for (auto& line : needed.skipped) plan.log.push_back("skipped: " + line);
  if (needed.devices == 0) return;
  int64_t sum = SumScalingDevices(existing), most = MaxScalingDevices(existing);
  for (size_t i : needed.to_scale) {
    const PodFacts& pod = *candidates[i];
    const std::string name = ScalingPodName(pod.ns, pod.name);
    if (names.count(name)) continue;
    const int64_t devices = pod.gpu_sharing.num_devices;
    if (needed.devices <= sum && devices <= most) {
      plan.log.push_back("no scaling pod for " + pod.Key() + ": already scaling up");
      continue;
    }
    plan.creates.push_back({name, pod.Key(), devices, ScalingPodJson(c, pod, devices)});
    names.insert(name);
    sum += devices;
    most = std::max(most, devices);
  }
}

}  // namespace

std::string ScalingPodName(const std::string& ns, const std::string& name) {
  return ns + "-" + name;
}

std::string ScalingPodJson(const AdjusterConfig& c, const PodFacts& pod, int64_t devices) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::KeyStr(w, "apiVersion", "v1");
    k8s::KeyStr(w, "kind", "Pod");
    k8s::Str(w, "metadata");
    w.StartObject();
    k8s::KeyStr(w, "name", ScalingPodName(pod.ns, pod.name));
    k8s::KeyStr(w, "namespace", c.ns);
    k8s::Str(w, "labels");
    w.StartObject();
    k8s::KeyStr(w, keys::kAppLabel, c.app_label);
    k8s::KeyStr(w, kSharedGpuPodName, pod.name);
    k8s::KeyStr(w, kSharedGpuPodNamespace, pod.ns);
    w.EndObject();
    w.EndObject();
    k8s::Str(w, "spec");
    WriteSpec(w, c, pod, devices);
    w.EndObject();
  });
}

std::vector<const PodFacts*> UnschedulableFractionalPods(const AdjusterConfig& c,
                                                         const std::vector<PodFacts>& pods) {
  std::vector<const PodFacts*> out;
  for (const PodFacts& p : pods) {
    if (!p.node_name.empty() || p.scheduler_name != c.scheduler_name) continue;
    if (!p.AnnotatedFractional() || p.Finished() || !p.Unschedulable()) continue;
    out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), ByNamespaceThenName);
  return out;
}

std::string UnneededBecause(const PodFacts& scaling, const std::vector<PodFacts>& pods) {
  return UnneededIn(scaling, IndexPods(pods));
}

AdjustPlan PlanAdjustment(const AdjusterConfig& c, const std::vector<PodFacts>& pods,
                          const std::vector<PodFacts>& scaling, UnixSeconds now,
                          std::optional<UnixSeconds> last_scale_down) {
  AdjustPlan plan;
  std::vector<const PodFacts*> remaining = Prune(scaling, IndexPods(pods), plan);
  if (!plan.deletes.empty()) last_scale_down = now;
  if (last_scale_down && now - *last_scale_down < c.cool_down_seconds) {
    plan.in_cool_down = true;
    plan.cool_down_ends = *last_scale_down + c.cool_down_seconds;
    return plan;
  }
  std::set<std::string> names;
  for (const PodFacts& s : scaling) names.insert(s.name);
  PlanCreates(c, UnschedulableFractionalPods(c, pods), remaining, std::move(names), plan);
  return plan;
}

}  // namespace kai::scaleadjuster
