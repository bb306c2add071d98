#pragma once
// `kai controllers`: KAI's PodGroup and Queue status controllers in one process. It watches pods,
// nodes, priority classes, PodGroups and Queues, and keeps each PodGroup's
// status.resourcesStatus and each Queue's status (allocated, allocatedNonPreemptible,
// requested, childQueues) as KAI computes them (controllers/), with KAI's queue metrics on
// /metrics. Level-triggered: a change enqueues the objects whose status depends on it, a
// reconcile recomputes that status from the cache and patches the status subresource only when
// the value differs from what the server holds, so a restart at any moment converges and an
// unchanged cluster is never written.
#include <atomic>
#include <chrono>
#include <ostream>
#include <string>

#include "kai/kube/client/api_client.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::controllersd {

struct ControllersOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  std::string metrics_address = ":8080";  // --metrics-bind-address ("" off)
  std::string health_address = ":8081";   // --health-probe-bind-address ("" off)
  bool leader_elect = false;
  std::string leader_elect_namespace = "kai-scheduler";
  std::string leader_elect_id = "kai-controllers";
  std::string identity;  // "" = hostname_pid
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  // Every PodGroup and Queue is reconciled again this often (0: never), as controller-runtime's
  // SyncPeriod (10h) does for KAI's controllers.
  std::chrono::milliseconds resync_period{std::chrono::hours(10)};
  std::chrono::milliseconds sync_timeout{60000};
  int workers = 2;
  // Create the default queue tree and SchedulingShard when absent (controllersd/defaults.h).
  bool create_defaults = false;
  std::string metrics_namespace = "kai";
  // kai run's shared watch cache; null: the controllers list and watch on their own.
  informer::WatchHub* watch_hub = nullptr;
};

// Runs on the component runtime (kube/runtime/manager.h) until a stop; the exit status is the
// runtime's (0 on a stop, 1 when the watches never synced, the lease was lost or an address
// cannot be bound, 2 on bad options). The first form shares a client and also stops on
// `also_stop` (`kai run`); the second resolves the kubeconfig (--kubeconfig, --context,
// $KUBECONFIG, in-cluster, ~/.kube/config).
int RunControllers(const ControllersOptions& options, const k8s::ApiClient& client,
                   std::ostream& err, const std::atomic<bool>* also_stop = nullptr);
int RunControllers(const ControllersOptions& options, std::ostream& err);

}  // namespace kai::controllersd
