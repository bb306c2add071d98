#include "kai/core/snapshot/numa.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>
#include <utility>

#include "kai/core/snapshot/snapshot.h"

namespace kai {

void NumaResource::Add(Resources& r, int64_t amount) const {
  if (is_core) {
    r.Mutable(core) += amount;
  } else {
    r.SetScalar(scalar, r.Scalar(scalar) + amount);
  }
}

std::string NumaResource::Name() const {
  return is_core ? std::string(CoreResourceName(core)) : ResourceName(scalar);
}

namespace {

// ---- topology ----

// The number ending a zone's name ("node-3": 3), as exporters name NUMA nodes.
std::optional<int> NumaId(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == name.size()) return std::nullopt;
  int v = 0;
  const auto [p, ec] = std::from_chars(name.data() + i, name.data() + name.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

// The kubelet prefers the numerically lowest NUMA node among equally narrow hints: zones in
// ascending id make "lowest fitting zone" and "lowest satisfying mask" the kubelet's choice.
bool ZoneBefore(const NumaZone& a, const NumaZone& b) {
  const auto ia = NumaId(a.name), ib = NumaId(b.name);
  if (ia && ib && *ia != *ib) return *ia < *ib;
  if (ia.has_value() != ib.has_value()) return ia.has_value();
  return a.name < b.name;
}

void AddAware(std::vector<NumaResource>& aware, NumaResource r) {
  const auto same = [&](const NumaResource& o) {
    return o.is_core == r.is_core && (r.is_core ? o.core == r.core : o.scalar == r.scalar);
  };
  if (std::none_of(aware.begin(), aware.end(), same)) aware.push_back(r);
}

void CollectAware(const Resources& r, std::vector<NumaResource>& aware) {
  for (CoreResource c : {CoreResource::kCpu, CoreResource::kMemory, CoreResource::kGpu}) {
    if (r.Get(c) != 0) AddAware(aware, {true, c, 0, c != CoreResource::kGpu});
  }
  for (const auto& [id, amount] : r.scalars) {
    AddAware(aware, {false, CoreResource::kCpu, id, ResourceName(id).starts_with("hugepages-")});
  }
}

std::vector<int64_t> PrefixOfLargest(const NodeNuma& t, const NumaResource& r) {
  std::vector<int64_t> v;
  for (const NumaZone& z : t.zones) v.push_back(r.Of(z.allocatable));
  std::sort(v.begin(), v.end(), std::greater<>());
  for (size_t k = 1; k < v.size(); ++k) v[k] += v[k - 1];
  return v;
}

NodeNuma TopologyOf(const NodeTopologyObject& obj) {
  NodeNuma t;
  t.policy = obj.policy;
  t.scope = obj.scope;
  for (const NumaZoneObject& z : obj.zones) {
    t.zones.push_back({z.name, z.allocatable, z.available, z.available});
    CollectAware(z.allocatable, t.aware);
    CollectAware(z.available, t.aware);
  }
  std::sort(t.zones.begin(), t.zones.end(), ZoneBefore);
  for (const NumaResource& r : t.aware) t.allocatable_prefix.push_back(PrefixOfLargest(t, r));
  return t;
}

bool IsScoredPolicy(NumaPolicy p) { return p != NumaPolicy::kNone; }
bool IsModeledPolicy(NumaPolicy p) {
  return p == NumaPolicy::kRestricted || p == NumaPolicy::kSingleNumaNode;
}

// ---- records ----

int32_t ZoneIndex(const NodeNuma& t, std::string_view name) {
  for (size_t z = 0; z < t.zones.size(); ++z) {
    if (t.zones[z].name == name) return static_cast<int32_t>(z);
  }
  return -1;
}

// A record as charges, by zone; empty when it names a zone the node does not report (a partial
// placement would under-count: the whole record is unknown).
std::vector<NumaCharge> ChargesOf(const NodeNuma& t, const NumaPlacementRecord& record) {
  std::vector<NumaCharge> out;
  for (const NumaZoneAmount& z : record) {
    const int32_t i = ZoneIndex(t, z.zone);
    if (i < 0) return {};
    out.push_back({i, z.amount});
  }
  std::sort(out.begin(), out.end(),
            [](const NumaCharge& a, const NumaCharge& b) { return a.zone < b.zone; });
  return out;
}

const NumaPlacementRecord* BindRequestRecord(const ClusterState& state, const PodObject& pod) {
  for (const BindRequestObject& b : state.bind_requests) {
    if (b.phase != "Failed" && !b.numa_zones.empty() && b.meta.ns == pod.meta.ns &&
        b.pod_name == pod.meta.name) {
      return &b.numa_zones;
    }
  }
  return nullptr;
}

// KAI's precedence: observed (the exporter's ground truth), the BindRequest (this cycle's
// prediction, before the binder annotates the pod), then the predicted annotation.
const NumaPlacementRecord* RecordOf(const ClusterState& state, const PodObject& pod) {
  const PodNumaRequest& n = pod.numa[0];
  if (!n.observed.empty()) return &n.observed;
  if (const NumaPlacementRecord* b = BindRequestRecord(state, pod)) return b;
  if (!n.predicted.empty()) return &n.predicted;
  return nullptr;
}

void Charge(NodeNuma& t, const std::vector<NumaCharge>& charges, int sign) {
  for (const NumaCharge& c : charges) {
    Resources& avail = t.zones[static_cast<size_t>(c.zone)].available;
    if (sign > 0) {
      avail -= c.amount;
    } else {
      avail += c.amount;
    }
  }
}

void SeedPod(const ClusterState& state, Snapshot& snap, PodId id) {
  const SnapPod& p = snap.pods[id];
  if (p.node == kNone || !IsActiveAllocated(p.status) || p.obj->numa.empty()) return;
  const int32_t ti = snap.numa.node_topology[static_cast<size_t>(p.node)];
  if (ti < 0) return;
  NodeNuma& t = snap.numa.topologies[static_cast<size_t>(ti)];
  if (!NumaScored(t, p.obj->numa[0])) return;
  const NumaPlacementRecord* record = RecordOf(state, *p.obj);
  if (!record) return;
  PodNuma& e = snap.numa.pods[static_cast<size_t>(id)];
  e.node = p.node;
  e.charges = ChargesOf(t, *record);
  Charge(t, e.charges, +1);
  e.charged = true;
}

}  // namespace

void BuildNuma(const ClusterState& state, Snapshot& snap) {
  snap.numa = NumaState{};
  for (const NodeTopologyObject& obj : state.node_topologies) {
    const auto it = snap.node_by_name.find(obj.meta.name);
    if (it == snap.node_by_name.end() || obj.zones.empty()) continue;
    if (snap.numa.node_topology.empty()) snap.numa.node_topology.assign(snap.nodes.size(), -1);
    snap.numa.node_topology[static_cast<size_t>(it->second)] =
        static_cast<int32_t>(snap.numa.topologies.size());
    snap.numa.topologies.push_back(TopologyOf(obj));
    snap.numa.max_zones = std::max(snap.numa.max_zones, static_cast<int>(obj.zones.size()));
  }
  if (!snap.numa.Any()) return;
  // KAI reconstructs a scored node's availability from the pods' placements.
  for (NodeNuma& t : snap.numa.topologies) {
    if (!IsScoredPolicy(t.policy)) continue;
    for (NumaZone& z : t.zones) z.available = z.allocatable;
  }
  snap.numa.pods.resize(snap.pods.size());
  for (PodId p = 0; p < static_cast<PodId>(snap.pods.size()); ++p) SeedPod(state, snap, p);
}

void ApplyNumaArguments(NumaState& numa, const std::vector<std::string>& ignore, bool reconstruct) {
  for (NodeNuma& t : numa.topologies) {
    t.memo.valid = false;  // the aligned resources change
    if (!reconstruct && IsScoredPolicy(t.policy)) {
      for (NumaZone& z : t.zones) z.available = z.reported;
    }
    for (size_t r = t.aware.size(); r-- > 0;) {
      if (std::find(ignore.begin(), ignore.end(), t.aware[r].Name()) == ignore.end()) continue;
      t.aware.erase(t.aware.begin() + static_cast<std::ptrdiff_t>(r));
      t.allocatable_prefix.erase(t.allocatable_prefix.begin() + static_cast<std::ptrdiff_t>(r));
    }
  }
}

// ---- admission ----

namespace {

bool AsksAlignedDevice(const NodeNuma& t, const PodNumaRequest& req) {
  return std::any_of(t.aware.begin(), t.aware.end(), [&](const NumaResource& r) {
    return !r.qos_gated && r.Of(req.pod_scope) > 0;
  });
}

bool TaskConsidered(const NodeNuma& t, const PodNumaRequest& req) {
  return req.guaranteed || AsksAlignedDevice(t, req);
}

// The evaluation of one pod on one node: aligned resources, the zones' availability (a private
// copy the pod's concurrent units draw from) and the outcome.
struct Evaluation {
  const NodeNuma& t;
  std::vector<size_t> aligned;  // indices in t.aware
  std::vector<int64_t> avail;   // [zone * aware + resource]
  NumaFit fit;
  std::vector<NumaCharge>* charges = nullptr;

