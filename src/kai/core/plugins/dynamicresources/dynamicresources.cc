// dynamicresources: pods' ResourceClaims (snapshot/dra.h), KAI's dynamicresources plugin.
// A predicate refuses a node when a claim of the pod cannot be served there:
//   per pod (every node alike): the claim does not exist, has its 256 consumers already, is a
//   shared GPU claim (named, not from a template) whose kai.scheduler/queue label is not the
//   job's queue, names a device class that does not exist, uses firstAvailable, or has a CEL
//   selector kai cannot evaluate;
//   per node: the claim is allocated to other nodes (before the cycle, or by a pod placed in
//   it), or the node has too few free devices matching its requests;
//   fractional GPU requests on nodes whose GPUs come from ResourceSlices (as KAI).
// Placing a pod allocates its unallocated claims on its node (devices in name order of the
// slices); removing the last pod using a claim frees it, so evictions free devices.
// DRA-backed extended resources (KEP-5004: a DeviceClass's extendedResourceName, or
// deviceclass.resource.kubernetes.io/<class>) on a node whose Node object does not list them: the
// node needs free devices for the pod's requests (snapshot/dra.h DraExtendedRequest), which a
// placement takes and an eviction frees; the BindRequest carries them for the binder's claim.
#include <algorithm>

#include "kai/core/framework/session.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/snapshot/dra.h"

namespace kai::plugins {
namespace {

constexpr int kMaxConsumers = 256;  // resource.k8s.io ResourceClaimReservedForMaxSize

using Slot = DraSlot;
using ClaimState = DraClaimSession;

// "<kind><name>: <what>" (kind "claim " or "extended resource "), built only for a refusal.
NodeVerdict DraVerdict(std::string_view kind, std::string_view name, std::string_view what,
                       bool never) {
  NodeVerdict v{
      FitCode::kDraClaim, {}, std::string(kind) + std::string(name) + ": " + std::string(what)};
  v.never = never;
  return v;
}

NodeVerdict ClaimVerdict(const PodClaimRef& ref, std::string_view what, bool never) {
  return DraVerdict("claim ", ref.name, what, never);
}

bool NamedIn(const ResourceClaimObject* obj, std::string_view pod) {
  if (!obj) return false;
  return std::any_of(obj->reserved_for.begin(), obj->reserved_for.end(),
                     [&](const ClaimConsumer& c) { return c.name == pod; });
}

class DynamicResourcesPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    view_ = s.snap().dra.get();
    s.AddPredicate(
        [this](const Session& ss, PodId pod, NodeId node) { return Check(ss, pod, node); });
    if (!view_) return;
    InitClaims(s.snap());
    s.AddAllocateHandler([this](Session& ss, PodId pod) { Allocated(ss, pod); });
    s.AddDeallocateHandler([this](Session& ss, PodId pod) { Deallocated(ss, pod); });
  }

 private:
  void InitClaims(const Snapshot& snap) {
    view_->session.assign(view_->claims.size(), ClaimState{});
    taken_.resize(snap.nodes.size());
    for (size_t n = 0; n < snap.nodes.size(); ++n) {
      taken_[n].assign(view_->node_devices[n].size(), false);
    }
    for (size_t c = 0; c < view_->claims.size(); ++c) InitClaim(c);
    for (const SnapPod& p : snap.pods) {
      if (!IsActiveUsed(p.status) || p.node == kNone) continue;
      const DraPod* dp = view_->PodOf(*p.obj);
      for (size_t i = 0; dp && i < dp->claims.size(); ++i) {
        const int32_t c = dp->claims[i].claim;
        if (c >= 0 && view_->claims[c].held) ++view_->session[c].consumers;
      }
    }
    for (size_t c = 0; c < view_->claims.size(); ++c) {
      const DraClaim& dc = view_->claims[c];
      if (dc.held && dc.implied) Bind(static_cast<int32_t>(c), dc.nodes.front());
    }
    // Running pods whose extended resources have no claim yet (a bind in flight, or kai
    // simulate's cluster, which creates none) hold devices on their node.
    view_->extended_session.clear();
    for (PodId p = 0; view_->any_extended && p < static_cast<PodId>(snap.pods.size()); ++p) {
      const SnapPod& pod = snap.pods[p];
      if (!IsActiveUsed(pod.status) || pod.node == kNone) continue;
      const DraPod* dp = view_->PodOf(*pod.obj);
      if (dp && !dp->extended.empty()) AllocateExtended(snap, p, *dp, pod.node);
    }
  }

  void InitClaim(size_t c) {
    const DraClaim& dc = view_->claims[c];
    ClaimState& st = view_->session[c];
    if (!dc.held) return;
    st.bound = true;
    st.nodes = dc.nodes;
    st.consumers = dc.foreign_consumers;
    for (const auto& [node, device] : dc.slots) {
      taken_[node][device] = true;
      st.slots.push_back({node, device, -1});
    }
  }

