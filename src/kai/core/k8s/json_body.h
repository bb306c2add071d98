#pragma once
// Request bodies kai writes to the API server, built with RapidJSON's writer: the small helpers
// every writer uses, and the bodies more than one front end writes (a pod condition patch, a
// core/v1 Event).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kai/core/model/dra.h"
#include "kai/core/model/numa.h"
#include "kai/core/util/time.h"

namespace kai::k8s {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void Str(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

inline void KeyStr(JsonWriter& w, std::string_view k, std::string_view v) {
  Str(w, k);
  Str(w, v);
}

template <class F>
std::string Json(F&& build) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  build(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// A strategic merge patch of one pod condition (conditions merge by type).
std::string PodConditionPatch(std::string_view type, std::string_view status,
                              std::string_view reason, const std::string& message, UnixSeconds now);

// {"metadata":{"labels":{k:v|null,...}}}: a merge patch setting (or, with a null value,
// removing) labels; `annotations` likewise.
struct MetaPatch {
  std::vector<std::pair<std::string, std::optional<std::string>>> labels, annotations;
};
std::string MetadataMergePatch(const MetaPatch& p);

// What an Event is about and says.
struct EventSpec {
  std::string api_version, kind, ns, name, uid;  // the involved object
  std::string type, reason, message;             // type: Normal or Warning
  std::map<std::string, std::string> annotations;
  std::string component;  // source.component and reportingComponent
};
// A core/v1 Event, named after its object plus `seq` (unique within this process).
std::string EventBody(const EventSpec& e, UnixSeconds now, uint64_t seq);

// "allocation": a DRA allocation result (resource.k8s.io v1 AllocationResult): the devices, their
// driver configuration (devices.config, when any) and, when `node` is not empty, a node selector
// naming it (as the structured allocator writes it).
void AllocationJson(JsonWriter& w, const std::vector<AllocatedDevice>& devices,
                    const std::vector<DeviceConfig>& config, const std::string& node);
// One entry of devices.config: {source (allocations only), requests, opaque: {driver,
// parameters}}; `parameters` is written as the JSON it is.
void DeviceConfigJson(JsonWriter& w, const DeviceConfig& c, bool with_source);

// "<key>": DRA device requests, each the `exactly` form (deviceClassName, ExactCount, count).
void DeviceRequestsJson(JsonWriter& w, std::string_view key,
                        const std::vector<DeviceRequestSpec>& requests);
// "<key>": which device request serves each container's extended resource
// ({containerName, resourceName, requestName}, as Kubernetes' ContainerExtendedResourceRequest).
void RequestMappingsJson(JsonWriter& w, std::string_view key,
                         const std::vector<ContainerRequestMapping>& mappings);

// A NUMA placement record as an array of {zone, amount} (amount a Kubernetes resource list: cpu
// and GPUs from milli-units, the others whole): BindRequest spec.predictedNUMAZones, and the
// pod's kai.scheduler/numa-placement-predicted annotation (NumaRecordText).
void NumaZonesJson(JsonWriter& w, const NumaPlacementRecord& zones);
std::string NumaRecordText(const NumaPlacementRecord& zones);

}  // namespace kai::k8s
