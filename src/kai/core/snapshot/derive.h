#pragma once
// The pieces BuildSnapshot is made of, shared with the incremental SnapshotCache (cache.h) so that
// both derive every snapshot object by the same code. Internal to snapshot/.
#include <string_view>
#include <unordered_map>
#include <utility>

#include "kai/core/snapshot/snapshot.h"

namespace kai::snapshot_detail {

// Objects are looked up by (namespace, name) without building key strings.
using NsName = std::pair<std::string_view, std::string_view>;
struct NsNameHash {
  size_t operator()(const NsName& k) const;
};
template <class V>
using NsNameMap = std::unordered_map<NsName, V, NsNameHash>;

// The node and GPU groups a live BindRequest selected for a pod.
struct BindInfo {
  std::string_view node;
  const BindRequestObject* obj;
};
NsNameMap<BindInfo> LiveBindRequests(const ClusterState& state);

// What deriving one pod needs from the rest of the cluster.
struct PodContext {
  const NsNameMap<BindInfo>* binds = nullptr;
  // Smallest and largest per-device GPU memory of the cluster (gpu-memory pods' GPU counts).
  std::pair<int64_t, int64_t> memory_range;
  UnixSeconds now = 0;
  std::string_view scheduler_name;  // pods with this spec.schedulerName are kai's to schedule
};
std::pair<int64_t, int64_t> GpuMemoryRange(const Snapshot& snap);

// Points a snapshot pod at its object (obj and the ns/name/uid views into it).
void PointAt(SnapPod& sp, const PodObject& p);

// A pod's own fields, status and node (no job membership, no node accounting).
SnapPod DerivePod(const Snapshot& snap, const PodObject& p, const PodContext& ctx);

// Where a pod belongs among the jobs: its job and PodSet, or the job whose PodSets do not include
// the pod's SubGroup (the pod is then left out of the job), or neither.
struct Membership {
  JobId job = kNone;
  SubGroupIndex sub_group = kNone;
  JobId invalid_in = kNone;
};
Membership MembershipOf(const Snapshot& snap, const NsNameMap<JobId>& job_by_key,
                        const SnapPod& pod);

// A job from its PodGroup (tree, priority, preemptibility, status timestamps), without pods.
SnapJob DeriveJob(const ClusterState& state, const Snapshot& snap, const PodGroupObject& pg);

// Node fields that come from the Node object, before any pod is added.
SnapNode DeriveNode(const NodeObject& n);

}  // namespace kai::snapshot_detail