  NodeVerdict Check(const Session& s, PodId pod_id, NodeId node) const {
    const SnapPod& pod = s.snap().pods[pod_id];
    if (view_ && pod.share.IsShared() && view_->node_gpus[node] > 0) {
      return {FitCode::kGpuSharingUnsupported,
              {},
              "fractional/shared GPU pods are not supported on nodes with DRA GPUs"};
    }
    const bool extended = view_ && view_->any_extended && !pod.obj->extended_requests.empty();
    if (pod.obj->resource_claims.empty() && !extended) return {};
    if (!view_) {
      return ClaimVerdict(pod.obj->resource_claims[0], "no ResourceClaim objects exist", true);
    }
    const DraPod* dp = view_->PodOf(*pod.obj);
    if (!dp) return {};
    if (memo_pod_ != pod_id || memo_version_ != version_) {
      memo_pod_ = pod_id;
      memo_version_ = version_;
      memo_ = CheckPod(s, pod, *dp);  // the same on every node until a claim changes
    }
    if (!memo_.Fits()) return memo_;
    return CheckNode(s.snap(), *dp, node);
  }

  NodeVerdict CheckPod(const Session& s, const SnapPod& pod, const DraPod& dp) const {
    for (const DraPodClaim& c : dp.claims) {
      if (c.claim < 0) {
        return ClaimVerdict(
            *c.ref,
            c.ref->claim_name.empty() && c.ref->FromTemplate()
                ? "ResourceClaimTemplate " + c.ref->template_name + " does not exist"
                : "ResourceClaim " + c.ref->claim_name + " does not exist",
            true);
      }
      if (NodeVerdict v = CheckClaim(s, pod, c); !v.Fits()) return v;
    }
    return {};
  }

  NodeVerdict CheckClaim(const Session& s, const SnapPod& pod, const DraPodClaim& c) const {
    const DraClaim& dc = view_->claims[c.claim];
    const ClaimState& st = view_->session[c.claim];
    if (dc.reserved + st.added >= kMaxConsumers && !NamedIn(dc.obj, pod.name)) {
      return ClaimVerdict(*c.ref, "has reached its maximum of 256 consumers", false);
    }
    if (!c.ref->FromTemplate() && dc.gpu) {
      if (NodeVerdict v = CheckQueueLabel(s, pod, *c.ref, dc); !v.Fits()) return v;
    }
    if (st.bound) return {};
    for (size_t i = 0; i < dc.requests.size(); ++i) {
      const DeviceRequestSpec& r = dc.requests[i];
      if (r.first_available) {
        return ClaimVerdict(*c.ref, "request " + r.name + " uses firstAvailable (not supported)",
                            true);
      }
      if (!dc.classes[i]) {
        return ClaimVerdict(*c.ref, "device class " + r.device_class + " does not exist", true);
      }
    }
    return {};
  }

  NodeVerdict CheckQueueLabel(const Session& s, const SnapPod& pod, const PodClaimRef& ref,
                              const DraClaim& dc) const {
    if (pod.job == kNone || !dc.obj) return {};
    const SnapJob& job = s.snap().jobs[pod.job];
    const std::string_view queue = job.queue == kNone ? "" : s.snap().queues[job.queue].name;
    auto it = dc.obj->meta.labels.find(keys::kQueueLabel);
    if (it == dc.obj->meta.labels.end() || it->second.empty()) {
      return ClaimVerdict(ref, "a shared GPU claim needs the kai.scheduler/queue label", true);
    }
    if (it->second != queue) {
      return ClaimVerdict(ref,
                          "a shared GPU claim of queue " + std::string(it->second) +
                              ", not of the job's queue " + std::string(queue),
                          true);
    }
    return {};
  }

  NodeVerdict CheckNode(const Snapshot& snap, const DraPod& dp, NodeId node) const {
    scratch_ = taken_[node];  // storage reused: no allocation per node
    for (const DraPodClaim& c : dp.claims) {
      const ClaimState& st = view_->session[c.claim];
      if (st.bound) {
        if (st.nodes.empty() || std::count(st.nodes.begin(), st.nodes.end(), node)) continue;
        return ClaimVerdict(*c.ref, "allocated on another node", false);
      }
      const DraClaim& dc = view_->claims[c.claim];
      for (size_t i = 0; i < dc.requests.size(); ++i) {
        const DeviceRequestSpec& r = dc.requests[i];
        NodeVerdict v = CheckRequest("claim ", c.ref->name, r, dc.classes[i], node,
                                     IsGpuDeviceClassName(r.device_class), scratch_);
        if (!v.Fits()) return v;
      }
    }
    if (HeldOn(dp, node)) return {};  // its devices are held by the binder's claim
    for (const DraExtendedRequest& e : dp.extended) {
      if (!NeedsDra(snap, node, e)) continue;
      NodeVerdict v =
          CheckRequest("extended resource ", e.resource, e.spec, e.cls, node, e.gpu, scratch_);
      if (!v.Fits()) return v;
    }
    return {};
  }

