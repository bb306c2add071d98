#include "kai/daemons/binder/objects.h"

#include <charconv>

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/keys.h"

namespace kai::binder {
namespace {

std::map<std::string, std::string> StringMap(const doc::Node& m) {
  std::map<std::string, std::string> out;
  for (const auto& e : m.Entries())
    out[std::string(e.first.Scalar())] = std::string(e.second.Scalar());
  return out;
}

std::vector<ContainerView> Containers(const doc::Node& list) {
  std::vector<ContainerView> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const doc::Node c = list[i];
    ContainerView v;
    v.name = std::string(c["name"].Scalar());
    const doc::Node env = c["env"];
    for (size_t j = 0; j < env.size(); ++j) {
      if (env[j]["name"].Scalar() == keys::kNvidiaVisibleDevices &&
          env[j]["valueFrom"]["configMapKeyRef"].IsMap()) {
        v.visible_devices_from_config_map = true;
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Tolerations as JSON again, with their fields' types (the document keeps scalars as text).
std::string TolerationsJson(const doc::Node& list) {
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartArray();
    for (size_t i = 0; i < list.size(); ++i) {
      const doc::Node t = list[i];
      w.StartObject();
      for (std::string_view f : {"key", "operator", "value", "effect"}) {
        if (t[f].IsScalar()) k8s::KeyStr(w, f, t[f].Scalar());
      }
      if (t["tolerationSeconds"].IsScalar()) {
        int64_t v = 0;
        const std::string_view s = t["tolerationSeconds"].Scalar();
        if (std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc()) {
          k8s::Str(w, "tolerationSeconds");
          w.Int64(v);
        }
      }
      w.EndObject();
    }
    w.EndArray();
  });
}

void ReadBoundCondition(const doc::Node& conditions, PodView& p) {
  for (size_t i = 0; i < conditions.size(); ++i) {
    const doc::Node c = conditions[i];
    if (c["type"].Scalar() != "PodBound") continue;
    p.bound_status = std::string(c["status"].Scalar());
    p.bound_reason = std::string(c["reason"].Scalar());
    p.bound_message = std::string(c["message"].Scalar());
  }
}

void ReadResourceClaimNames(const doc::Node& claims, const doc::Node& statuses, PodView& p) {
  for (size_t i = 0; i < claims.size(); ++i) {
    // Kubernetes 1.26 to 1.30 wrote the reference under `source`.
    const doc::Node ref = claims[i]["source"].IsMap() ? claims[i]["source"] : claims[i];
    const doc::Node name = ref["resourceClaimName"];
    if (name.IsScalar() && !name.Scalar().empty()) {
      p.resource_claim_names[std::string(claims[i]["name"].Scalar())] = std::string(name.Scalar());
    }
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    const doc::Node name = statuses[i]["resourceClaimName"];
    if (name.IsScalar() && !name.Scalar().empty()) {
      p.resource_claim_names.emplace(std::string(statuses[i]["name"].Scalar()),
                                     std::string(name.Scalar()));
    }
  }
}

}  // namespace

Result<PodView> ReadPod(const doc::Node& pod) {
  const doc::Node md = pod["metadata"], spec = pod["spec"];
  PodView p;
  p.ns = std::string(md["namespace"].Scalar());
  p.name = std::string(md["name"].Scalar());
  if (p.name.empty()) return Error{"Pod: metadata.name: missing"};
  if (!spec.IsMap()) return Error{"Pod " + p.Ref() + ": spec: missing"};
  p.uid = std::string(md["uid"].Scalar());
  p.resource_version = std::string(md["resourceVersion"].Scalar());
  p.deleting = md["deletionTimestamp"].IsScalar();
  p.labels = StringMap(md["labels"]);
  p.annotations = StringMap(md["annotations"]);
  if (md["ownerReferences"].size() > 0) {
    p.owner_name = std::string(md["ownerReferences"][0]["name"].Scalar());
  }
  p.node_name = std::string(spec["nodeName"].Scalar());
  p.phase = std::string(pod["status"]["phase"].Scalar());
  p.tolerations_json = TolerationsJson(spec["tolerations"]);
  p.containers = Containers(spec["containers"]);
  p.init_containers = Containers(spec["initContainers"]);
  if (p.containers.empty()) return Error{"Pod " + p.Ref() + ": spec.containers: empty"};
  const doc::Node volumes = spec["volumes"];
  for (size_t i = 0; i < volumes.size(); ++i) {
    const doc::Node claim = volumes[i]["persistentVolumeClaim"]["claimName"];
    if (claim.IsScalar()) p.claim_names.emplace_back(claim.Scalar());
    // An ephemeral volume's claim is "<pod>-<volume>" (made by the ephemeral volume controller).
    if (volumes[i]["ephemeral"].IsMap() && volumes[i]["name"].IsScalar()) {
      p.claim_names.push_back(p.name + "-" + std::string(volumes[i]["name"].Scalar()));
    }
  }
  p.resource_claims = spec["resourceClaims"].size() > 0;
  ReadResourceClaimNames(spec["resourceClaims"], pod["status"]["resourceClaimStatuses"], p);
  ReadBoundCondition(pod["status"]["conditions"], p);
  return p;
}

Result<PodView> ParsePod(const std::string& json) {
  auto d = doc::ParseJson(json);
  if (!d.ok()) return Error{"Pod: " + d.error().message};
  if (d->Roots().empty()) return Error{"Pod: empty answer"};
  return ReadPod(d->Roots()[0]);
}

std::vector<std::string> PodView::GpuGroups() const {
  std::vector<std::string> out;
  if (auto it = labels.find(std::string(keys::kGpuGroupLabel)); it != labels.end()) {
    out.push_back(it->second);
  }
  for (const auto& [k, v] : labels) {
    if (k.rfind(keys::kMultiGpuGroupLabelPrefix, 0) == 0 && !v.empty()) out.push_back(v);
  }
  return out;
}

bool PodView::MultiFraction() const {
  auto it = annotations.find(std::string(keys::kGpuFractionNumDevices));
  if (it == annotations.end()) return false;
  int64_t n = 0;
  const std::string& s = it->second;
  return std::from_chars(s.data(), s.data() + s.size(), n).ec == std::errc() && n > 1;
}

Result<ContainerRef> FractionContainer(const PodView& pod) {
  auto it = pod.annotations.find(std::string(keys::kGpuFractionContainerName));
  if (it == pod.annotations.end()) return ContainerRef{&pod.containers[0], 0, false};
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    if (pod.init_containers[i].name == it->second) {
      return ContainerRef{&pod.init_containers[i], static_cast<int>(i), true};
    }
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    if (pod.containers[i].name == it->second) {
      return ContainerRef{&pod.containers[i], static_cast<int>(i), false};
    }
  }
  return Error{"Pod " + pod.Ref() + ": annotation " + std::string(keys::kGpuFractionContainerName) +
               ": no container named " + it->second};
}

Result<SharingConfigMaps> SharingConfigMapNames(const PodView& pod, const ContainerRef& c) {
  auto it = pod.annotations.find(std::string(keys::kSharedGpuConfigMapAnnotation));
  if (it == pod.annotations.end() || it->second.empty()) {
    return Error{"Pod " + pod.Ref() + ": annotation " +
                 std::string(keys::kSharedGpuConfigMapAnnotation) +
                 " is missing (the admission webhook sets it on GPU-sharing pods)"};
  }
  SharingConfigMaps out;
  out.capabilities = it->second + "-" + (c.init ? "i" : "") + std::to_string(c.index);
  out.direct_env = out.capabilities + "-evar";
  return out;
}

bool IsSharedGpu(const BindRequestObject& br) { return br.received_resource_type == "Fraction"; }

}  // namespace kai::binder
