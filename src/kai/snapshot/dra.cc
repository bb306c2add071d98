#include "kai/snapshot/dra.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "kai/snapshot/dra_cel.h"
#include "kai/snapshot/snapshot.h"

namespace kai {
namespace {

// A claim's GPU count is capped here so that sums over a cluster never overflow (an absurd count
// stays absurd: far beyond any node).
constexpr int64_t kMaxClaimGpus = int64_t{1} << 40;

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(kMaxClaimGpus, a + b); }

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// KAI's countGPUDevicesFromClaim: ExactCount asks its count, All asks 1.
int64_t GpuCount(const std::vector<DeviceRequestSpec>& requests) {
  int64_t total = 0;
  for (const DeviceRequestSpec& r : requests) {
    if (r.first_available || !IsGpuDeviceClassName(r.device_class)) continue;
    const int64_t n = r.mode == DeviceAllocationMode::kAll ? 1 : std::min(r.count, kMaxClaimGpus);
    total = SaturatingAdd(total, n);
  }
  return total;
}

DraClaim ClaimOf(const ResourceClaimObject* obj, std::vector<DeviceRequestSpec> requests) {
  DraClaim c;
  c.obj = obj;
  c.requests = std::move(requests);
  c.gpus = GpuCount(c.requests);
  c.gpu = std::any_of(c.requests.begin(), c.requests.end(), [](const DeviceRequestSpec& r) {
    return !r.first_available && IsGpuDeviceClassName(r.device_class);
  });
  c.reserved = obj ? static_cast<int>(obj->reserved_for.size()) : 0;
  return c;
}

// A pod occupying its node's resources (or about to: a bind in flight).
bool HoldsResources(const PodObject& p, const std::unordered_set<std::string>& binding) {
  if (p.phase == "Succeeded" || p.phase == "Failed") return false;
  if (!p.node_name.empty()) return true;
  return !binding.empty() && binding.count(Key(p.meta.ns, p.meta.name));
}

struct Builder {
  const ClusterState& state;
  const Snapshot& snap;
  DraView& view;
  // By name (views into the objects), then the namespace checked: no key is built per lookup.
  std::unordered_multimap<std::string_view, int32_t> claim_by_name;
  std::unordered_map<std::string, const ResourceClaimTemplateObject*> template_by_key;
  std::unordered_set<std::string> binding, pod_keys;

  void Devices() {
    view.node_devices.resize(snap.nodes.size());
    view.node_gpus.assign(snap.nodes.size(), 0);
    for (const ResourceSliceObject& s : state.dra.slices) {
      auto it = snap.node_by_name.find(s.node_name);
      if (it != snap.node_by_name.end()) {
        AddSlice(s, it->second);
        if (IsGpuDeviceClassName(s.driver)) view.node_gpus[it->second] += s.devices.size();
      } else if (s.all_nodes) {
        for (size_t n = 0; n < snap.nodes.size(); ++n) AddSlice(s, static_cast<DraNodeId>(n));
      }
    }
  }
  void AddSlice(const ResourceSliceObject& s, DraNodeId node) {
    for (const SliceDevice& d : s.devices) view.node_devices[node].push_back({&s, &d, false});
  }

  void Claims() {
    for (const DeviceClassObject& c : state.dra.classes) view.classes[c.meta.name] = &c;
    for (const ResourceClaimTemplateObject& t : state.dra.templates) {
      template_by_key[Key(t.meta.ns, t.meta.name)] = &t;
    }
    claim_by_name.reserve(state.dra.claims.size());
    view.claims.reserve(state.dra.claims.size());
    for (const ResourceClaimObject& c : state.dra.claims) {
      claim_by_name.emplace(c.meta.name, static_cast<int32_t>(view.claims.size()));
      view.claims.push_back(ClaimOf(&c, c.requests));
      ResolveClasses(view.claims.back());
    }
  }

  // A claim named by the pod; a template's claim not generated yet is made from the template
  // (what the resource claim controller will create), one per pod.
  void ResolveClasses(DraClaim& c) {
    for (const DeviceRequestSpec& r : c.requests) {
      auto it = view.classes.find(r.device_class);
      c.classes.push_back(it == view.classes.end() ? nullptr : it->second);
    }
  }

  int32_t Resolve(const PodObject& p, const PodClaimRef& ref) {
    if (!ref.claim_name.empty()) {
      auto [first, last] = claim_by_name.equal_range(ref.claim_name);
      for (auto it = first; it != last; ++it) {
        if (view.claims[it->second].obj->meta.ns == p.meta.ns) return it->second;
      }
    }
    if (!ref.FromTemplate()) return -1;
    auto t = template_by_key.find(Key(p.meta.ns, ref.template_name));
    if (t == template_by_key.end()) return -1;
    view.claims.push_back(ClaimOf(nullptr, t->second->requests));
    ResolveClasses(view.claims.back());
    return static_cast<int32_t>(view.claims.size() - 1);
  }

