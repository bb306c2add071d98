#pragma once
// Choosing the GPUs of a node for a pod that shares GPUs (KAI's FittingGPUs and
// GetNodePreferableGpuForSharing): live shared groups with room and whole free GPUs, ordered by
// the session's GPU order (gpupack prefers the fullest shared GPU, gpuspread a whole one), the
// first `devices` of them taken. A whole GPU becomes a new group.
#include <optional>
#include <string>
#include <vector>

#include "kai/framework/session.h"

namespace kai::plugins {

struct GpuChoice {
  std::vector<std::string> groups;
  bool releasing = false;  // some chosen GPU is still being freed: the pod must be pipelined
  bool new_group = false;  // a whole GPU becomes a shared group (needs a reservation pod)
};

// Empty when the node cannot offer the pod's devices.
std::optional<GpuChoice> ChooseSharedGpus(const Session& s, PodId pod, NodeId node,
                                          bool pipeline_only);

}  // namespace kai::plugins
