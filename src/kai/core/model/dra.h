#pragma once
// Dynamic Resource Allocation objects (resource.k8s.io v1; v1beta1 and v1beta2 are read into the
// same shapes): plain data, decoded by k8s/decode_dra.cc. The snapshot's view of them (which
// devices are free, what a pod asks) lives in snapshot/dra.h.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/model/meta.h"
#include "kai/core/util/interned_string.h"

namespace kai {

// spec.devices.requests[] of a claim or claim template (the `exactly` form; v1beta1's flat form
// reads the same). firstAvailable requests are kept as unsupported (`first_available`).
enum class DeviceAllocationMode : uint8_t { kExactCount, kAll };
struct DeviceRequestSpec {
  std::string name;
  std::string device_class;
  DeviceAllocationMode mode = DeviceAllocationMode::kExactCount;
  int64_t count = 1;                   // ExactCount (1 when unset)
  std::vector<std::string> selectors;  // CEL expressions, all must hold
  bool first_available = false;        // a firstAvailable request (kai does not allocate those)
  friend bool operator==(const DeviceRequestSpec&, const DeviceRequestSpec&) = default;
};

// One device of status.allocation.devices.results[].
struct AllocatedDevice {
  std::string request, driver, pool, device;
  friend bool operator==(const AllocatedDevice&, const AllocatedDevice&) = default;
};

// One entry of status.reservedFor.
struct ClaimConsumer {
  std::string resource, name, uid;
  friend bool operator==(const ClaimConsumer&, const ClaimConsumer&) = default;
};

// A typed device attribute value (int, bool, string or version, kept as written).
struct DeviceAttribute {
  enum class Kind : uint8_t { kInt, kBool, kString, kVersion } kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string string_value;
  friend bool operator==(const DeviceAttribute&, const DeviceAttribute&) = default;
};

// One device of a ResourceSlice. Attribute and capacity names are as written (a name without a
// domain is in the driver's domain); capacities are exact integers in the quantity's base unit.
struct SliceDevice {
  std::string name;
  std::map<std::string, DeviceAttribute> attributes;
  std::map<std::string, int64_t> capacity;
  friend bool operator==(const SliceDevice&, const SliceDevice&) = default;
};

// Driver configuration (resource.k8s.io DeviceConfiguration; kai reads the opaque form): the
// driver it is for and its parameters, a JSON object kept as compact JSON text (keys in the order
// written, strings and numbers as written; at most kMaxOpaqueParametersBytes). In a claim's
// spec.devices.config `requests` names the requests it applies to (empty: all of them); in an
// allocation (status.allocation.devices.config, a BindRequest's allocation) `source` says where it
// came from: FromClass (a request's DeviceClass) or FromClaim. A class's spec.config has neither.
enum class DeviceConfigSource : uint8_t { kClaim, kClass };
struct DeviceConfig {
  DeviceConfigSource source = DeviceConfigSource::kClaim;
  std::vector<std::string> requests;
  std::string driver;
  std::string parameters;  // compact JSON: an object
  friend bool operator==(const DeviceConfig&, const DeviceConfig&) = default;
};
// Kubernetes' limits: OpaqueParametersMaxLength, DeviceConfigMaxSize, AllocationConfigMaxSize.
inline constexpr size_t kMaxOpaqueParametersBytes = 10 * 1024;
inline constexpr size_t kMaxDeviceConfigs = 32;
inline constexpr size_t kMaxAllocationConfigs = 64;

// resource.k8s.io ResourceClaim.
struct ResourceClaimObject {
  ObjectMeta meta;
  std::vector<DeviceRequestSpec> requests;
  bool allocated = false;                       // status.allocation is set
  std::vector<AllocatedDevice> devices;         // status.allocation.devices.results
  std::vector<std::string> selector_nodes;      // status.allocation.nodeSelector: metadata.name or
                                                // kubernetes.io/hostname values it allows
  bool selector_any_node = true;                // no (or an unreadable) allocation node selector
  std::vector<ClaimConsumer> reserved_for;      // status.reservedFor
  std::vector<DeviceConfig> config;             // spec.devices.config
  std::vector<DeviceConfig> allocation_config;  // status.allocation.devices.config
  friend bool operator==(const ResourceClaimObject&, const ResourceClaimObject&) = default;
};

struct ResourceClaimTemplateObject {
  ObjectMeta meta;
  std::vector<DeviceRequestSpec> requests;  // spec.spec.devices.requests
  std::vector<DeviceConfig> config;         // spec.spec.devices.config
  friend bool operator==(const ResourceClaimTemplateObject&,
                         const ResourceClaimTemplateObject&) = default;
};

struct DeviceClassObject {
  ObjectMeta meta;
  std::vector<std::string> selectors;  // spec.selectors[].cel.expression
  // spec.extendedResourceName (KEP-5004): pods asking this extended resource (and, always,
  // deviceclass.resource.kubernetes.io/<class name>) get devices of this class on nodes that do
  // not list the resource in their allocatable. "" when unset.
  std::string extended_resource_name;
  std::vector<DeviceConfig> config;  // spec.config: what every request of the class is given
  friend bool operator==(const DeviceClassObject&, const DeviceClassObject&) = default;
};

struct ResourceSliceObject {
  ObjectMeta meta;
  std::string driver, pool;
  std::string node_name;  // spec.nodeName ("" when the slice is not bound to one node)
  bool all_nodes = false;
  std::vector<SliceDevice> devices;
  friend bool operator==(const ResourceSliceObject&, const ResourceSliceObject&) = default;
};

// spec.resourceClaims[] of a pod, with the claim name resolved: resourceClaimName, or for a
// template the generated name from status.resourceClaimStatuses ("" while not generated yet).
struct PodClaimRef {
  std::string name;
  std::string claim_name;
  std::string template_name;
  bool FromTemplate() const { return !template_name.empty(); }
  friend bool operator==(const PodClaimRef&, const PodClaimRef&) = default;
};

// One extended resource (a name with a domain: nvidia.com/gpu, example.com/nic) a container
// asks, as KEP-5004's DRA-backed extended resources need it: which container (index in
// initContainers then containers), whether it runs to completion before the others start (an init
// container that is not a sidecar), the whole count asked, and the resource's position among the
// container's sorted request names (the device request is named container-<i>-request-<k>).
struct ContainerExtendedRequest {
  InternedString container;
  InternedString resource;
  int64_t count = 0;
  int32_t container_index = 0;
  int32_t key_index = 0;
  bool short_lived = false;
  friend bool operator==(const ContainerExtendedRequest&,
                         const ContainerExtendedRequest&) = default;
};

// A BindRequest's allocation of one claim (spec.resourceClaimAllocations[]): the pod's name for
// the claim (spec.resourceClaims[].name), its devices, the node they are on ("" when the
// allocation names none), and the driver configuration (allocation.devices.config: the classes'
// then the claim's, as Kubernetes' structured allocator lists them).
struct ClaimAllocation {
  std::string name;
  std::vector<AllocatedDevice> devices;
  std::string node;
  std::vector<DeviceConfig> config;
  friend bool operator==(const ClaimAllocation&, const ClaimAllocation&) = default;
};

// Which device request serves a container's extended resource (the pod status's
// extendedResourceClaimStatus.requestMappings[]).
struct ContainerRequestMapping {
  std::string container, resource, request;
  friend bool operator==(const ContainerRequestMapping&, const ContainerRequestMapping&) = default;
};

// A BindRequest's spec.extendedResourceClaimAllocation: the claim the binder creates for the pod's
// DRA-backed extended resources (its device requests), its allocation, and the mappings.
struct ExtendedClaimAllocation {
  std::vector<DeviceRequestSpec> requests;
  std::vector<ContainerRequestMapping> mappings;
  std::vector<AllocatedDevice> devices;
  std::string node;
  std::vector<DeviceConfig> config;  // allocation.devices.config: the classes' (FromClass)
  friend bool operator==(const ExtendedClaimAllocation&, const ExtendedClaimAllocation&) = default;
};

// The annotation marking the ResourceClaim the binder creates for a pod's DRA-backed extended
// resources (KEP-5004).
inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
// The implicit extended resource name of every DeviceClass: this prefix and the class name.
inline constexpr std::string_view kDeviceClassResourcePrefix =
    "deviceclass.resource.kubernetes.io/";

struct DraObjects {
  std::vector<ResourceClaimObject> claims;
  std::vector<ResourceClaimTemplateObject> templates;
  std::vector<DeviceClassObject> classes;
  std::vector<ResourceSliceObject> slices;
  bool empty() const {
    return claims.empty() && templates.empty() && classes.empty() && slices.empty();
  }
};

}  // namespace kai