  void Pods() {
    for (const BindRequestObject& b : state.bind_requests) {
      if (b.phase != "Failed") binding.insert(Key(b.meta.ns, b.pod_name));
    }
    view.pods.reserve(state.dra.claims.size());
    for (size_t i = 0; i < state.pods.size(); ++i) {
      const PodObject& p = state.pods[i];
      if (p.resource_claims.empty()) continue;
      DraPod& dp = view.pods[&p];
      for (const PodClaimRef& ref : p.resource_claims) dp.claims.push_back({&ref, Resolve(p, ref)});
    }
  }

  // Owners: pods holding resources first, then any live pod, each in state order.
  void Owners() {
    for (bool holding : {true, false}) {
      for (size_t i = 0; i < state.pods.size(); ++i) {
        const PodObject& p = state.pods[i];
        const DraPod* dp = view.PodOf(p);
        if (!dp || HoldsResources(p, binding) != holding) continue;
        if (p.phase == "Succeeded" || p.phase == "Failed") continue;
        for (const DraPodClaim& c : dp->claims) {
          if (c.claim < 0) continue;
          DraClaim& claim = view.claims[c.claim];
          if (holding) Hold(claim, p);
          if (claim.owner < 0) claim.owner = static_cast<int32_t>(i);
        }
      }
    }
  }

  // A pod holding resources holds its claims. One the API shows unallocated (a bind kai made whose
  // claim status is not written yet) is taken as allocated on the pod's node.
  void Hold(DraClaim& claim, const PodObject& p) {
    if (claim.held) return;
    if (claim.obj && claim.obj->allocated) {
      claim.held = true;
      return;
    }
    auto it = snap.node_by_name.find(p.node_name);
    if (it == snap.node_by_name.end()) return;
    claim.held = true;
    claim.implied = true;
    claim.nodes = {it->second};
  }

  // reservedFor naming a pod kai does not know keeps the allocation too.
  void ForeignHolders() {
    const bool any = std::any_of(state.dra.claims.begin(), state.dra.claims.end(),
                                 [](const ResourceClaimObject& c) { return c.allocated; });
    if (!any) return;
    for (const PodObject& p : state.pods) pod_keys.insert(Key(p.meta.ns, p.meta.name));
    for (DraClaim& c : view.claims) {
      if (!c.obj || !c.obj->allocated) continue;
      for (const ClaimConsumer& r : c.obj->reserved_for) {
        if (!pod_keys.count(Key(c.obj->meta.ns, r.name))) ++c.foreign_consumers;
      }
      if (c.foreign_consumers > 0) c.held = true;
    }
  }

  void TakeDevices(DraClaim& c) {
    for (const AllocatedDevice& a : c.obj->devices) {
      for (size_t n = 0; n < view.node_devices.size(); ++n) {
        std::vector<DraDevice>& devices = view.node_devices[n];
        for (size_t i = 0; i < devices.size(); ++i) {
          DraDevice& d = devices[i];
          if (d.slice->driver != a.driver || d.slice->pool != a.pool) continue;
          if (d.device->name != a.device) continue;
          d.taken = true;
          c.slots.push_back({static_cast<DraNodeId>(n), static_cast<int32_t>(i)});
          if (!d.slice->all_nodes) c.nodes.push_back(static_cast<DraNodeId>(n));
        }
      }
    }
    for (const std::string& name : c.obj->selector_nodes) {
      auto it = snap.node_by_name.find(name);
      if (it != snap.node_by_name.end()) c.nodes.push_back(it->second);
    }
    std::sort(c.nodes.begin(), c.nodes.end());
    c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
  }

  void Charges() {
    for (size_t i = 0; i < state.pods.size(); ++i) {
      auto it = view.pods.find(&state.pods[i]);
      if (it == view.pods.end()) continue;
      int64_t gpus = 0;
      for (const DraPodClaim& c : it->second.claims) {
        if (c.claim >= 0 && view.claims[c.claim].owner == static_cast<int32_t>(i)) {
          gpus = SaturatingAdd(gpus, view.claims[c.claim].gpus);
        }
      }
      it->second.charged_milli_gpu = gpus * 1000;
    }
  }
};

bool MatchesAll(const std::vector<std::string>& selectors, const DraDevice& d,
                std::string& unsupported) {
  for (const std::string& expr : selectors) {
    CelOutcome o = EvalDeviceSelector(expr, d.slice->driver, *d.device);
    if (!o.unsupported.empty()) {
      unsupported = o.unsupported;
      return false;
    }
    if (!o.matches) return false;
  }
  return true;
}

}  // namespace

