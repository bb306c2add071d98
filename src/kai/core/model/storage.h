#pragma once
// Storage objects the placement reads (kube-scheduler's VolumeBinding and, for CSI volumes,
// NodeVolumeLimits): PersistentVolumes, PersistentVolumeClaims,
// StorageClasses and CSINodes. Plain data, decoded by k8s/decode_storage.cc; the snapshot's view
// of them (claims by name, volumes free to bind) lives in snapshot/storage.h.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kai/core/model/meta.h"
#include "kai/core/model/node_selector.h"
#include "kai/core/util/interned_string.h"

namespace kai {

// The access modes of a volume or claim, as bits (ReadWriteOnce, ReadOnlyMany, ReadWriteMany,
// ReadWriteOncePod).
enum AccessMode : uint8_t {
  kReadWriteOnce = 1,
  kReadOnlyMany = 2,
  kReadWriteMany = 4,
  kReadWriteOncePod = 8,
};
// Each mode with its API name (the decoder and the encoder read this one table).
inline constexpr std::pair<AccessMode, std::string_view> kAccessModeNames[] = {
    {kReadWriteOnce, "ReadWriteOnce"},
    {kReadOnlyMany, "ReadOnlyMany"},
    {kReadWriteMany, "ReadWriteMany"},
    {kReadWriteOncePod, "ReadWriteOncePod"},
};

// v1 PersistentVolume.
struct PersistentVolumeObject {
  ObjectMeta meta;
  InternedString storage_class;  // spec.storageClassName ("" = none)
  int64_t capacity = 0;          // spec.capacity.storage, bytes
  uint8_t access_modes = 0;
  bool block = false;  // spec.volumeMode Block (else Filesystem)
  // spec.nodeAffinity.required.nodeSelectorTerms, ORed; empty = every node.
  std::vector<NodeSelectorTerm> node_affinity;
  std::string claim_ns, claim_name, claim_uid;  // spec.claimRef ("" = not bound nor pre-bound)
  InternedString phase;                         // status.phase (Available, Bound, Released...)
  InternedString csi_driver;                    // spec.csi.driver ("" = not a CSI volume)
  std::string volume_handle;                    // spec.csi.volumeHandle
  friend bool operator==(const PersistentVolumeObject&, const PersistentVolumeObject&) = default;
};

// v1 PersistentVolumeClaim.
struct PersistentVolumeClaimObject {
  ObjectMeta meta;
  bool class_set = false;        // spec.storageClassName given (else the default class applies)
  InternedString storage_class;  // spec.storageClassName
  std::string volume_name;       // spec.volumeName: the volume it is bound (or pre-bound) to
  InternedString phase;          // status.phase (Pending, Bound, Lost)
  int64_t request = 0;           // spec.resources.requests.storage, bytes
  uint8_t access_modes = 0;
  bool block = false;
  std::string selected_node;  // annotation volume.kubernetes.io/selected-node
  friend bool operator==(const PersistentVolumeClaimObject&,
                         const PersistentVolumeClaimObject&) = default;
};

// storage.k8s.io/v1 StorageClass.
struct StorageClassObject {
  ObjectMeta meta;
  std::string provisioner;
  bool wait_for_first_consumer = false;  // volumeBindingMode WaitForFirstConsumer
  bool is_default = false;  // annotation storageclass.kubernetes.io/is-default-class: "true"
  // allowedTopologies: ORed terms of ANDed `In` requirements; empty = every node.
  std::vector<NodeSelectorTerm> allowed_topologies;
  friend bool operator==(const StorageClassObject&, const StorageClassObject&) = default;
};

// One driver of a CSINode: how many of its volumes the node may attach (unset = no limit).
struct CsiNodeDriver {
  std::string name;
  int64_t allocatable = -1;
  friend bool operator==(const CsiNodeDriver&, const CsiNodeDriver&) = default;
};

// storage.k8s.io/v1 CSINode (named as its node).
struct CsiNodeObject {
  ObjectMeta meta;
  std::vector<CsiNodeDriver> drivers;
  friend bool operator==(const CsiNodeObject&, const CsiNodeObject&) = default;
};

struct StorageObjects {
  std::vector<PersistentVolumeObject> volumes;
  std::vector<PersistentVolumeClaimObject> claims;
  std::vector<StorageClassObject> classes;
  std::vector<CsiNodeObject> csi_nodes;
  bool empty() const {
    return volumes.empty() && claims.empty() && classes.empty() && csi_nodes.empty();
  }
};

// What a pod mounts through a claim: a persistentVolumeClaim volume, or an ephemeral volume (its
// claim is named "<pod>-<volume>").
struct PodVolumeClaim {
  std::string claim;
  bool ephemeral = false;
  friend bool operator==(const PodVolumeClaim&, const PodVolumeClaim&) = default;
};

// A container port with a hostPort.
struct HostPort {
  int32_t port = 0;
  InternedString protocol;  // TCP (default), UDP, SCTP
  std::string host_ip;      // "" = every address (0.0.0.0)
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

}  // namespace kai
