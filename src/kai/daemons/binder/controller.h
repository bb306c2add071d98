#pragma once
// `kai binder`: turns BindRequests into bound pods, as KAI's binder does
// (B/controllers/bindrequest_controller.go, kai-semantics §7).
//
// An informer watches BindRequests and the pods labelled with a GPU group; each change queues
// the request's key on a work queue (workqueue.h) drained by `max_concurrent` workers, so one
// request is never bound by two workers at once. A worker reads the pod afresh, binds it
// (binder.h) and writes the outcome: phase Succeeded, or Failed with the reason and, while the
// request's backoffLimit allows, failedAttempts + 1 and a retry after 2^attempts seconds. The pod
// gets the PodBound condition and an event; those go through a background queue that waits
// while binds are flowing (at most `status_write_deferral`).
//
// Every step is idempotent, so a restart at any point (kill -9) leaves nothing that the next run
// does not finish or undo: the binding call cannot bind a pod twice (the server refuses a bound
// pod; an earlier try's landed binding counts as done), a reservation pod made before the crash
// is found by its group label and reused, ConfigMaps are upserted, and the reservations of
// every group are synced at start and every `resync_period`.
#include <atomic>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>

#include "kai/daemons/binder/plugins.h"
#include "kai/daemons/binder/reservation.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/background.h"
#include "kai/kube/runtime/workqueue.h"
#include "kai/kube/serve/metrics.h"

namespace kai::binder {

struct BinderOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  std::string scheduler_name = "kai-scheduler";
  int max_concurrent = 10;
  runtime::RateLimit
      rate_limit;  // failures the status write could not record: 1 s doubling to 60 s
  ReservationOptions reservation;
  std::string plugins_json;  // --plugins overrides of DefaultPluginConfig()
  std::chrono::milliseconds resync_period{60000};
  std::chrono::milliseconds status_write_deferral{10000};
  std::chrono::milliseconds sync_timeout{60000};
  bool leader_elect = false;
  std::string leader_elect_namespace = "kai-scheduler";
  std::string leader_elect_id = "kai-binder";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::string metrics_address, health_address;
  // kai run's shared watch cache; null: the component lists and watches on its own.
  informer::WatchHub* watch_hub = nullptr;
};

// The outcome of one failed attempt under the request's backoff limit (KAI's UpdateStatus): a
// retry after 2^attempts seconds while backoffLimit > failedAttempts; without a limit the first
// failure is final.
struct FailureOutcome {
  int failed_attempts = 0;
  std::optional<std::chrono::seconds> retry_after;
};
FailureOutcome OnFailure(const BindRequestObject& request);
// A Failed request whose retry is still due (after a restart, from its status alone): the delay
// from now, or nullopt when the failure was final.
std::optional<std::chrono::seconds> PendingRetry(const BindRequestObject& request);

// The binder's own metrics (kai_binder_*), from its counts at scrape time.
struct BinderMetricValues {
  int64_t succeeded = 0, failed = 0, retried = 0, parked = 0, groups_awaited = 0;
  int64_t already_bound = 0, invalid_deleted = 0, depth = 0, delayed = 0;
  ReservationStats reservations;
  runtime::WriteStats writes;
  informer::InformerStats watch;
};
std::vector<prometheus::MetricFamily> BinderMetricFamilies(const BinderMetricValues& v);

// The binder on the component runtime (kube/runtime/manager.h): the exit status is the
// runtime's (0 after a stop, 1 on a lost lease or caches that never synced, 2 on bad
// configuration); `err` receives the log.
int RunBinder(const BinderOptions& options, std::ostream& err);
// The same on a client the caller shares (`kai run`; options.kubeconfig is not read), also
// stopping when `also_stop` is set.
int RunBinder(const BinderOptions& options, const k8s::ApiClient& client, std::ostream& err,
              const std::atomic<bool>* also_stop = nullptr);

}  // namespace kai::binder
