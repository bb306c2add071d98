#include "kai/core/snapshot/dra.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "kai/core/snapshot/dra_cel.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {
namespace {

// A claim's GPU count is capped here so that sums over a cluster never overflow (an absurd count
// stays absurd: far beyond any node).
constexpr int64_t kMaxClaimGpus = int64_t{1} << 40;

constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(kMaxClaimGpus, a + b); }

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// KAI's countGPUDevicesFromClaim: ExactCount asks its count, All asks 1.
int64_t GpuCount(std::span<const DeviceRequestSpec> requests) {
  int64_t total = 0;
  for (const DeviceRequestSpec& r : requests) {
    if (r.first_available || !IsGpuDeviceClassName(r.device_class)) continue;
    const int64_t n = r.mode == DeviceAllocationMode::kAll ? 1 : std::min(r.count, kMaxClaimGpus);
    total = SaturatingAdd(total, n);
  }
  return total;
}

DraClaim ClaimOf(const ResourceClaimObject* obj, std::span<const DeviceRequestSpec> requests,
                 std::span<const DeviceConfig> config) {
  DraClaim c;
  c.obj = obj;
  c.requests = requests;
  c.config = config;
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
  std::unordered_multimap<std::string_view, const ResourceClaimTemplateObject*> template_by_name;
  std::unordered_set<std::string> binding;
  std::unordered_map<std::string, int32_t> pod_index;  // namespace/name -> index, built lazily

  const std::unordered_map<std::string, int32_t>& PodIndex() {
    if (pod_index.empty()) {
      pod_index.reserve(state.pods.size());
      for (size_t i = 0; i < state.pods.size(); ++i) {
        const PodObject& p = state.pods[i];
        pod_index.emplace(Key(p.meta.ns, p.meta.name), static_cast<int32_t>(i));
      }
    }
    return pod_index;
  }

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
    ExtendedClasses();
    for (const ResourceClaimTemplateObject& t : state.dra.templates) {
      template_by_name.emplace(t.meta.name, &t);
    }
    claim_by_name.reserve(state.dra.claims.size());
    view.claims.reserve(state.dra.claims.size());
    for (const ResourceClaimObject& c : state.dra.claims) {
      claim_by_name.emplace(c.meta.name, static_cast<int32_t>(view.claims.size()));
      view.claims.push_back(ClaimOf(&c, c.requests, c.config));
    }
  }

  // Every claim's request classes, into one pool (sized first, so the spans stay valid); a run
  // of requests naming the class before it reuses its lookup.
  void ResolveClasses() {
    size_t total = 0;
    for (const DraClaim& c : view.claims) total += c.requests.size();
    view.claim_classes.reserve(total);
    std::string_view last_name;
    const DeviceClassObject* last = nullptr;
    for (DraClaim& c : view.claims) {
      const size_t begin = view.claim_classes.size();
      for (const DeviceRequestSpec& r : c.requests) {
        if (!last || r.device_class != last_name) {
          auto it = view.classes.find(r.device_class);
          last = it == view.classes.end() ? nullptr : it->second;
          last_name = r.device_class;
        }
        view.claim_classes.push_back(last);
      }
      c.classes = {view.claim_classes.data() + begin, c.requests.size()};
    }
  }

  // A claim named by the pod; a template's claim not generated yet is made from the template
  // (what the resource claim controller will create), one per pod.
  int32_t Resolve(const PodObject& p, const PodClaimRef& ref) {
    if (!ref.claim_name.empty()) {
      auto [first, last] = claim_by_name.equal_range(ref.claim_name);
      for (auto it = first; it != last; ++it) {
        if (view.claims[it->second].obj->meta.ns == p.meta.ns) return it->second;
      }
    }
    if (!ref.FromTemplate()) return -1;
    auto [first, last] = template_by_name.equal_range(ref.template_name);
    for (auto it = first; it != last; ++it) {
      if (it->second->meta.ns != p.meta.ns) continue;
      view.claims.push_back(ClaimOf(nullptr, it->second->requests, it->second->config));
      return static_cast<int32_t>(view.claims.size() - 1);
    }
    return -1;
  }

  void Pods() {
    for (const BindRequestObject& b : state.bind_requests) {
      if (b.phase != "Failed") binding.insert(Key(b.meta.ns, b.pod_name));
    }
    view.pods_base = state.pods.data();
    view.pod_slot.assign(state.pods.size(), -1);
    size_t refs = 0;
    for (const PodObject& p : state.pods) refs += p.resource_claims.size();
    view.pod_claims.reserve(refs);
    for (size_t i = 0; i < state.pods.size(); ++i) {
      const PodObject& p = state.pods[i];
      const bool extended = !view.extended_classes.empty() && MapsExtended(p);
      if (p.resource_claims.empty() && !extended) continue;
      view.pod_slot[i] = static_cast<int32_t>(view.pods.size());
      DraPod& dp = view.pods.emplace_back();
      dp.index = static_cast<int32_t>(i);
      view.any_extended = view.any_extended || extended;
      const size_t begin = view.pod_claims.size();
      for (const PodClaimRef& ref : p.resource_claims) {
        view.pod_claims.push_back({&ref, Resolve(p, ref)});
      }
      dp.claims = {view.pod_claims.data() + begin, p.resource_claims.size()};
      if (extended) ExtendedRequests(p, dp);
    }
  }

  // Extended resource names -> classes. Of two classes naming one resource the newer wins (then
  // the later name); a class's implicit name is its own.
  void ExtendedClasses() {
    for (const DeviceClassObject& c : state.dra.classes) {
      if (c.extended_resource_name.empty()) continue;
      auto [it, fresh] = view.extended_classes.emplace(c.extended_resource_name, &c);
      if (!fresh && Newer(c, *it->second)) it->second = &c;
    }
    view.extended_names.reserve(state.dra.classes.size());  // no reallocation: keys view them
    for (const DeviceClassObject& c : state.dra.classes) {
      view.extended_names.push_back(std::string(kDeviceClassResourcePrefix) + c.meta.name);
      view.extended_classes[view.extended_names.back()] = &c;
    }
  }
  static bool Newer(const DeviceClassObject& a, const DeviceClassObject& b) {
    const UnixSeconds ta = a.meta.creation.value_or(0), tb = b.meta.creation.value_or(0);
    return ta != tb ? ta > tb : a.meta.name > b.meta.name;
  }

  const DeviceClassObject* ClassOf(std::string_view resource) const {
    auto it = view.extended_classes.find(resource);
    return it == view.extended_classes.end() ? nullptr : it->second;
  }
  bool MapsExtended(const PodObject& p) const {
    return std::any_of(p.extended_requests.begin(), p.extended_requests.end(),
                       [&](const ContainerExtendedRequest& r) { return ClassOf(r.resource); });
  }

  // KEP-5004's requests and mappings (Kubernetes' createRequestsAndMappings), per resource in
  // name order: a request per long-lived container (app containers and sidecars) asking it; an
  // init container reuses the requests of the long-lived containers after it and asks the rest
  // itself; of the init containers' own requests only the largest is kept, serving them all.
  void ExtendedRequests(const PodObject& p, DraPod& dp) {
    std::vector<std::string_view> resources;
    for (const ContainerExtendedRequest& r : p.extended_requests) {
      if (ClassOf(r.resource)) resources.push_back(r.resource);
    }
    std::sort(resources.begin(), resources.end());
    resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
    for (std::string_view resource : resources) ResourceRequests(p, resource, dp);
    std::sort(dp.extended.begin(), dp.extended.end(),
              [](const DraExtendedRequest& a, const DraExtendedRequest& b) {
                return a.spec.name < b.spec.name;
              });
  }

  void ResourceRequests(const PodObject& p, std::string_view resource, DraPod& dp) {
    const DeviceClassObject* cls = ClassOf(resource);
    std::vector<const ContainerExtendedRequest*> long_lived, short_lived;
    for (const ContainerExtendedRequest& r : p.extended_requests) {
      if (r.resource == resource) (r.short_lived ? short_lived : long_lived).push_back(&r);
    }
    const bool gpu_resource = resource == kGpuResourceName;
    const ResourceId id = gpu_resource ? 0 : InternResource(resource);
    const bool gpu = gpu_resource && IsGpuDeviceClassName(cls->meta.name);
    auto request = [&](const ContainerExtendedRequest& r, int64_t count) {
      DraExtendedRequest e;
      e.spec = {RequestName(r), cls->meta.name, DeviceAllocationMode::kExactCount, count, {},
                false};
      e.cls = cls;
      e.resource = r.resource;
      e.gpu = gpu;
      e.resource_id = id;
      return e;
    };
    std::vector<DraContainerMapping> long_maps, short_maps;
    for (const ContainerExtendedRequest* r : long_lived) {
      dp.extended.push_back(request(*r, r->count));
      long_maps.push_back({r->container, r->resource, dp.extended.back().spec.name});
    }
    std::optional<DraExtendedRequest> largest;
    std::vector<std::string> own;  // names of the init containers' own requests
    for (const ContainerExtendedRequest* r : short_lived) {
      int64_t reused = 0;
      for (const ContainerExtendedRequest* l : long_lived) {
        if (l->container_index < r->container_index || reused >= r->count) continue;
        reused += l->count;
        short_maps.push_back({r->container, r->resource, RequestName(*l)});
      }
      if (reused >= r->count) continue;
      DraExtendedRequest e = request(*r, r->count - reused);
      own.push_back(e.spec.name);
      short_maps.push_back({r->container, r->resource, e.spec.name});
      if (!largest || largest->spec.count < e.spec.count) largest = std::move(e);
    }
    if (largest) {
      for (DraContainerMapping& m : short_maps) {
        if (std::count(own.begin(), own.end(), m.request)) m.request = largest->spec.name;
      }
      dp.extended.push_back(std::move(*largest));
    }
    dp.mappings.insert(dp.mappings.end(), long_maps.begin(), long_maps.end());
    dp.mappings.insert(dp.mappings.end(), short_maps.begin(), short_maps.end());
  }
  static std::string RequestName(const ContainerExtendedRequest& r) {
    return "container-" + std::to_string(r.container_index) + "-request-" +
           std::to_string(r.key_index);
  }

  // The claims the binder made for pods' extended resources (annotated) hold their devices while
  // the pod they are reserved for holds resources; they are not charged (the pod's own request
  // counts its GPUs).
  void ExtendedClaims() {
    for (size_t c = 0; c < view.claims.size(); ++c) {
      DraClaim& claim = view.claims[c];
      if (!claim.obj || !claim.obj->allocated || !IsExtendedClaim(*claim.obj)) continue;
      for (const ClaimConsumer& r : claim.obj->reserved_for) {
        const auto& pods = PodIndex();
        auto it = pods.find(Key(claim.obj->meta.ns, r.name));
        if (it == pods.end()) continue;
        const PodObject& p = state.pods[it->second];
        if (!HoldsResources(p, binding)) continue;
        claim.held = true;
        const int32_t slot = view.pod_slot[static_cast<size_t>(it->second)];
        if (slot >= 0)
          view.pods[static_cast<size_t>(slot)].extended_claim = static_cast<int32_t>(c);
      }
    }
  }
  static bool IsExtendedClaim(const ResourceClaimObject& c) {
    auto it = c.meta.annotations.find(kExtendedResourceClaimAnnotation);
    return it != c.meta.annotations.end() && it->second == "true";
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
    const auto& pods = PodIndex();
    for (DraClaim& c : view.claims) {
      if (!c.obj || !c.obj->allocated) continue;
      for (const ClaimConsumer& r : c.obj->reserved_for) {
        if (!pods.count(Key(c.obj->meta.ns, r.name))) ++c.foreign_consumers;
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
    for (DraPod& pod : view.pods) {
      int64_t gpus = 0;
      for (const DraPodClaim& c : pod.claims) {
        if (c.claim >= 0 && view.claims[c.claim].owner == pod.index) {
          gpus = SaturatingAdd(gpus, view.claims[c.claim].gpus);
        }
      }
      pod.charged_milli_gpu = gpus * 1000;
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
  b.ResolveClasses();
  b.Owners();
  b.ForeignHolders();
  b.ExtendedClaims();
  for (DraClaim& c : view->claims) {
    if (c.held && !c.implied) b.TakeDevices(c);
  }
  b.Charges();
  return view;
}

namespace {

// The configuration of a claim's allocation: the one it was given before (status.allocation), else
// what its classes and spec give.
std::vector<DeviceConfig> ConfigOf(const DraClaim& dc) {
  if (dc.obj && dc.obj->allocated) return dc.obj->allocation_config;
  return AllocationConfig(dc.requests, dc.classes, dc.config);
}

DraClaimResult ResultOf(const DraView& view, const Snapshot& snap, const DraPodClaim& c) {
  const DraClaim& dc = view.claims[c.claim];
  const DraClaimSession& st = view.session[c.claim];
  DraClaimResult r{c.ref->name, {}, "", ConfigOf(dc)};
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

std::vector<DeviceConfig> AllocationConfig(std::span<const DeviceRequestSpec> requests,
                                           std::span<const DeviceClassObject* const> classes,
                                           std::span<const DeviceConfig> claim_config) {
  std::vector<DeviceConfig> out;
  // Each class's entries go in once, at the first request of the class: where they start in
  // `out` and how many (a later request of the class adds its name to them).
  std::unordered_map<const DeviceClassObject*, std::pair<size_t, size_t>> added;
  for (size_t i = 0; i < requests.size() && i < classes.size(); ++i) {
    const DeviceClassObject* cls = classes[i];
    if (requests[i].first_available || !cls || cls->config.empty()) continue;
    auto [it, fresh] = added.emplace(cls, std::pair{out.size(), cls->config.size()});
    if (!fresh) {
      const auto [begin, count] = it->second;
      for (size_t k = begin; k < begin + count; ++k) out[k].requests.push_back(requests[i].name);
      continue;
    }
    for (const DeviceConfig& c : cls->config) {
      out.push_back({DeviceConfigSource::kClass, {requests[i].name}, c.driver, c.parameters});
    }
  }
  for (const DeviceConfig& c : claim_config) {
    DeviceConfig entry{DeviceConfigSource::kClaim, c.requests, c.driver, c.parameters};
    if (c.requests.empty()) {
      out.push_back(std::move(entry));
      continue;
    }
    for (const DeviceRequestSpec& r : requests) {
      if (std::count(c.requests.begin(), c.requests.end(), r.name)) out.push_back(entry);
    }
  }
  return out;
}

std::vector<DraClaimResult> ClaimResults(const DraView& view, const Snapshot& snap, int32_t pod) {
  std::vector<DraClaimResult> out;
  const DraPod* dp = view.PodOf(*snap.pods[pod].obj);
  if (!dp || view.session.empty()) return out;
  for (const DraPodClaim& c : dp->claims) {
    if (c.claim >= 0) out.push_back(ResultOf(view, snap, c));
  }
  return out;
}

std::optional<DraExtendedResult> ExtendedResult(const DraView& view, const Snapshot& snap,
                                                int32_t pod) {
  auto it = view.extended_session.find(pod);
  if (it == view.extended_session.end() || it->second.slots.empty()) return std::nullopt;
  const DraPod* dp = view.PodOf(*snap.pods[pod].obj);
  const DraExtendedSession& st = it->second;
  DraExtendedResult r;
  r.node = std::string(snap.nodes[st.node].name);
  std::vector<std::string_view> served;  // the resources DRA serves on the node
  std::vector<const DeviceClassObject*> classes;
  for (const DraExtendedRequest& e : dp->extended) {
    if (!NeedsDra(snap, st.node, e)) continue;
    r.requests.push_back(e.spec);
    classes.push_back(e.cls);
    served.push_back(e.resource);
  }
  r.config = AllocationConfig(r.requests, classes, {});
  for (const DraContainerMapping& m : dp->mappings) {
    if (std::count(served.begin(), served.end(), m.resource)) {
      r.mappings.push_back({std::string(m.container), std::string(m.resource), m.request});
    }
  }
  for (const DraSlot& slot : st.slots) {
    const DraDevice& d = view.node_devices[slot.node][slot.device];
    r.devices.push_back(
        {dp->extended[slot.request].spec.name, d.slice->driver, d.slice->pool, d.device->name});
  }
  return r;
}

bool NeedsDra(const Snapshot& snap, DraNodeId node, const DraExtendedRequest& r) {
  const Resources& allocatable = snap.nodes[node].obj->allocatable;
  return r.resource == kGpuResourceName ? allocatable.milli_gpu <= 0
                                        : allocatable.Scalar(r.resource_id) <= 0;
}

void AddDraGpusToNodes(const DraView& view, Snapshot& snap) {
  std::vector<ResourceId> unbounded;  // DRA-backed resources pods ask, but nvidia.com/gpu
  for (const DraPod& pod : view.pods) {
    for (const DraExtendedRequest& e : pod.extended) {
      if (e.resource != kGpuResourceName) unbounded.push_back(e.resource_id);
    }
  }
  std::sort(unbounded.begin(), unbounded.end());
  unbounded.erase(std::unique(unbounded.begin(), unbounded.end()), unbounded.end());
  for (size_t n = 0; n < snap.nodes.size(); ++n) {
    SnapNode& node = snap.nodes[n];
    const int64_t milli = view.node_gpus[n] * 1000;
    node.allocatable.milli_gpu += milli;
    node.idle.milli_gpu += milli;
    node.gpu_devices += view.node_gpus[n];
    for (ResourceId id : unbounded) {
      if (node.obj->allocatable.Scalar(id) > 0) continue;
      node.allocatable.SetScalar(id, node.allocatable.Scalar(id) + kDraDecides);
      node.idle.SetScalar(id, node.idle.Scalar(id) + kDraDecides);
    }
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
  const bool class_selects = cls && !cls->selectors.empty();
  const bool request_selects = !request.selectors.empty();
  int64_t matching = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DraDevice& d = devices[i];
    if (class_selects && !MatchesAll(cls->selectors, d, m.unsupported)) {
      if (!m.unsupported.empty()) return;
      continue;
    }
    if (request_selects && !MatchesAll(request.selectors, d, m.unsupported)) {
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
