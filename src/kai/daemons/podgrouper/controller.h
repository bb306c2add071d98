#pragma once
// `kai podgrouper`: watches the kai scheduler's pods and gives each its PodGroup, as KAI's pod
// grouper does (the decisions: podgrouper/). Per pod: the owner chain is read (any kind, through
// API discovery), the PodGroup is created or updated (fields others set are kept), and the pod
// gets the pod-group-name annotation (and its SubGroup label) the scheduler reads. Every step is
// idempotent: a restart at any point converges.
#include <atomic>
#include <chrono>
#include <ostream>
#include <string>

#include "kai/core/podgrouper/grouper.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/leader.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::podgrouperd {

struct PodGrouperOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  podgrouper::GrouperConfig grouper;
  int max_concurrent = 4;
  std::chrono::milliseconds sync_timeout{60000};
  std::string metrics_address;  // host:port for /metrics; "" = off
  std::string health_address;   // host:port for /healthz, /readyz; "" = off
  // --leader-elect: only the holder of the Lease groups pods (a standby keeps its watch warm).
  bool leader_elect = false;
  runtime::LeaderOptions leader = DefaultLease();
  static runtime::LeaderOptions DefaultLease() {
    runtime::LeaderOptions l;
    l.name = "kai-podgrouper";
    return l;
  }
  // kai run's shared watch cache; null: the component lists and watches on its own.
  informer::WatchHub* watch_hub = nullptr;
};

// Runs on the component runtime (kube/runtime/manager.h) until a stop; the exit status is the
// runtime's. The second form shares a client and also stops on `also_stop` (`kai run`).
int RunPodGrouper(const PodGrouperOptions& options, std::ostream& err);
int RunPodGrouper(const PodGrouperOptions& options, const k8s::ApiClient& client, std::ostream& err,
                  const std::atomic<bool>* also_stop = nullptr);

}  // namespace kai::podgrouperd
