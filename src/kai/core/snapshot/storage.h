#pragma once
// The snapshot's view of the storage objects (model/storage.h): claims by namespace and name,
// volumes by name, the default StorageClass, CSINodes by node, and the volumes a
// WaitForFirstConsumer claim may still be bound to. Built whole with the snapshot (a change of a
// storage object rebuilds it); it points into the ClusterState.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kai/core/model/cluster.h"

namespace kai {

// "namespace/name": how claims are keyed (StorageView::claims, the placement's taken claims).
std::string ClaimKey(std::string_view ns, std::string_view name);

struct StorageView {
  std::unordered_map<std::string, const PersistentVolumeClaimObject*> claims;  // "ns/name"
  std::unordered_map<std::string_view, const PersistentVolumeObject*> volumes;
  std::unordered_map<std::string_view, const StorageClassObject*> classes;
  std::unordered_map<std::string_view, const CsiNodeObject*> csi_nodes;
  const StorageClassObject* default_class = nullptr;  // newest default, as the API server picks
  // Volumes not bound to a claim (pre-bound ones included), not being deleted nor released, by
  // capacity then name: kube-scheduler binds a claim to the smallest volume that satisfies it.
  std::vector<const PersistentVolumeObject*> free_volumes;
  // The same volumes split for lookups per node: those whose node affinity is the one
  // requirement `kubernetes.io/hostname In [...]` (local volumes) by hostname, the others in
  // `free_elsewhere`; each list in free_volumes' order. A node's candidates are its hostname's
  // list and free_elsewhere, not every free volume of the cluster.
  std::unordered_map<std::string_view, std::vector<const PersistentVolumeObject*>> free_by_host;
  std::vector<const PersistentVolumeObject*> free_elsewhere;

  const PersistentVolumeClaimObject* Claim(std::string_view ns, std::string_view name) const;
  const PersistentVolumeObject* Volume(std::string_view name) const;
  // The claim's class name: spec.storageClassName, or the default class's when it is unset.
  std::string_view ClassName(const PersistentVolumeClaimObject& claim) const;
  const StorageClassObject* Class(std::string_view name) const;
};

std::shared_ptr<const StorageView> BuildStorageView(const StorageObjects& objects);

}  // namespace kai
