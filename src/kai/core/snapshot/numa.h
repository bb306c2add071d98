#pragma once
// NUMA zones on the snapshot (KAI's numa plugin arithmetic, kept below the plugins as all fit
// arithmetic is): each node's zones with a live per-zone ledger of what is still available, each
// pod's per-zone placement, and the kubelet Topology Manager's admission rules (single-numa-node,
// restricted, best-effort; pod or container scope) that decide whether and where a pod aligns.
//
// The ledger: a zone's available is its allocatable less the placements of the active-allocated
// pods on it (KAI's reconstructed availability: the NRT's own `available` lags behind binds).
// A pod's placement comes from its record when the snapshot is built (observed annotation, then
// its BindRequest's predictedNUMAZones, then the predicted annotation; none: unknown, never
// guessed) and is predicted afresh when a session places it. Session moves keep the ledger
// (NumaLeave, NumaEnter); a Statement's rollback puts back the placement a pod had (NumaRestore).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/model/numa.h"
#include "kai/core/resource/resources.h"

namespace kai {

struct Snapshot;
struct ClusterState;

// A resource a node's zones report: a core resource or an extended one. `qos_gated`: cpu, memory
// and hugepages, which the kubelet aligns for Guaranteed pods only (devices: for every pod).
struct NumaResource {
  bool is_core = true;
  CoreResource core = CoreResource::kCpu;
  ResourceId scalar = 0;
  bool qos_gated = false;
  int64_t Of(const Resources& r) const { return is_core ? r.Get(core) : r.Scalar(scalar); }
  void Add(Resources& r, int64_t amount) const;
  std::string Name() const;
};

struct NumaZone {
  std::string_view name;
  Resources allocatable;
  Resources available;  // the ledger (kept live by the session)
  Resources reported;   // the NRT's own available
};

// Whether the kubelet would align the pod on the node, and where. `fits` false: no zone mask its
// policy admits (for best-effort: not coverable even across zones). `span`: zones used (1 when
// nothing aligned is asked). `best`: for a single-zone shortfall, the most of the first short
// resource one zone offers.
struct NumaFit {
  bool fits = true;
  int span = 1;
  NumaResource short_resource;
  int64_t need = 0, best = 0;
};

struct NodeNuma {
  NumaPolicy policy = NumaPolicy::kNone;
  NumaScope scope = NumaScope::kContainer;
  std::vector<NumaZone> zones;      // by ascending NUMA id (the number ending the zone name)
  std::vector<NumaResource> aware;  // the resources the zones report
  // Per aware resource: [k] = the sum of the k+1 largest zone allocatables (restricted's width).
  std::vector<std::vector<int64_t>> allocatable_prefix;
  // EvaluateNuma's last answer without charges: a session asks the same of every node for each
  // pod, predicate then score, and the pods of a job ask alike; valid while the request and the
  // zones' availability are those it was computed for (compared, so no change can go unseen).
  struct Memo {
    bool valid = false, empty_node = false;
    PodNumaRequest request;
    std::vector<Resources> available;  // by zone
    NumaFit fit;
  };
  mutable Memo memo;
};

// What a pod holds on one zone of its node.
struct NumaCharge {
  int32_t zone = 0;
  Resources amount;
  friend bool operator==(const NumaCharge&, const NumaCharge&) = default;
};

struct PodNuma {
  int32_t node = -1;                // the node the charges are on (-1: none)
  bool charged = false;             // the charges are taken from that node's ledger now
  bool restore = false;             // NumaRestore set it: the next NumaEnter keeps it
  std::vector<NumaCharge> charges;  // by zone; empty: not NUMA-aligned, or unknown
};

struct NumaState {
  std::vector<NodeNuma> topologies;
  std::vector<int32_t> node_topology;  // per node: index in topologies or -1; empty: no topology
  std::vector<PodNuma> pods;           // per pod; empty when no node has a topology
  int max_zones = 0;                   // the most zones a node has
  bool place = false;  // the numa plugin is on: pods a session places get predicted placements
  bool Any() const { return !topologies.empty(); }
  const NodeNuma* Of(int32_t node) const {
    if (node_topology.empty() || node < 0) return nullptr;
    const int32_t t = node_topology[static_cast<size_t>(node)];
    return t < 0 ? nullptr : &topologies[static_cast<size_t>(t)];
  }
};

// Fills snap.numa from the NodeResourceTopology objects of `state` and the pods' records (after
// the rest of the snapshot is built; the snapshot cache calls it after every update).
void BuildNuma(const ClusterState& state, Snapshot& snap);

// The numa plugin's arguments (KAI's): `ignore` (ignoreList) names resources the zones report but
// the kubelet does not align, dropped from every topology; without `reconstruct`
// (reconstructAvailable false) a scored node's ledger starts from the NRT's reported
// availability instead of allocatable less the placements (the placements still come back to
// it when their pods leave).
void ApplyNumaArguments(NumaState& numa, const std::vector<std::string>& ignore, bool reconstruct);

// KAI's shouldScore: the node's policy is modelled or best-effort, and the pod is Guaranteed or
// asks a device the zones report. KAI's shouldFilter: the same, on restricted and
// single-numa-node only (best-effort never rejects).
bool NumaScored(const NodeNuma& topo, const PodNumaRequest& req);
bool NumaFiltered(const NodeNuma& topo, const PodNumaRequest& req);

// The answer of EvaluateNuma (below): whether the kubelet would align the pod on the node.
// Against the ledger, or with `empty_node` against the zones' allocatable. With `charges`, the
// per-zone amounts drawn (lowest zone first) are written there.
NumaFit EvaluateNuma(const NodeNuma& topo, const PodNumaRequest& req, bool empty_node,
                     std::vector<NumaCharge>* charges);

// Session moves (framework/session_state.cc): before a pod leaves its place, and after it takes a
// new one (a placement predicted afresh, unless NumaRestore put one back).
void NumaLeave(Snapshot& snap, int32_t pod);
void NumaEnter(Snapshot& snap, int32_t pod);
// The pod's placement as a record (zones by name), for its BindRequest's predictedNUMAZones.
NumaPlacementRecord NumaRecordOf(const Snapshot& snap, int32_t pod);

// A Statement's rollback, before the move back: the placement the pod had before the operation.
void NumaRestore(Snapshot& snap, int32_t pod, PodNuma previous);

}  // namespace kai
