#pragma once
// An incremental snapshot: keeps the Snapshot of a ClusterState from one cycle to the next and
// re-derives only the objects that changed, instead of rebuilding 100,000s of pods every cycle.
//
// The contract is exact equality: after Update, the snapshot equals BuildSnapshot(state, now)
// field for field (ids, list orders, node accounting, GPU groups, floors), so that every decision
// is the one a full rebuild gives. SnapshotDifference (compare.h) checks it; kai simulate can
// check it every cycle (SimulateOptions::verify_snapshot_cache).
//
// What is incremental: pods changed in place (phase, node, deletion, labels, GPU groups, ...),
// pods and PodGroups appended, BindRequests, the PodGroups' status timestamps, the clock, and the
// changes a session made (Lend/Return). Anything else - nodes, queues, PriorityClasses, Topologies
// or PodGroup specs changed, objects removed, or the PodGroup vector reallocated - rebuilds in
// full (reported in stats()).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {
namespace snapshot_detail {
struct CacheIndex;
}

// What changed in the ClusterState since the cache last saw it. Appended pods and PodGroups are
// found by the cache (the vectors grew); removals are found too (they shrank) and rebuild.
struct ClusterChanges {
  std::vector<size_t> pods;    // indices of pods changed in place, any field, any order
  bool bind_requests = false;  // the BindRequests changed
  bool rebuild = false;        // anything else changed (nodes, queues, PodGroup specs, ...)
};

struct SnapshotCacheStats {
  int64_t full_builds = 0;
  int64_t incremental_updates = 0;
  int64_t pods_rederived = 0;   // pods derived again by incremental updates, in total
  int64_t nodes_rederived = 0;  // nodes whose accounting was rebuilt
  int64_t jobs_rederived = 0;   // jobs whose pod lists and counts were rebuilt
};

class SnapshotCache {
 public:
  SnapshotCache();
  ~SnapshotCache();
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  // The snapshot of `state` at `now`: built in full the first time, after a rebuild-worthy change
  // or while the snapshot is lent; else updated from the previous one. `state` must outlive the
  // snapshot's use (its names are views into it).
  Snapshot& Update(const ClusterState& state, UnixSeconds now, const ClusterChanges& changes);

  // Moves the snapshot out for a session. Return takes it back with the pods and nodes the
  // session changed (Session::TouchedPods/TouchedNodes); the next Update derives them again, so
  // the session's simulated placements, evictions and pipelines leave no trace.
  Snapshot Lend();
  void Return(Snapshot snap, std::span<const PodId> pods, std::span<const NodeId> nodes);

  const SnapshotCacheStats& stats() const { return stats_; }

 private:
  void Rebuild(const ClusterState& state, UnixSeconds now);
  bool NeedsRebuild(const ClusterState& state, const ClusterChanges& changes) const;
  void Incremental(const ClusterState& state, UnixSeconds now, const ClusterChanges& changes);

  std::optional<Snapshot> snap_;
  bool lent_ = false;
  std::vector<PodId> pending_pods_;    // pods to derive again at the next Update
  std::vector<NodeId> pending_nodes_;  // nodes whose accounting to rebuild then
  std::unique_ptr<snapshot_detail::CacheIndex> index_;
  SnapshotCacheStats stats_;
};

}  // namespace kai
