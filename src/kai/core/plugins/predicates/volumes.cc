#include "kai/core/plugins/predicates/volumes.h"

#include <algorithm>
#include <tuple>

#include "kai/core/k8s/keys.h"
#include "kai/core/plugins/predicates/predicates.h"

namespace kai::plugins {
namespace {

NodeVerdict VolumeVerdict(std::string detail) {
  NodeVerdict v{FitCode::kVolumeBinding, {}, std::move(detail)};
  v.never = true;  // evicting pods frees no volume and binds no claim
  return v;
}

std::string ClaimRef(std::string_view claim) {
  return "persistentvolumeclaim \"" + std::string(claim) + "\"";
}

NodeVerdict AffinityConflict(const PersistentVolumeObject& pv, std::string_view claim) {
  return VolumeVerdict("volume node affinity conflict (" + ClaimRef(claim) +
                       ", persistentvolume \"" + pv.meta.name + "\")");
}

bool Conflicts(const HostPort& a, const HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  return a.host_ip.empty() || b.host_ip.empty() || a.host_ip == b.host_ip;
}

bool WaitsForConsumer(const StorageClassObject* sc) { return sc && sc->wait_for_first_consumer; }

// The node's local volumes (by its hostname label); the volumes of any other affinity are
// view.free_elsewhere. Both lists are in free_volumes' order.
const std::vector<const PersistentVolumeObject*>& LocalVolumes(const StorageView& view,
                                                               const NodeObject& node) {
  static const std::vector<const PersistentVolumeObject*> kNone;
  auto label = node.meta.labels.find("kubernetes.io/hostname");
  if (label == node.meta.labels.end()) return kNone;
  auto it = view.free_by_host.find(label->second);
  return it == view.free_by_host.end() ? kNone : it->second;
}

bool Smaller(const PersistentVolumeObject* a, const PersistentVolumeObject* b) {
  return std::tie(a->capacity, a->meta.name) < std::tie(b->capacity, b->meta.name);
}

}  // namespace

NodeVerdict CheckHostPorts(const Session& s, PodId pod_id, NodeId node_id) {
  const SnapPod& pod = s.snap().pods[pod_id];
  if (!pod.uses_host_ports) return {};
  for (PodId other : s.snap().nodes[node_id].pods) {
    const SnapPod& o = s.snap().pods[other];
    if (other == pod_id || !o.uses_host_ports) continue;
    for (const HostPort& want : pod.obj->host_ports) {
      for (const HostPort& held : o.obj->host_ports) {
        if (!Conflicts(want, held)) continue;
        return {FitCode::kHostPortConflict,
                {},
                std::to_string(want.port) + "/" + std::string(want.protocol.view())};
      }
    }
  }
  return {};
}

VolumePlacement::VolumePlacement(const Session& s) : view_(s.snap().storage.get()) {
  if (!view_) return;
  // Pods placed before the session (binding) keep the volumes their claims will be bound to.
  for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.uses_claims && pod.node != kNone && IsActiveUsed(pod.status)) Allocated(s, p);
  }
}

NodeVerdict VolumePlacement::Check(const Session& s, PodId pod_id, NodeId node_id) const {
  const SnapPod& pod = s.snap().pods[pod_id];
  if (!pod.uses_claims) return {};
  const SnapNode& node = s.snap().nodes[node_id];
  std::vector<const PersistentVolumeObject*> chosen;  // by the pod's earlier claims
  for (const PodVolumeClaim& ref : pod.obj->volume_claims) {
    if (NodeVerdict v = CheckClaim(*pod.obj, ref, node, chosen); !v.Fits()) return v;
  }
  return CheckLimits(s, *pod.obj, node_id);
}

NodeVerdict VolumePlacement::CheckClaim(const PodObject& pod, const PodVolumeClaim& ref,
                                        const SnapNode& node,
                                        std::vector<const PersistentVolumeObject*>& chosen) const {
  const PersistentVolumeClaimObject* claim = view_ ? view_->Claim(pod.meta.ns, ref.claim) : nullptr;
  if (!claim) {
    return VolumeVerdict(ref.ephemeral ? "waiting for the ephemeral volume controller to create " +
                                             ClaimRef(ref.claim)
                                       : ClaimRef(ref.claim) + " not found");
  }
  if (claim->meta.deletion) return VolumeVerdict(ClaimRef(ref.claim) + " is being deleted");
  if (claim->volume_name.empty()) return CheckUnbound(*claim, node, chosen);
  const PersistentVolumeObject* pv = view_->Volume(claim->volume_name);
  if (!pv) {
    return VolumeVerdict(ClaimRef(ref.claim) + " is bound to persistentvolume \"" +
                         claim->volume_name + "\", which does not exist");
  }
  if (!MatchesRequiredNodeAffinity(pv->node_affinity, *node.obj)) {
    return AffinityConflict(*pv, ref.claim);
  }
  return {};
}

