#pragma once
// Score weights shared by node-order plugins (KAI pkg/scheduler/plugins/scores): each plugin's
// score lives in its own decimal band, so a higher band always dominates the lower ones.
#include "kai/snapshot/snapshot.h"

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

// Fits on the node's idle resources alone (best-effort pods always fit).
bool FitsIdle(const SnapPod& pod, const SnapNode& node);
// Fits on idle plus releasing resources (Kubernetes resources only; GPU sharing is separate).
bool FitsIdleOrReleasing(const SnapPod& pod, const SnapNode& node, Shortage* shortage = nullptr);

}  // namespace kai::plugins
