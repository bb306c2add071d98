#include "kai/core/k8s/json_body.h"

#include <cstdio>

#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::k8s {

std::string PodConditionPatch(std::string_view type, std::string_view status,
                              std::string_view reason, const std::string& message,
                              UnixSeconds now) {
  return Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "conditions");
    w.StartArray();
    w.StartObject();
    KeyStr(w, "type", type);
    KeyStr(w, "status", status);
    KeyStr(w, "reason", reason);
    KeyStr(w, "message", message);
    KeyStr(w, "lastTransitionTime", FormatRfc3339(now));
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndObject();
  });
}

namespace {

void NullableMap(JsonWriter& w, std::string_view key,
                 const std::vector<std::pair<std::string, std::optional<std::string>>>& m) {
  if (m.empty()) return;
  Str(w, key);
  w.StartObject();
  for (const auto& [k, v] : m) {
    Str(w, k);
    if (v) {
      Str(w, *v);
    } else {
      w.Null();
    }
  }
  w.EndObject();
}

}  // namespace

std::string MetadataMergePatch(const MetaPatch& p) {
  return Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "metadata");
    w.StartObject();
    NullableMap(w, "labels", p.labels);
    NullableMap(w, "annotations", p.annotations);
    w.EndObject();
    w.EndObject();
  });
}

std::string EventBody(const EventSpec& e, UnixSeconds now, uint64_t seq) {
  const std::string ns = e.ns.empty() ? "default" : e.ns;
  return Json([&](JsonWriter& w) {
    w.StartObject();
    KeyStr(w, "apiVersion", "v1");
    KeyStr(w, "kind", "Event");
    Str(w, "metadata");
    w.StartObject();
    char suffix[40];
    std::snprintf(suffix, sizeof suffix, ".%llx%04llx", static_cast<unsigned long long>(now),
                  static_cast<unsigned long long>(seq & 0xffff));
    KeyStr(w, "name", e.name + suffix);
    KeyStr(w, "namespace", ns);
    if (!e.annotations.empty()) {
      Str(w, "annotations");
      w.StartObject();
      for (const auto& [k, v] : e.annotations) KeyStr(w, k, v);
      w.EndObject();
    }
    w.EndObject();
    Str(w, "involvedObject");
    w.StartObject();
    KeyStr(w, "apiVersion", e.api_version);
    KeyStr(w, "kind", e.kind);
    KeyStr(w, "name", e.name);
    KeyStr(w, "namespace", e.ns);
    if (!e.uid.empty()) KeyStr(w, "uid", e.uid);
    w.EndObject();
    KeyStr(w, "reason", e.reason);
    KeyStr(w, "message", e.message);
    KeyStr(w, "type", e.type);
    Str(w, "source");
    w.StartObject();
    KeyStr(w, "component", e.component);
    w.EndObject();
    KeyStr(w, "reportingComponent", e.component);
    KeyStr(w, "firstTimestamp", FormatRfc3339(now));
    KeyStr(w, "lastTimestamp", FormatRfc3339(now));
    Str(w, "count");
    w.Int(1);
    w.EndObject();
  });
}

namespace {

void NodeSelectorOf(JsonWriter& w, const std::string& node) {
  Str(w, "nodeSelector");
  w.StartObject();
  Str(w, "nodeSelectorTerms");
  w.StartArray();
  w.StartObject();
  Str(w, "matchFields");
  w.StartArray();
  w.StartObject();
  KeyStr(w, "key", "metadata.name");
  KeyStr(w, "operator", "In");
  Str(w, "values");
  w.StartArray();
  Str(w, node);
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
}

}  // namespace

void DeviceConfigJson(JsonWriter& w, const DeviceConfig& c, bool with_source) {
  w.StartObject();
  if (with_source) {
    KeyStr(w, "source", c.source == DeviceConfigSource::kClass ? "FromClass" : "FromClaim");
  }
  if (!c.requests.empty()) {
    Str(w, "requests");
    w.StartArray();
    for (const std::string& r : c.requests) Str(w, r);
    w.EndArray();
  }
  Str(w, "opaque");
  w.StartObject();
  KeyStr(w, "driver", c.driver);
  Str(w, "parameters");
  if (c.parameters.empty()) {
    w.StartObject();
    w.EndObject();
  } else {
    w.RawValue(c.parameters.data(), c.parameters.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  w.EndObject();
}

// An allocation result: the devices, their configuration and, for node-local ones, a node
// selector naming the node (as the structured allocator writes it).
void AllocationJson(JsonWriter& w, const std::vector<AllocatedDevice>& devices,
                    const std::vector<DeviceConfig>& config, const std::string& node) {
  Str(w, "allocation");
  w.StartObject();
  Str(w, "devices");
  w.StartObject();
  Str(w, "results");
  w.StartArray();
  for (const AllocatedDevice& d : devices) {
    w.StartObject();
    KeyStr(w, "request", d.request);
    KeyStr(w, "driver", d.driver);
    KeyStr(w, "pool", d.pool);
    KeyStr(w, "device", d.device);
    w.EndObject();
  }
  w.EndArray();
  if (!config.empty()) {
    Str(w, "config");
    w.StartArray();
    for (const DeviceConfig& c : config) DeviceConfigJson(w, c, true);
    w.EndArray();
  }
  w.EndObject();
  if (!node.empty()) NodeSelectorOf(w, node);
  w.EndObject();
}

void DeviceRequestsJson(JsonWriter& w, std::string_view key,
                        const std::vector<DeviceRequestSpec>& requests) {
  Str(w, key);
  w.StartArray();
  for (const DeviceRequestSpec& r : requests) {
    w.StartObject();
    KeyStr(w, "name", r.name);
    Str(w, "exactly");
    w.StartObject();
    KeyStr(w, "deviceClassName", r.device_class);
    KeyStr(w, "allocationMode", "ExactCount");
    Str(w, "count");
    w.Int64(r.count);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

void RequestMappingsJson(JsonWriter& w, std::string_view key,
                         const std::vector<ContainerRequestMapping>& mappings) {
  Str(w, key);
  w.StartArray();
  for (const ContainerRequestMapping& m : mappings) {
    w.StartObject();
    KeyStr(w, "containerName", m.container);
    KeyStr(w, "resourceName", m.resource);
    KeyStr(w, "requestName", m.request);
    w.EndObject();
  }
  w.EndArray();
}

namespace {

void ResourceListJson(JsonWriter& w, const Resources& r) {
  w.StartObject();
  if (r.milli_cpu) KeyStr(w, "cpu", FormatMilli(r.milli_cpu));
  if (r.memory) KeyStr(w, "memory", std::to_string(r.memory));
  if (r.milli_gpu) KeyStr(w, keys::kGpuResource, FormatMilli(r.milli_gpu));
  for (const auto& [id, amount] : r.scalars) KeyStr(w, ResourceName(id), std::to_string(amount));
  w.EndObject();
}

}  // namespace

void NumaZonesJson(JsonWriter& w, const NumaPlacementRecord& zones) {
  w.StartArray();
  for (const NumaZoneAmount& z : zones) {
    w.StartObject();
    KeyStr(w, "zone", z.zone);
    Str(w, "amount");
    ResourceListJson(w, z.amount);
    w.EndObject();
  }
  w.EndArray();
}

std::string NumaRecordText(const NumaPlacementRecord& zones) {
  return Json([&](JsonWriter& w) { NumaZonesJson(w, zones); });
}

}  // namespace kai::k8s
