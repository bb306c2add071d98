#pragma once
// Score weights shared by node-order plugins (KAI pkg/scheduler/plugins/scores): each plugin's
// score lives in its own decimal band, so a higher band always dominates the lower ones.
#include <cstdint>
#include <span>
#include <string>

#include "kai/snapshot/snapshot.h"

namespace kai {
class Session;
}

namespace kai::plugins {

namespace scores {
inline constexpr double kMaxHighDensity = 9;
inline constexpr double kResourceType = 10;
inline constexpr double kAvailability = 1000;
inline constexpr double kGpuSharing = 10000;
inline constexpr double kTopology = 100000;
inline constexpr double kK8sPlugins = 1000000;
inline constexpr double kNominatedNode = 10000000;
}  // namespace scores

// A ScoreKeyFn for scorers whose score of a node reads only that node and the pod's request and
// GPU share.
inline bool AlwaysCacheable(const Session&, PodId, std::string&) { return true; }

// Adds `score` to out[n] for every node n of `nodes` where pred(pod, node) holds (a band-score
// plugin).
template <class Pred>
void AddScoreWhere(const Snapshot& snap, std::span<const NodeId> nodes, PodId pod,
                   std::span<double> out, double score, Pred pred) {
  const SnapPod& p = snap.pods[pod];
  for (NodeId n : nodes) {
    if (pred(p, snap.nodes[n])) out[n] += score;
  }
}

// Fits on the node's idle resources alone (best-effort pods always fit).
bool FitsIdle(const SnapPod& pod, const SnapNode& node);
// Fits on idle plus releasing resources; a shared-GPU pod also needs devices for its portion.
bool FitsIdleOrReleasingFull(const SnapPod& pod, const SnapNode& node, Shortage* shortage);
inline bool FitsIdleOrReleasing(const SnapPod& pod, const SnapNode& node,
                                Shortage* shortage = nullptr) {
  const Resources& r = pod.request;
  if (shortage || !r.scalars.empty() || pod.share.IsShared()) {
    return FitsIdleOrReleasingFull(pod, node, shortage);
  }
  // The common case inline: core resources only, no shortage wanted. idle + releasing saturates
  // as Resources' sums do.
  auto over = [](int64_t need, int64_t idle, int64_t releasing) {
    int64_t have;
    if (__builtin_add_overflow(idle, releasing, &have))
      have = releasing > 0 ? INT64_MAX : INT64_MIN;
    return need > 0 && need > have;
  };
  const Resources& i = node.idle;
  const Resources& l = node.releasing;
  return !over(r.milli_gpu, i.milli_gpu, l.milli_gpu) &&
         !over(r.milli_cpu, i.milli_cpu, l.milli_cpu) && !over(r.memory, i.memory, l.memory) &&
         (node.allocatable.pods == 0 || !over(r.pods, i.pods, l.pods));
}
// Live shared GPU groups on the node with room for the pod's portion, counted up to `cap`.
int64_t CountFittingGroups(const SnapNode& node, const SnapPod& pod, int64_t cap);

}  // namespace kai::plugins