  int64_t& At(size_t z, size_t r) { return avail[z * t.aware.size() + r]; }
};

std::vector<int64_t> NeedsOf(const Evaluation& e, const Resources& req) {
  std::vector<int64_t> need(e.t.aware.size(), 0);
  for (size_t r : e.aligned) need[r] = e.t.aware[r].Of(req);
  return need;
}

bool ZoneHolds(Evaluation& e, size_t z, const std::vector<int64_t>& need) {
  for (size_t r : e.aligned) {
    if (need[r] > 0 && e.At(z, r) < need[r]) return false;
  }
  return true;
}

bool MaskHolds(Evaluation& e, const std::vector<size_t>& mask, const std::vector<int64_t>& need) {
  for (size_t r : e.aligned) {
    int64_t sum = 0;
    for (size_t z : mask) sum += e.At(z, r);
    if (need[r] > 0 && sum < need[r]) return false;
  }
  return true;
}

// Records, for an explanation, the most one zone offers of the first resource no zone holds.
void NoteShortfall(Evaluation& e, const std::vector<int64_t>& need) {
  for (size_t r : e.aligned) {
    int64_t best = 0;
    for (size_t z = 0; z < e.t.zones.size(); ++z) best = std::max(best, e.At(z, r));
    if (need[r] > best) {
      e.fit.short_resource = e.t.aware[r];
      e.fit.need = need[r];
      e.fit.best = best;
      return;
    }
  }
}

std::optional<std::vector<size_t>> LowestZone(Evaluation& e, const std::vector<int64_t>& need) {
  for (size_t z = 0; z < e.t.zones.size(); ++z) {
    if (ZoneHolds(e, z, need)) return std::vector<size_t>{z};
  }
  NoteShortfall(e, need);
  return std::nullopt;
}

// The restricted policy's preferred width of one resource: the fewest zones whose allocatables
// could hold the need (0: none could).
int PreferredWidth(const std::vector<int64_t>& prefix, int64_t need) {
  for (size_t k = 0; k < prefix.size(); ++k) {
    if (prefix[k] >= need) return static_cast<int>(k) + 1;
  }
  return 0;
}

// Advances `mask` (ascending zone indices) to the next size-k subset of [0, n) in lexicographic
// order; false after the last.
bool NextMask(std::vector<size_t>& mask, size_t n) {
  const size_t k = mask.size();
  size_t i = k;
  while (i > 0 && mask[i - 1] == n - k + i - 1) --i;
  if (i == 0) return false;
  ++mask[i - 1];
  for (size_t j = i; j < k; ++j) mask[j] = mask[j - 1] + 1;
  return true;
}

// The kubelet's hint merge: every requested resource's preferred width must agree, and some mask
// of that width (the lexicographically lowest) must hold the request now.
std::optional<std::vector<size_t>> RestrictedMask(Evaluation& e, const std::vector<int64_t>& need) {
  int width = 0;
  for (size_t r : e.aligned) {
    if (need[r] <= 0) continue;
    const int w = PreferredWidth(e.t.allocatable_prefix[r], need[r]);
    if (w == 0 || (width != 0 && w != width)) return std::nullopt;
    width = w;
  }
  if (width == 0) return std::vector<size_t>{};
  if (width == 1) return LowestZone(e, need);
  std::vector<size_t> mask(static_cast<size_t>(width));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i;
  do {
    if (MaskHolds(e, mask, need)) return mask;
  } while (NextMask(mask, e.t.zones.size()));
  return std::nullopt;
}

// Best-effort's span: greedily add the zone covering most of what is still unmet.
std::optional<std::vector<size_t>> GreedyMask(Evaluation& e, std::vector<int64_t> need) {
  std::vector<size_t> mask;
  std::vector<bool> used(e.t.zones.size(), false);
  const auto met = [&] {
    return std::all_of(e.aligned.begin(), e.aligned.end(), [&](size_t r) { return need[r] <= 0; });
  };
  while (!met()) {
    int64_t best_cover = 0;
    size_t best = e.t.zones.size();
    for (size_t z = 0; z < e.t.zones.size(); ++z) {
      int64_t cover = 0;
      for (size_t r : e.aligned) cover += need[r] > 0 ? std::min(need[r], e.At(z, r)) : 0;
      if (!used[z] && cover > best_cover) best_cover = cover, best = z;
    }
    if (best == e.t.zones.size()) return std::nullopt;
    used[best] = true;
    mask.push_back(best);
    for (size_t r : e.aligned) need[r] -= e.At(best, r);
  }
  return mask;
}

std::optional<std::vector<size_t>> MaskFor(Evaluation& e, const std::vector<int64_t>& need) {
  switch (e.t.policy) {
    case NumaPolicy::kSingleNumaNode:
      return LowestZone(e, need);
    case NumaPolicy::kBestEffort:
      return GreedyMask(e, need);
    default:
      return RestrictedMask(e, need);
  }
}

void RecordCharge(Evaluation& e, size_t z, size_t r, int64_t amount) {
  if (!e.charges) return;
  auto it = std::find_if(e.charges->begin(), e.charges->end(),
                         [&](const NumaCharge& c) { return c.zone == static_cast<int32_t>(z); });
  if (it == e.charges->end())
    it = e.charges->insert(e.charges->end(), {static_cast<int32_t>(z), {}});
  e.t.aware[r].Add(it->amount, amount);
}

// Draws each resource across the mask, lowest zone first (any split inside the mask is one the
// kubelet admits).
void Draw(Evaluation& e, const std::vector<size_t>& mask, const std::vector<int64_t>& need) {
  for (size_t r : e.aligned) {
    int64_t remaining = need[r];
    for (size_t z : mask) {
      const int64_t take = std::min(remaining, e.At(z, r));
      if (take <= 0) continue;
      e.At(z, r) -= take;
      RecordCharge(e, z, r, take);
      remaining -= take;
    }
  }
}

// The concurrent units share the zones (each draws from what the previous left); a serial unit
// (an ordinary init container) is aligned alone against what the zones hold before the pod.
bool AlignUnits(Evaluation& e, const std::vector<Resources>& concurrent,
                const std::vector<Resources>& serial) {
  const std::vector<int64_t> pristine = e.avail;
  for (const Resources& unit : concurrent) {
    const std::vector<int64_t> need = NeedsOf(e, unit);
    const auto mask = MaskFor(e, need);
    if (!mask) return false;
    Draw(e, *mask, need);
  }
  std::vector<int64_t> after = e.avail;
  for (const Resources& unit : serial) {
    e.avail = pristine;
    if (!MaskFor(e, NeedsOf(e, unit))) return false;
  }
  e.avail = std::move(after);
  return true;
}

Evaluation StartEvaluation(const NodeNuma& t, const PodNumaRequest& req, bool empty_node) {
  Evaluation e{t, {}, {}, {}, nullptr};
  for (size_t r = 0; r < t.aware.size(); ++r) {
    if (req.guaranteed || !t.aware[r].qos_gated) e.aligned.push_back(r);
  }
  e.avail.resize(t.zones.size() * t.aware.size());
  for (size_t z = 0; z < t.zones.size(); ++z) {
    const Resources& from = empty_node ? t.zones[z].allocatable : t.zones[z].available;
    for (size_t r = 0; r < t.aware.size(); ++r) e.At(z, r) = t.aware[r].Of(from);
  }
  return e;
}

}  // namespace

bool NumaScored(const NodeNuma& t, const PodNumaRequest& req) {
  return IsScoredPolicy(t.policy) && TaskConsidered(t, req);
}

bool NumaFiltered(const NodeNuma& t, const PodNumaRequest& req) {
  return IsModeledPolicy(t.policy) && TaskConsidered(t, req);
}

namespace {

// What an evaluation reads of a request (not its placement records).
bool SameAsk(const PodNumaRequest& a, const PodNumaRequest& b) {
  return a.guaranteed == b.guaranteed && a.pod_scope == b.pod_scope &&
         a.concurrent == b.concurrent && a.serial == b.serial;
}

bool MemoHolds(const NodeNuma& t, const PodNumaRequest& req, bool empty_node) {
  const NodeNuma::Memo& m = t.memo;
  if (!m.valid || m.empty_node != empty_node || !SameAsk(m.request, req)) return false;
  if (empty_node) return true;
  for (size_t z = 0; z < t.zones.size(); ++z) {
    if (!(m.available[z] == t.zones[z].available)) return false;
  }
  return true;
}

void Remember(const NodeNuma& t, const PodNumaRequest& req, bool empty_node, const NumaFit& fit) {
  NodeNuma::Memo& m = t.memo;
  m.valid = true;
  m.empty_node = empty_node;
  m.request.guaranteed = req.guaranteed;
  m.request.pod_scope = req.pod_scope;
  m.request.concurrent = req.concurrent;
  m.request.serial = req.serial;
  m.available.resize(t.zones.size());
  for (size_t z = 0; z < t.zones.size(); ++z) m.available[z] = t.zones[z].available;
  m.fit = fit;
}

}  // namespace

NumaFit EvaluateNuma(const NodeNuma& t, const PodNumaRequest& req, bool empty_node,
                     std::vector<NumaCharge>* charges) {
  if (!charges && MemoHolds(t, req, empty_node)) return t.memo.fit;
  Evaluation e = StartEvaluation(t, req, empty_node);
  std::vector<NumaCharge> local;
  e.charges = &local;
  const bool pod_scope = t.scope == NumaScope::kPod;
  const std::vector<Resources> whole{req.pod_scope};
  e.fit.fits = pod_scope ? AlignUnits(e, whole, {}) : AlignUnits(e, req.concurrent, req.serial);
  e.fit.span = e.fit.fits ? std::max(1, static_cast<int>(local.size())) : 0;
  if (charges && e.fit.fits) {
    std::sort(local.begin(), local.end(),
              [](const NumaCharge& a, const NumaCharge& b) { return a.zone < b.zone; });
    *charges = std::move(local);
  }
  if (!charges) Remember(t, req, empty_node, e.fit);
  return e.fit;
}

// ---- session moves ----

void NumaLeave(Snapshot& snap, int32_t pod) {
  if (snap.numa.pods.empty()) return;
  PodNuma& e = snap.numa.pods[static_cast<size_t>(pod)];
  if (!e.charged) return;
  const int32_t ti = snap.numa.node_topology[static_cast<size_t>(e.node)];
  Charge(snap.numa.topologies[static_cast<size_t>(ti)], e.charges, -1);
  e.charged = false;
}

namespace {

// A fresh prediction for a pod a session places (none when the plugin is off or the pod is not
// one the node aligns).
std::vector<NumaCharge> Predict(const Snapshot& snap, const SnapPod& p, const NodeNuma& t) {
  std::vector<NumaCharge> charges;
  if (!snap.numa.place || p.obj->numa.empty() || !NumaScored(t, p.obj->numa[0])) return charges;
  EvaluateNuma(t, p.obj->numa[0], false, &charges);
  return charges;
}

}  // namespace

void NumaEnter(Snapshot& snap, int32_t pod) {
  if (snap.numa.pods.empty()) return;
  PodNuma& e = snap.numa.pods[static_cast<size_t>(pod)];
  const SnapPod& p = snap.pods[static_cast<size_t>(pod)];
  const bool restored = std::exchange(e.restore, false);
  if (p.node == kNone || !IsActiveAllocated(p.status)) {
    if (!restored && p.node == kNone) e = PodNuma{};
    return;
  }
  const int32_t ti = snap.numa.node_topology[static_cast<size_t>(p.node)];
  if (ti < 0) {
    e = PodNuma{};
    return;
  }
  NodeNuma& t = snap.numa.topologies[static_cast<size_t>(ti)];
  if (!restored || e.node != p.node) {
    e.node = p.node;
    e.charges = Predict(snap, p, t);
  }
  Charge(t, e.charges, +1);
  e.charged = true;
}

void NumaRestore(Snapshot& snap, int32_t pod, PodNuma previous) {
  if (snap.numa.pods.empty()) return;
  NumaLeave(snap, pod);
  PodNuma& e = snap.numa.pods[static_cast<size_t>(pod)];
  e = std::move(previous);
  e.charged = false;
  e.restore = true;
}

NumaPlacementRecord NumaRecordOf(const Snapshot& snap, int32_t pod) {
  NumaPlacementRecord out;
  if (snap.numa.pods.empty()) return out;
  const PodNuma& e = snap.numa.pods[static_cast<size_t>(pod)];
  const NodeNuma* t = snap.numa.Of(e.node);
  if (!t) return out;
  for (const NumaCharge& c : e.charges) {
    out.push_back({std::string(t->zones[static_cast<size_t>(c.zone)].name), c.amount});
  }
  return out;
}

}  // namespace kai
