#pragma once
// `kai scale-adjuster`: KAI's node scale adjuster (cmd/nodescaleadjuster) on the API server.
// Cluster autoscalers do not count GPU fractions, so for the scheduler's unschedulable fractional
// pods it keeps whole-GPU scaling pods in the scaling namespace (the decisions:
// scaleadjuster/plan.h). Watches wake it; each pass lists the unbound pods of the scheduler and
// the scaling pods (labelled app=<app label>) and converges: missing scaling pods are created,
// unneeded ones deleted, so scaling pods a previous run left are adopted or deleted at start and
// a restart at any moment leaves no orphan.
#include <atomic>
#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "kai/core/scaleadjuster/plan.h"
#include "kai/core/util/time.h"
#include "kai/kube/client/api_client.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::scaleadjusterd {

struct ScaleAdjusterOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  scaleadjuster::AdjusterConfig adjuster;
  bool leader_elect = false;
  std::string leader_elect_namespace = "kai-scheduler";
  std::string leader_elect_id = "7n7h49uc.kai.scheduler";  // KAI's LeaderElectionID
  std::string identity;                                    // "" = hostname_pid
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::string metrics_address, health_address;  // "" = that endpoint off
  std::chrono::milliseconds sync_timeout{60000};
  std::chrono::milliseconds resync_period{30000};  // a pass at least this often
  std::chrono::milliseconds debounce{500};         // events closer than this share one pass
  std::function<UnixSeconds()> now = WallClockSeconds;
  // kai run's shared watch cache; null: the component lists and watches on its own.
  informer::WatchHub* watch_hub = nullptr;
};

// Runs on the component runtime (kube/runtime/manager.h) on `client` until a stop, or until
// `also_stop` is set (`kai run`); the exit status is the runtime's (0 on a stop, 1 when the
// watches never synced or the lease was lost).
int RunScaleAdjuster(const ScaleAdjusterOptions& options, const k8s::ApiClient& client,
                     std::ostream& err, const std::atomic<bool>* also_stop = nullptr);
// The same on the client the options' kubeconfig gives (2 when it cannot be resolved).
int RunScaleAdjuster(const ScaleAdjusterOptions& options, std::ostream& err);

}  // namespace kai::scaleadjusterd