  // GPU requests are counted by the node's GPUs (snapshot/dra.h), which evictions free: for them
  // the node needs enough matching devices, free or not (a disruptive action checks predicates
  // before it frees anything). Other requests need free matching devices.
  NodeVerdict CheckRequest(std::string_view kind, std::string_view name, const DeviceRequestSpec& r,
                           const DeviceClassObject* cls, NodeId node, bool gpu,
                           std::vector<bool>& taken) const {
    DeviceMatch& m = match_;
    MatchDevicesInto(*view_, node, r, cls, taken, /*count_taken=*/gpu, m);
    if (!m.unsupported.empty()) {
      return DraVerdict(kind, name, "CEL selector not supported by kai: " + m.unsupported, true);
    }
    if (!m.enough) {
      return DraVerdict(kind, name, "device class " + r.device_class + " matches no free device",
                        false);
    }
    for (int32_t d : m.devices) taken[d] = true;
    return {};
  }

  void Allocated(Session& s, PodId pod_id) {
    ++version_;
    const SnapPod& pod = s.snap().pods[pod_id];
    const DraPod* dp = view_->PodOf(*pod.obj);
    if (!dp || pod.node == kNone) return;
    for (const DraPodClaim& c : dp->claims) {
      if (c.claim < 0) continue;
      ClaimState& st = view_->session[c.claim];
      if (!NamedIn(view_->claims[c.claim].obj, pod.name)) ++st.added;
      if (st.consumers++ == 0 && !st.bound) Bind(c.claim, pod.node);
    }
    if (!dp->extended.empty()) AllocateExtended(s.snap(), pod_id, *dp, pod.node);
  }

  // Whether the claim the binder made for the pod's extended resources holds devices on `node`
  // (elsewhere, as for a pod consolidation moves, the pod needs devices of its own there).
  bool HeldOn(const DraPod& dp, NodeId node) const {
    if (dp.extended_claim < 0) return false;
    const std::vector<DraNodeId>& nodes = view_->claims[dp.extended_claim].nodes;
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  }

  // Devices of the node for the pod's extended resources that DRA serves there (none when the
  // binder's claim holds them already).
  void AllocateExtended(const Snapshot& snap, PodId pod, const DraPod& dp, NodeId node) {
    if (HeldOn(dp, node)) return;
    DraExtendedSession st{node, {}};
    for (size_t r = 0; r < dp.extended.size(); ++r) {
      const DraExtendedRequest& e = dp.extended[r];
      if (!NeedsDra(snap, node, e)) continue;
      MatchDevicesInto(*view_, node, e.spec, e.cls, taken_[node], false, match_);
      for (int32_t d : match_.devices) {
        taken_[node][d] = true;
        st.slots.push_back({node, d, static_cast<int32_t>(r)});
      }
    }
    if (!st.slots.empty()) view_->extended_session[pod] = std::move(st);
  }

  void DeallocateExtended(PodId pod) {
    auto it = view_->extended_session.find(pod);
    if (it == view_->extended_session.end()) return;
    for (const Slot& slot : it->second.slots) taken_[slot.node][slot.device] = false;
    view_->extended_session.erase(it);
  }

  void Bind(int32_t claim, NodeId node) {
    ClaimState& st = view_->session[claim];
    st.bound = true;
    st.nodes = {node};
    const DraClaim& dc = view_->claims[claim];
    for (size_t r = 0; r < dc.requests.size(); ++r) {
      MatchDevicesInto(*view_, node, dc.requests[r], dc.classes[r], taken_[node], false, match_);
      for (int32_t d : match_.devices) {
        taken_[node][d] = true;
        st.slots.push_back({node, d, static_cast<int32_t>(r)});
      }
    }
  }

  void Deallocated(Session& s, PodId pod_id) {
    ++version_;
    const SnapPod& pod = s.snap().pods[pod_id];
    const DraPod* dp = view_->PodOf(*pod.obj);
    if (!dp) return;
    DeallocateExtended(pod_id);
    for (const DraPodClaim& c : dp->claims) {
      if (c.claim < 0) continue;
      ClaimState& st = view_->session[c.claim];
      if (!NamedIn(view_->claims[c.claim].obj, pod.name)) --st.added;
      if (--st.consumers > 0) continue;
      for (const Slot& slot : st.slots) taken_[slot.node][slot.device] = false;
      st = ClaimState{};
    }
  }

  DraView* view_ = nullptr;
  // The predicate's scratch (one session is checked by one thread).
  mutable std::vector<bool> scratch_;
  mutable DeviceMatch match_;
  // The per-pod part of the last check, valid while version_ (claim changes) is unchanged.
  uint64_t version_ = 0;
  mutable PodId memo_pod_ = kNone;
  mutable uint64_t memo_version_ = 0;
  mutable NodeVerdict memo_;
  std::vector<PodId> placed_;             // pods the session allocated (some removed again since)
  std::vector<std::vector<bool>> taken_;  // devices per node held now
};

}  // namespace

std::unique_ptr<Plugin> MakeDynamicResources() {
  return std::make_unique<DynamicResourcesPlugin>();
}

}  // namespace kai::plugins