bool IsGpuDeviceClassName(std::string_view name) {
  for (size_t i = 0; i + 3 <= name.size(); ++i) {
    if (std::tolower(name[i]) == 'g' && std::tolower(name[i + 1]) == 'p' &&
        std::tolower(name[i + 2]) == 'u') {
      return true;
    }
  }
  return false;
}

std::shared_ptr<DraView> BuildDraView(const ClusterState& state, const Snapshot& snap) {
  auto view = std::make_shared<DraView>();
  Builder b{state, snap, *view, {}, {}, {}, {}};
  b.Devices();
  b.Claims();
  b.Pods();
  b.Owners();
  b.ForeignHolders();
  for (DraClaim& c : view->claims) {
    if (c.held && !c.implied) b.TakeDevices(c);
  }
  b.Charges();
  return view;
}

namespace {

DraClaimResult ResultOf(const DraView& view, const Snapshot& snap, const DraPodClaim& c) {
  const DraClaim& dc = view.claims[c.claim];
  const DraClaimSession& st = view.session[c.claim];
  DraClaimResult r{c.ref->name, {}, ""};
  if (st.nodes.size() == 1) r.node = std::string(snap.nodes[st.nodes[0]].name);
  for (const DraSlot& slot : st.slots) {
    const DraDevice& d = view.node_devices[slot.node][slot.device];
    std::string request = slot.request >= 0 ? dc.requests[slot.request].name : "";
    for (size_t i = 0; slot.request < 0 && dc.obj && i < dc.obj->devices.size(); ++i) {
      const AllocatedDevice& a = dc.obj->devices[i];
      if (a.device == d.device->name && a.pool == d.slice->pool) request = a.request;
    }
    r.devices.push_back({request, d.slice->driver, d.slice->pool, d.device->name});
  }
  return r;
}

}  // namespace

std::vector<DraClaimResult> ClaimResults(const DraView& view, const Snapshot& snap, int32_t pod) {
  std::vector<DraClaimResult> out;
  const DraPod* dp = view.PodOf(*snap.pods[pod].obj);
  if (!dp || view.session.empty()) return out;
  for (const DraPodClaim& c : dp->claims) {
    if (c.claim >= 0) out.push_back(ResultOf(view, snap, c));
  }
  return out;
}

void AddDraGpusToNodes(const DraView& view, Snapshot& snap) {
  for (size_t n = 0; n < snap.nodes.size(); ++n) {
    const int64_t milli = view.node_gpus[n] * 1000;
    snap.nodes[n].allocatable.milli_gpu += milli;
    snap.nodes[n].idle.milli_gpu += milli;
    snap.nodes[n].gpu_devices += view.node_gpus[n];
  }
}

DeviceMatch MatchDevices(const DraView& view, DraNodeId node, const DeviceRequestSpec& request,
                         const std::vector<bool>& taken, bool count_taken) {
  auto cls = view.classes.find(request.device_class);
  DeviceMatch m;
  MatchDevicesInto(view, node, request, cls == view.classes.end() ? nullptr : cls->second, taken,
                   count_taken, m);
  return m;
}

void MatchDevicesInto(const DraView& view, DraNodeId node, const DeviceRequestSpec& request,
                      const DeviceClassObject* cls, const std::vector<bool>& taken,
                      bool count_taken, DeviceMatch& m) {
  m.devices.clear();
  m.unsupported.clear();
  m.enough = false;
  const std::vector<DraDevice>& devices = view.node_devices[node];
  int64_t matching = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DraDevice& d = devices[i];
    if (cls && !MatchesAll(cls->selectors, d, m.unsupported)) {
      if (!m.unsupported.empty()) return;
      continue;
    }
    if (!MatchesAll(request.selectors, d, m.unsupported)) {
      if (!m.unsupported.empty()) return;
      continue;
    }
    ++matching;
    const bool free = count_taken || (!d.taken && !(i < taken.size() && taken[i]));
    if (!free) continue;
    if (request.mode == DeviceAllocationMode::kExactCount &&
        static_cast<int64_t>(m.devices.size()) >= request.count) {
      continue;
    }
    m.devices.push_back(static_cast<int32_t>(i));
  }
  const int64_t got = static_cast<int64_t>(m.devices.size());
  m.enough = request.mode == DeviceAllocationMode::kAll ? matching > 0 && got == matching
                                                        : got >= request.count;
}

}  // namespace kai
