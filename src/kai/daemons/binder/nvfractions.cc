#include "kai/daemons/binder/nvfractions.h"

#include "kai/core/k8s/json_body.h"
#include "kai/core/k8s/nvfractions.h"

namespace kai::binder {
namespace {

namespace res = k8s::resources;

nvfractions::PodFacts Facts(const PodView& pod) {
  nvfractions::PodFacts facts;
  for (const auto& [key, value] : pod.annotations) {
    if (nvfractions::Relevant(key)) facts.annotations.push_back({key, value});
  }
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const ContainerView& c : *list) facts.containers.push_back(c.name);
  }
  return facts;
}

Status PatchDevices(const k8s::ApiClient& client, const PodView& pod, const std::string& key,
                    std::optional<std::string> value) {
  k8s::MetaPatch patch;
  patch.annotations.push_back({key, std::move(value)});
  const std::string path = k8s::ObjectPath(res::kPod, pod.ns, pod.name);
  const k8s::HttpResponse r =
      client.Patch(path, k8s::MetadataMergePatch(patch), k8s::PatchType::kMerge);
  if (r.ok() || (r.status == 404 && !patch.annotations[0].second)) return Ok();
  return Error{"Pod " + pod.Ref() + ": metadata.annotations." + key + ": " +
               k8s::Describe({"PATCH", path}, r)};
}

}  // namespace

Result<std::optional<std::string>> NvFractionsContainer(const PodView& pod) {
  nvfractions::PodFacts facts = Facts(pod);
  if (!nvfractions::HasNvFractions(facts.annotations)) return std::optional<std::string>();
  const nvfractions::Parsed parsed = nvfractions::ParseNvFractions(facts);
  if (parsed.error) {
    return Error{"Pod " + pod.Ref() + ": " + parsed.error->field + ": " + parsed.error->message};
  }
  return std::optional<std::string>(parsed.request->container);
}

std::string DevicesValue(const std::vector<std::string>& gpu_ids) {
  std::string out;
  for (const std::string& id : gpu_ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

Status WriteNvFractionsDevices(const k8s::ApiClient& client, const PodView& pod,
                               const std::string& container,
                               const std::vector<std::string>& gpu_ids) {
  const std::string key = nvfractions::DevicesKey(container);
  const std::string value = DevicesValue(gpu_ids);
  if (auto it = pod.annotations.find(key); it != pod.annotations.end() && it->second == value) {
    return Ok();
  }
  return PatchDevices(client, pod, key, value);
}

Status RemoveNvFractionsDevices(const k8s::ApiClient& client, const PodView& pod,
                                const std::string& container) {
  return PatchDevices(client, pod, nvfractions::DevicesKey(container), std::nullopt);
}

}  // namespace kai::binder
