#pragma once
// The snapshot's view of Dynamic Resource Allocation (model/dra.h), KAI's way:
// - devices of ResourceSlices whose driver names a GPU ("gpu" in it, KAI's IsGPUDeviceClass)
//   add whole GPUs to their node's allocatable and idle nvidia.com/gpu;
// - a claim's GPU requests (ExactCount: count, All: 1; saturating) count as whole GPUs of its
//   pod's request, so queues, fair share and node accounting see them (the "GPU DRA overflow":
//   an absurd count is an absurd GPU request, which blocks only that pod);
// - a claim shared by several pods is charged once, to its owner: the first pod using it on a
//   node, else the first live pod naming it (docs/deviations.md: KAI charges queues per pod);
// - a claim allocated (status.allocation) and held (a pod using it runs, or its reservedFor
//   names a pod kai does not know) keeps its devices; an allocation nobody holds is stale and
//   the claim is allocated afresh.
// Device matching (class and request selectors, counts) is in MatchDevices; the session's
// bookkeeping of claims it allocates is the dynamicresources plugin's.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kai/core/model/cluster.h"

namespace kai {

struct Snapshot;
using DraNodeId = int32_t;  // = NodeId

// Whether a device class (or driver) name is a GPU's for accounting (KAI: contains "gpu").
bool IsGpuDeviceClassName(std::string_view name);

struct DraDevice {
  const ResourceSliceObject* slice = nullptr;
  const SliceDevice* device = nullptr;
  bool taken = false;  // held by an allocated claim when the snapshot was built
};

struct DraClaim {
  const ResourceClaimObject* obj = nullptr;
  std::span<const DeviceRequestSpec> requests;  // the claim's (a template's for generated names)
  std::span<const DeviceClassObject* const> classes;  // each request's class (null: none such)
  std::span<const DeviceConfig> config;  // spec.devices.config (the template's likewise)
  int64_t gpus = 0;                      // GPU devices asked (KAI's counting)
  bool gpu = false;                      // some request's class names a GPU
  bool held = false;                     // allocated and in use: bound to `nodes`
  bool implied = false;  // held by a pod on its node, no status.allocation: devices to choose
  std::vector<DraNodeId> nodes;                      // held: the nodes its devices are on / allowed
  std::vector<std::pair<DraNodeId, int32_t>> slots;  // held: its devices (node, device index)
  int32_t owner = -1;         // pod charged its GPUs (index into Snapshot::pods)
  int reserved = 0;           // status.reservedFor entries
  int foreign_consumers = 0;  // of those, pods kai does not know (allocated claims)
};

// One entry of a pod's spec.resourceClaims, resolved.
struct DraPodClaim {
  const PodClaimRef* ref = nullptr;
  int32_t claim = -1;  // index into DraView::claims; -1 when the claim does not exist
};

// One device request of a pod's DRA-backed extended resources (KEP-5004's "special claim", which
// the binder creates): named container-<i>-request-<k>, ExactCount of the resource's class.
struct DraExtendedRequest {
  DeviceRequestSpec spec;
  const DeviceClassObject* cls = nullptr;
  std::string_view resource;
  ResourceId resource_id = 0;  // unused for nvidia.com/gpu
  bool gpu = false;            // nvidia.com/gpu: GPU accounting counts it (devices free or not)
};

// Which device request serves a container's extended resource (pod.status's
// extendedResourceClaimStatus.requestMappings).
struct DraContainerMapping {
  std::string_view container, resource;
  std::string request;
};

struct DraPod {
  int32_t index = -1;                   // into ClusterState::pods
  std::span<const DraPodClaim> claims;  // storage: DraView::pod_claims
  int64_t charged_milli_gpu = 0;        // GPUs of the claims it owns
  // Its DRA-backed extended resources, for every resource a class maps (a node listing the
  // resource in its allocatable serves it through its device plugin instead), and the mappings.
  std::vector<DraExtendedRequest> extended;
  std::vector<DraContainerMapping> mappings;
  int32_t extended_claim = -1;  // the claim the binder made for them (a pod holding it), or -1
};

// What a placed pod's DRA-backed extended resources got (spec.extendedResourceClaimAllocation):
// the requests and mappings DRA serves on its node, the devices.
using DraExtendedResult = ExtendedClaimAllocation;

// What a placed pod's claim got (BindRequest spec.resourceClaimAllocations).
using DraClaimResult = ClaimAllocation;

// A device a claim holds in the session.
struct DraSlot {
  DraNodeId node = -1;
  int32_t device = -1;   // index into DraView::node_devices[node]
  int32_t request = -1;  // index of the claim's request it serves (-1: allocated before)
};

// A claim during the session (kept by the dynamicresources plugin).
struct DraClaimSession {
  int consumers = 0;   // pods using it now (and consumers kai does not know)
  int added = 0;       // consumers placed this session that reservedFor does not name
  bool bound = false;  // allocated (nodes empty: any node)
  std::vector<DraNodeId> nodes;
  std::vector<DraSlot> slots;  // devices it holds
};

// The devices a pod's DRA-backed extended resources hold in the session (one node).
struct DraExtendedSession {
  DraNodeId node = -1;
  std::vector<DraSlot> slots;  // request: index into DraPod::extended
};

struct DraView {
  std::vector<DraClaim> claims;
  // By claim: its state in the session (the dynamicresources plugin's; empty without it).
  std::vector<DraClaimSession> session;
  std::vector<std::vector<DraDevice>> node_devices;  // by node id
  std::vector<int64_t> node_gpus;                    // GPU devices per node id
  // Pods with spec.resourceClaims or DRA-backed extended resources; pod_slot[i]: the index in
  // `pods` of state.pods[i] (-1: none); pods_base: state.pods.data().
  std::vector<DraPod> pods;
  std::vector<int32_t> pod_slot;
  const PodObject* pods_base = nullptr;
  // The pools the pods' claims and the claims' classes view (sized once: never reallocated).
  std::vector<DraPodClaim> pod_claims;
  std::vector<const DeviceClassObject*> claim_classes;
  std::unordered_map<std::string, const DeviceClassObject*> classes;
  // Extended resource name -> its class: spec.extendedResourceName (the newest class of a name
  // wins, as Kubernetes' cache) and every class's deviceclass.resource.kubernetes.io/<name>.
  std::unordered_map<std::string_view, const DeviceClassObject*> extended_classes;
  std::vector<std::string> extended_names;  // the implicit names (extended_classes views them)
  // By pod id: the devices its extended resources hold in the session (the plugin's).
  std::unordered_map<int32_t, DraExtendedSession> extended_session;
  bool any_extended = false;  // some pod asks a DRA-backed extended resource
  const DraPod* PodOf(const PodObject& pod) const {
    const std::ptrdiff_t i = &pod - pods_base;
    if (!pods_base || i < 0 || i >= static_cast<std::ptrdiff_t>(pod_slot.size())) return nullptr;
    const int32_t slot = pod_slot[static_cast<size_t>(i)];
    return slot < 0 ? nullptr : &pods[static_cast<size_t>(slot)];
  }
};

// An allocation's driver configuration as Kubernetes' structured allocator (1.35) writes it: per
// request in order, its class's spec.config entries (FromClass) the first time the class is seen,
// naming the requests of that class; then each of the claim's spec.devices.config entries
// (FromClaim): once when it names no request, else once per claim request it names.
// `classes[i]` is requests[i]'s class (null: none); firstAvailable requests are skipped.
std::vector<DeviceConfig> AllocationConfig(std::span<const DeviceRequestSpec> requests,
                                           std::span<const DeviceClassObject* const> classes,
                                           std::span<const DeviceConfig> claim_config);

// What the pod's claims hold in the session, for its BindRequest (empty without a session state).
std::vector<DraClaimResult> ClaimResults(const DraView& view, const Snapshot& snap, int32_t pod);

// The same for its DRA-backed extended resources; nullopt when it has none on its node.
std::optional<DraExtendedResult> ExtendedResult(const DraView& view, const Snapshot& snap,
                                                int32_t pod);

// Whether `node` serves `r` through DRA: its Node object lists no such resource (KAI's
// podExtendedResourcesNeedingDRA).
bool NeedsDra(const Snapshot& snap, DraNodeId node, const DraExtendedRequest& r);

// Builds the view once the snapshot's nodes exist; the pods' indices are those of state.pods.
std::shared_ptr<DraView> BuildDraView(const ClusterState& state, const Snapshot& snap);
// Adds the view's GPU devices to the nodes' allocatable and idle GPUs, and makes each DRA-backed
// extended resource a node does not list unbounded there (kDraDecides): the DRA predicate, not
// the resource vector, decides it (KAI skips those dimensions in its fit and accounting).
void AddDraGpusToNodes(const DraView& view, Snapshot& snap);
inline constexpr int64_t kDraDecides = int64_t{1} << 40;

// Devices of a node for one request: the indices (into node_devices[node]) of up to `want`
// matching devices not in `taken` (All: every matching device, all of them required free).
// `unsupported` gets a CEL expression kai cannot evaluate.
struct DeviceMatch {
  std::vector<int32_t> devices;
  bool enough = false;
  std::string unsupported;
};
// With `count_taken`, taken devices count as if free (the caller counts them some other way).
DeviceMatch MatchDevices(const DraView& view, DraNodeId node, const DeviceRequestSpec& request,
                         const std::vector<bool>& taken, bool count_taken = false);
// The same into `out` (its storage reused), with the request's class resolved (null: none).
void MatchDevicesInto(const DraView& view, DraNodeId node, const DeviceRequestSpec& request,
                      const DeviceClassObject* cls, const std::vector<bool>& taken,
                      bool count_taken, DeviceMatch& out);

}  // namespace kai
