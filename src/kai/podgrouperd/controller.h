#pragma once
// `kai podgrouper`: watches the kai scheduler's pods and gives each its PodGroup, as KAI's pod
// grouper does (the decisions: podgrouper/). Per pod: the owner chain is read (any kind, through
// API discovery), the PodGroup is created or updated (fields others set are kept), and the pod
// gets the pod-group-name annotation (and its SubGroup label) the scheduler reads. Every step is
// idempotent: a restart at any point converges.
#include <chrono>
#include <ostream>
#include <string>

#include "kai/podgrouper/grouper.h"

namespace kai::podgrouperd {

struct PodGrouperOptions {
  std::string kubeconfig, context;
  podgrouper::GrouperConfig grouper;
  int max_concurrent = 4;
  std::chrono::milliseconds sync_timeout{60000};
};

// Runs until RequestPodGrouperStop (SIGTERM). Exit status: 0 on a stop, 1 when the watch never
// synced, 2 on bad options.
int RunPodGrouper(const PodGrouperOptions& options, std::ostream& err);
void RequestPodGrouperStop();

}  // namespace kai::podgrouperd