NodeVerdict VolumePlacement::CheckUnbound(
    const PersistentVolumeClaimObject& claim, const SnapNode& node,
    std::vector<const PersistentVolumeObject*>& chosen) const {
  const std::string& name = claim.meta.name;
  const std::string_view cls = view_->ClassName(claim);
  const StorageClassObject* sc = cls.empty() ? nullptr : view_->Class(cls);
  if (!cls.empty() && !sc) {
    return VolumeVerdict(ClaimRef(name) + ": storageclass \"" + std::string(cls) + "\" not found");
  }
  if (!WaitsForConsumer(sc)) {
    return VolumeVerdict("unbound immediate " + ClaimRef(name) +
                         " (the volume controller binds it before the pod can be placed)");
  }
  if (!claim.selected_node.empty()) {
    if (claim.selected_node == node.name) return {};
    return VolumeVerdict(ClaimRef(name) + " is being provisioned on node " + claim.selected_node);
  }
  if (auto it = claims_.find(ClaimKey(claim.meta.ns, name)); it != claims_.end()) {
    const PersistentVolumeObject& pv = *it->second.volume;
    if (MatchesRequiredNodeAffinity(pv.node_affinity, *node.obj)) return {};
    return AffinityConflict(pv, name);
  }
  if (const PersistentVolumeObject* pv = FreeVolume(claim, node, chosen)) {
    chosen.push_back(pv);
    return {};
  }
  if (sc->provisioner == keys::kNoProvisioner) {
    return VolumeVerdict("no free persistentvolume of storageclass \"" + std::string(cls) +
                         "\" for " + ClaimRef(name));
  }
  if (!MatchesRequiredNodeAffinity(sc->allowed_topologies, *node.obj)) {
    return VolumeVerdict("storageclass \"" + std::string(cls) +
                         "\" does not provision on the node (allowedTopologies) for " +
                         ClaimRef(name));
  }
  return {};
}

const PersistentVolumeObject* FreeVolumeFor(
    const StorageView& view, const PersistentVolumeClaimObject& claim, const NodeObject& node,
    const std::function<bool(const PersistentVolumeObject&)>& taken) {
  const std::string_view cls = view.ClassName(claim);
  // Each list is in (capacity, name) order, so a list's first fit is its smallest; a volume
  // pre-bound to the claim wins over any free one.
  const PersistentVolumeObject *smallest = nullptr, *pre_bound_smallest = nullptr;
  auto keep = [](const PersistentVolumeObject*& best, const PersistentVolumeObject* pv) {
    if (pv && (!best || Smaller(pv, best))) best = pv;
  };
  for (const auto* list : {&LocalVolumes(view, node), &view.free_elsewhere}) {
    const PersistentVolumeObject *first = nullptr, *first_pre_bound = nullptr;
    for (const PersistentVolumeObject* pv : *list) {
      const bool pre_bound = !pv->claim_name.empty();
      if (pv->storage_class != cls || pv->capacity < claim.request) continue;
      if (pre_bound && (pv->claim_ns != claim.meta.ns || pv->claim_name != claim.meta.name)) {
        continue;
      }
      if ((pv->access_modes & claim.access_modes) != claim.access_modes) continue;
      if (pv->block != claim.block || taken(*pv)) continue;
      if (!MatchesRequiredNodeAffinity(pv->node_affinity, node)) continue;
      if (pre_bound) {
        first_pre_bound = pv;
        break;
      }
      if (!first) first = pv;
    }
    keep(pre_bound_smallest, first_pre_bound);
    keep(smallest, first);
  }
  return pre_bound_smallest ? pre_bound_smallest : smallest;
}

const PersistentVolumeObject* VolumePlacement::FreeVolume(
    const PersistentVolumeClaimObject& claim, const SnapNode& node,
    const std::vector<const PersistentVolumeObject*>& chosen) const {
  const std::string key = ClaimKey(claim.meta.ns, claim.meta.name);
  return FreeVolumeFor(*view_, claim, *node.obj, [&](const PersistentVolumeObject& pv) {
    auto it = volume_claim_.find(pv.meta.name);
    if (it != volume_claim_.end() && it->second != key) return true;
    return std::find(chosen.begin(), chosen.end(), &pv) != chosen.end();
  });
}

