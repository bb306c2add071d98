#pragma once
// A pod's observed NUMA placement: what the kubelet's pod-resources API says the pod holds (its
// containers' devices and pinned memory with their NUMA nodes, its exclusive CPU ids) attributed
// to NUMA zones, and the text of the kai.scheduler/numa-placement-observed annotation the `numa`
// plugin reads (KAI's pkg/npe/placement). Pure.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kai/core/numaexporter/cpu_topology.h"

namespace kai::numaexporter {

// The pod-resources API's answer, as plain data (daemons/numaexporter converts the messages).
struct DeviceAllocation {
  std::string resource;             // e.g. nvidia.com/gpu
  int64_t device_count = 0;         // how many device ids
  std::vector<int64_t> numa_nodes;  // topology.nodes[].ID
};
struct MemoryAllocation {
  std::string memory_type;  // "memory" or "" for regular memory, else e.g. hugepages-2Mi
  uint64_t size = 0;        // bytes
  std::vector<int64_t> numa_nodes;
};
struct ContainerAllocation {
  std::string name;
  std::vector<DeviceAllocation> devices;
  std::vector<int64_t> cpu_ids;  // exclusive CPUs (the static CPU manager's)
  std::vector<MemoryAllocation> memory;
};
struct PodAllocation {
  std::string ns, name;
  std::vector<ContainerAllocation> containers;
};

// Zone ("node-<N>", as NodeResourceTopology names NUMA zones) -> resource name -> amount in whole
// units (CPUs, devices, bytes). Both levels sorted, so the text is deterministic.
using Placement = std::map<std::string, std::map<std::string, int64_t>>;

// The pod's resources attributed to zones. A device or memory block pinned to other than exactly
// one NUMA node, a CPU the topology does not know, and zero amounts are left out (nothing to
// attribute). Amounts add up saturating. Empty: the pod holds nothing topology-aligned.
Placement ComputePlacement(const PodAllocation& pod, const CpuToNuma& cpus);

// The annotation's text, a JSON list sorted by zone with each amount a Kubernetes quantity in
// canonical decimal form (as KAI writes it):
// [{"zone":"node-0","amount":{"cpu":"8","nvidia.com/gpu":"2"}}]
std::string PlacementText(const Placement& placement);

// A whole number as Kubernetes prints a DecimalSI quantity: "1500", "2k", "3M", "1G".
std::string DecimalQuantity(int64_t value);

}  // namespace kai::numaexporter
