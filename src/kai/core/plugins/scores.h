#pragma once
// Score weights shared by node-order plugins (KAI pkg/scheduler/plugins/scores): each plugin's
// score lives in its own decimal band, so a higher band always dominates the lower ones.
#include <cstdint>
#include <span>
#include <string>

#include "kai/core/snapshot/snapshot.h"

namespace kai {
class Session;
}

namespace kai::plugins {

namespace scores {
inline constexpr double kMaxHighDensity = 9;
inline constexpr double kResourceType = 10;
inline constexpr double kNuma = 100;
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

}  // namespace kai::plugins