void VolumePlacement::AddHandles(
    const PodObject& pod, std::unordered_map<std::string, std::vector<std::string>>& out) const {
  for (const PodVolumeClaim& ref : pod.volume_claims) {
    const PersistentVolumeClaimObject* claim = view_->Claim(pod.meta.ns, ref.claim);
    if (!claim) continue;
    const PersistentVolumeObject* pv = nullptr;
    if (!claim->volume_name.empty()) {
      pv = view_->Volume(claim->volume_name);
    } else if (auto it = claims_.find(ClaimKey(claim->meta.ns, claim->meta.name));
               it != claims_.end()) {
      pv = it->second.volume;
    }
    if (pv) {
      if (!pv->csi_driver.empty()) {
        out[pv->csi_driver].push_back(pv->volume_handle.empty() ? pv->meta.name
                                                                : pv->volume_handle);
      }
      continue;
    }
    const StorageClassObject* sc = view_->Class(view_->ClassName(*claim));
    if (sc && sc->provisioner != keys::kNoProvisioner) {
      out[sc->provisioner].push_back("claim " + ClaimKey(claim->meta.ns, claim->meta.name));
    }
  }
}

static size_t Distinct(std::vector<std::string>& handles) {
  std::sort(handles.begin(), handles.end());
  handles.erase(std::unique(handles.begin(), handles.end()), handles.end());
  return handles.size();
}

NodeVerdict VolumePlacement::CheckLimits(const Session& s, const PodObject& pod,
                                         NodeId node_id) const {
  const SnapNode& node = s.snap().nodes[node_id];
  if (!view_) return {};
  auto csi = view_->csi_nodes.find(node.name);
  if (csi == view_->csi_nodes.end()) return {};
  std::unordered_map<std::string, std::vector<std::string>> mine, held;
  AddHandles(pod, mine);
  const auto& drivers = csi->second->drivers;
  if (std::none_of(drivers.begin(), drivers.end(), [&](const CsiNodeDriver& d) {
        return d.allocatable >= 0 && mine.count(d.name);
      }))
    return {};
  for (PodId other : node.pods) {
    const SnapPod& o = s.snap().pods[other];
    if (o.uses_claims && o.obj != &pod) AddHandles(*o.obj, held);
  }
  for (const CsiNodeDriver& d : drivers) {
    auto it = mine.find(d.name);
    if (d.allocatable < 0 || it == mine.end()) continue;
    std::vector<std::string>& all = held[d.name];
    all.insert(all.end(), it->second.begin(), it->second.end());
    if (static_cast<int64_t>(Distinct(all)) <= d.allocatable) continue;
    // No counts in the detail: verdicts of different nodes summarise into one reason.
    return {FitCode::kVolumeLimit,
            {},
            "CSI driver " + d.name + " attaches at most " + std::to_string(d.allocatable) +
                " volumes per node"};
  }
  return {};
}

void VolumePlacement::Allocated(const Session& s, PodId pod_id) {
  const SnapPod& pod = s.snap().pods[pod_id];
  if (!view_ || !pod.uses_claims || pod.node == kNone) return;
  const SnapNode& node = s.snap().nodes[pod.node];
  std::vector<const PersistentVolumeObject*> chosen;
  for (const PodVolumeClaim& ref : pod.obj->volume_claims) {
    const PersistentVolumeClaimObject* claim = view_->Claim(pod.obj->meta.ns, ref.claim);
    if (!claim || !claim->volume_name.empty() || !claim->selected_node.empty()) continue;
    if (!WaitsForConsumer(view_->Class(view_->ClassName(*claim)))) continue;
    std::string key = ClaimKey(claim->meta.ns, claim->meta.name);
    if (auto it = claims_.find(key); it != claims_.end()) {
      ++it->second.pods;
      continue;
    }
    const PersistentVolumeObject* pv = FreeVolume(*claim, node, chosen);
    if (!pv) continue;  // provisioned on the node instead
    chosen.push_back(pv);
    volume_claim_[pv->meta.name] = key;
    claims_.emplace(std::move(key), Taken{pv, 1});
  }
}

void VolumePlacement::Deallocated(const Session& s, PodId pod_id) {
  const SnapPod& pod = s.snap().pods[pod_id];
  if (!view_ || !pod.uses_claims) return;
  for (const PodVolumeClaim& ref : pod.obj->volume_claims) {
    auto it = claims_.find(ClaimKey(pod.obj->meta.ns, ref.claim));
    if (it == claims_.end() || --it->second.pods > 0) continue;
    volume_claim_.erase(it->second.volume->meta.name);
    claims_.erase(it);
  }
}

}  // namespace kai::plugins
