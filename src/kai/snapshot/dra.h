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
#include <string>
#include <unordered_map>
#include <vector>

#include "kai/model/cluster.h"

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
  std::vector<DeviceRequestSpec> requests;        // the claim's (a template's for generated names)
  std::vector<const DeviceClassObject*> classes;  // each request's class (null: none such)
  int64_t gpus = 0;                               // GPU devices asked (KAI's counting)
  bool gpu = false;                               // some request's class names a GPU
  bool held = false;                              // allocated and in use: bound to `nodes`
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

struct DraPod {
  std::vector<DraPodClaim> claims;
  int64_t charged_milli_gpu = 0;  // GPUs of the claims it owns
};

// What a placed pod's claim got (BindRequest spec.resourceClaimAllocations): its devices, and
// the node they are on ("" when they are not bound to one).
struct DraClaimResult {
  std::string name;  // the pod's name for the claim (spec.resourceClaims[].name)
  std::vector<AllocatedDevice> devices;
  std::string node;
};

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

struct DraView {
  std::vector<DraClaim> claims;
  // By claim: its state in the session (the dynamicresources plugin's; empty without it).
  std::vector<DraClaimSession> session;
  std::vector<std::vector<DraDevice>> node_devices;   // by node id
  std::vector<int64_t> node_gpus;                     // GPU devices per node id
  std::unordered_map<const PodObject*, DraPod> pods;  // pods with spec.resourceClaims
  std::unordered_map<std::string, const DeviceClassObject*> classes;
  const DraPod* PodOf(const PodObject& pod) const {
    auto it = pods.find(&pod);
    return it == pods.end() ? nullptr : &it->second;
  }
};

// What the pod's claims hold in the session, for its BindRequest (empty without a session state).
std::vector<DraClaimResult> ClaimResults(const DraView& view, const Snapshot& snap, int32_t pod);

// Builds the view once the snapshot's nodes exist; the pods' indices are those of state.pods.
std::shared_ptr<DraView> BuildDraView(const ClusterState& state, const Snapshot& snap);
// Adds the view's GPU devices to the nodes' allocatable and idle GPUs.
void AddDraGpusToNodes(const DraView& view, Snapshot& snap);

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
