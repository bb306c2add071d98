#pragma once
// Node and GPU accounting on the snapshot (KAI's node_info): what a pod in a status adds to and
// removes from its node, the shared GPU groups and their room, the GPU figures a node and a pod
// are counted for (whole, fractional, gpu-memory and MIG), and the queue-accounting GPUs of a
// pod. Whether a pod fits a node is snapshot/fit.h.
#include <cstdint>
#include <string_view>

#include "kai/core/resource/resources.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {

// Node accounting for a pod in `status` on `node` (KAI's node_info add/remove task), including
// the shared GPU groups in pod.gpu_groups.
void AddPodToNode(SnapNode& node, SnapPod& pod, PodStatus status);
void RemovePodFromNode(SnapNode& node, const SnapPod& pod, PodStatus status);

// GPU sharing arithmetic on a node (KAI's node_info). Memory a shared pod takes on each of its
// devices; its portion of one device there, in milli-GPU rounded up to 0.01 GPU (KAI).
int64_t SharedMemoryOn(const SnapNode& node, const GpuShare& share);
int64_t SharedPortionOn(const SnapNode& node, const GpuShare& share);
// A GPU amount in two measures: GPUs (milli-GPU) and GPU memory (MiB).
struct GpuAmount {
  int64_t milli_gpu = 0;
  int64_t memory_mib = 0;
};
// What a node can still give to GPU pods (KAI's GetSumOfIdleGPUs + GetSumOfReleasingGPUs): its
// idle and releasing whole GPUs (MIG instances as their GPUs) and memory, plus per shared GPU the
// fraction not allocated and the fraction being released (each rounded up to 0.01 of a device),
// and that memory.
GpuAmount AvailableGpus(const SnapNode& node);
// What a node's releasing GPUs are made of. KAI's figure (SnapNode::releasing) adds what
// Releasing pods free and subtracts what Pipelined pods were promised, even when those were
// placed on idle GPUs, so it goes negative after a cycle with pipelined pods.
struct ReleasingGpus {
  int64_t kai = 0;  // KAI's figure: freed - promised (milli-GPU)
  // Being freed: the whole GPUs of Releasing pods, and each shared GPU all of whose pods release.
  int64_t freed = 0;
  int64_t promised = 0;            // to Pipelined pods: freed - kai
  int64_t promised_from_idle = 0;  // the part of `promised` beyond `freed`, taken from idle GPUs
};
ReleasingGpus BreakdownReleasing(const Snapshot& snap, const SnapNode& node);
// What a pending pod asks of that (KAI's GpuRequirement GPUs() and GpuMemory()): whole GPUs and
// MIG instances' GPUs, fraction x devices, or a gpu-memory pod's memory (and no GPUs).
GpuAmount DemandedGpus(const SnapPod& pod);
// GPUs one MIG instance counts for in queue accounting: g of `nvidia.com/mig-<g>g.<m>gb` (KAI's
// GetGpusQuota); 0 for any other resource name.
int64_t MigProfileGpus(std::string_view resource_name);
// Milli-GPUs of the MIG instances among r's scalars, g GPUs per instance.
int64_t MigMilliGpus(const Resources& r);
// Queue-accounting GPUs of a pod that asks (pending): whole GPUs, fraction x devices rounded to
// 0.01 GPU, a gpu-memory pod's memory_request_milli_gpu, or its MIG instances' GPUs.
int64_t RequestedMilliGpu(const SnapPod& pod);
// Queue-accounting resources (cpu, memory, gpu) of a pod: accepted ones when it holds resources,
// requested ones otherwise.
Resources QueueResources(const SnapPod& pod);
// Accepted queue resources (cpu, memory, accepted GPUs) of a pod that holds or held resources.
Resources AcceptedQueueResources(const SnapPod& pod);
// Whole GPUs a pod can give back when it leaves its node, at most: its whole GPUs, or for a
// shared pod one device per group it is in (a group empties when its last pod leaves).
int64_t GpuFreedBound(const SnapPod& pod);
// Memory `group` can still take (free, or being freed), or -1 when it is not live (empty, or all
// of it being released).
inline int64_t GroupRoom(const SnapNode& node, const GpuGroup& g) {
  if (g.used == 0 || g.allocated == g.releasing) return -1;
  return node.gpu_memory_mib - g.allocated + g.releasing;
}
// Whether `group` can take `memory` more and is live.
inline bool GroupFits(const SnapNode& node, const GpuGroup& group, int64_t memory) {
  return GroupRoom(node, group) >= memory;
}
// Whether some live shared group of the node can take `memory` more.
inline bool AnyGroupFits(const SnapNode& node, int64_t memory) {
  return node.max_group_room >= memory;
}
// Recomputes node.max_group_room from its groups.
void RefreshGroupRoom(SnapNode& node);
GpuGroup* FindGroup(SnapNode& node, std::string_view name);
// True when the pod asks for neither GPUs (whole, fractional or MIG) nor anything but CPU/memory.
bool IsCpuOnly(const SnapPod& pod);
bool IsGpuNode(const SnapNode& node);

}  // namespace kai
