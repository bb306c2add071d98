#pragma once
// NUMA topology of nodes and NUMA alignment of pods, as Kubernetes objects describe them: the
// NodeResourceTopology objects (topology.node.k8s.io/v1alpha2) that a node exporter publishes, and
// the placement records of pods (annotations kai.scheduler/numa-placement-observed, written by
// KAI's placement exporter, and kai.scheduler/numa-placement-predicted; BindRequest
// spec.predictedNUMAZones). Plain data, decoded by k8s/decode_numa.cc; NodeTopologyObject is in
// model/cluster.h.
#include <cstdint>
#include <string>
#include <vector>

#include "kai/core/resource/resources.h"

namespace kai {

// The kubelet Topology Manager policy a node reports (attribute topologyManagerPolicy).
enum class NumaPolicy : uint8_t { kNone, kBestEffort, kRestricted, kSingleNumaNode };
// Alignment per container, or once for the whole pod (attribute topologyManagerScope).
enum class NumaScope : uint8_t { kContainer, kPod };

// One NUMA node of a NodeResourceTopology (zones of type "Node"; other zone types are dropped,
// as the kubelet aligns at NUMA-node granularity only).
struct NumaZoneObject {
  std::string name;
  Resources allocatable;
  Resources available;
  friend bool operator==(const NumaZoneObject&, const NumaZoneObject&) = default;
};

// One entry of a placement record: what a pod holds on one zone (zone named as in the NRT).
struct NumaZoneAmount {
  std::string zone;
  Resources amount;
  friend bool operator==(const NumaZoneAmount&, const NumaZoneAmount&) = default;
};
using NumaPlacementRecord = std::vector<NumaZoneAmount>;

// What the kubelet aligns for a pod, per alignment unit. CPU counts only for a Guaranteed pod and
// only for containers asking whole CPUs (the static CPU manager's exclusive CPUs).
struct PodNumaRequest {
  bool guaranteed = false;            // QoS class Guaranteed
  Resources pod_scope;                // the whole pod (scope pod)
  std::vector<Resources> concurrent;  // app containers and native sidecars (scope container)
  std::vector<Resources> serial;      // ordinary init containers, each on its own
  NumaPlacementRecord observed;       // kai.scheduler/numa-placement-observed
  NumaPlacementRecord predicted;      // kai.scheduler/numa-placement-predicted
  friend bool operator==(const PodNumaRequest&, const PodNumaRequest&) = default;
};

}  // namespace kai
