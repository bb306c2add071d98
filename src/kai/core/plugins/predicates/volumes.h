#pragma once
// A pod's volumes and host ports in placement: the kube-scheduler filters KAI's predicates plugin
// runs besides the node ones (NodePorts, VolumeBinding), and NodeVolumeLimits for CSI drivers,
// which KAI does not run (docs/deviations.md, "Volumes and ports").
//
// Host ports: a pod may not go to a node where a pod holding resources there uses one of its
// host ports (same port and protocol, and the same host IP or either on every address).
// Claims, per claim of the pod:
//   - it must exist and not be being deleted;
//   - bound: the node must satisfy its PersistentVolume's node affinity;
//   - unbound, and its StorageClass binds Immediate (or it has no class): the PersistentVolume
//     controller binds it, the pod waits (on every node);
//   - unbound WaitForFirstConsumer: a provisioning under way (the selected-node annotation) pins
//     the node; else a free volume of its class that satisfies it (size, access modes, volume
//     mode, node affinity; the smallest, a volume pre-bound to the claim first) must be on the
//     node, or the class must provision (not kubernetes.io/no-provisioner) and allow the node in
//     its allowedTopologies.
// A volume chosen for a pod placed in the session (or binding before it) is taken: no other
// claim gets it; removing the pod gives it back.
// CSI limits: with a CSINode for the node that gives the driver an allocatable count, the
// distinct volumes of that driver its pods use, with the pod's, may not exceed it. An unbound
// claim counts for its class's provisioner.
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kai/core/framework/session.h"
#include "kai/core/snapshot/storage.h"

namespace kai::plugins {

NodeVerdict CheckHostPorts(const Session& s, PodId pod, NodeId node);

// The volume an unbound WaitForFirstConsumer claim is bound to on `node` (kube-scheduler's
// choice, which kai's binder makes again when it binds): a volume pre-bound to the claim, else
// the smallest free one of its class that satisfies it; `taken` rules volumes out. Null: none.
const PersistentVolumeObject* FreeVolumeFor(
    const StorageView& view, const PersistentVolumeClaimObject& claim, const NodeObject& node,
    const std::function<bool(const PersistentVolumeObject&)>& taken);

class VolumePlacement {
 public:
  explicit VolumePlacement(const Session& s);
  NodeVerdict Check(const Session& s, PodId pod, NodeId node) const;
  void Allocated(const Session& s, PodId pod);
  void Deallocated(const Session& s, PodId pod);

 private:
  struct Taken {
    const PersistentVolumeObject* volume = nullptr;
    int pods = 0;  // pods placed in the session that mount the claim
  };
  NodeVerdict CheckClaim(const PodObject& pod, const PodVolumeClaim& ref, const SnapNode& node,
                         std::vector<const PersistentVolumeObject*>& chosen) const;
  NodeVerdict CheckUnbound(const PersistentVolumeClaimObject& claim, const SnapNode& node,
                           std::vector<const PersistentVolumeObject*>& chosen) const;
  const PersistentVolumeObject* FreeVolume(
      const PersistentVolumeClaimObject& claim, const SnapNode& node,
      const std::vector<const PersistentVolumeObject*>& chosen) const;
  NodeVerdict CheckLimits(const Session& s, const PodObject& pod, NodeId node) const;
  void AddHandles(const PodObject& pod,
                  std::unordered_map<std::string, std::vector<std::string>>& out) const;

  const StorageView* view_ = nullptr;
  // Unbound WaitForFirstConsumer claims ("ns/name") given a free volume in this session.
  std::unordered_map<std::string, Taken> claims_;
  std::unordered_map<std::string_view, std::string> volume_claim_;  // volume -> claim key
};

}  // namespace kai::plugins
