#pragma once
// The binder's work queue, with client-go's workqueue semantics: a key is queued at most once
// (adding a queued key again is a no-op), a key being processed is never handed to a second
// worker (adding it meanwhile marks it dirty; it is queued again when Done), delayed adds wait
// for their time (the earliest wins), and a per-key failure rate limiter doubles the delay of
// each retry from `base` to `max` until the key is forgotten.
//
// Time comes from an injected clock, so tests step through delays without waiting.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "kai/kube/serve/controller_metrics.h"

namespace kai::runtime {

using Clock = std::chrono::steady_clock;
using NowFn = std::function<Clock::time_point()>;

struct RateLimit {
  std::chrono::milliseconds base{1000}, max{60000};
};

class WorkQueue {
 public:
  explicit WorkQueue(RateLimit limit = {}, NowFn now = {});
  // Reports to client-go's workqueue metrics (serve/controller_metrics.h); before any Add.
  void SetMetrics(std::shared_ptr<serve::WorkQueueMetrics> metrics) {
    metrics_ = std::move(metrics);
  }

  void Add(const std::string& key);
  // Queues `key` after `delay` (at once when <= 0); an earlier pending time is kept.
  void AddAfter(const std::string& key, std::chrono::milliseconds delay);
  // Queues `key` after its next failure delay: base, 2 base, 4 base, ... up to max.
  void AddRateLimited(const std::string& key);
  // The key succeeded: its failure count starts again.
  void Forget(const std::string& key);
  int Failures(const std::string& key) const;

  // The next ready key, waiting up to `timeout` (real time) for one; nullopt on time-out or
  // after ShutDown. The caller must call Done(key) when finished.
  std::optional<std::string> Get(std::chrono::milliseconds timeout);
  void Done(const std::string& key);
  // Drops every queued and delayed key (a stopping or deposed binder sends none of them) and
  // hands out no key after this; Get returns nullopt at once.
  void ShutDown();

  size_t Len() const;      // ready keys
  size_t Waiting() const;  // delayed keys
  bool Processing(const std::string& key) const;

 private:
  void PromoteDueLocked();
  void AddLocked(const std::string& key);

  RateLimit limit_;
  NowFn now_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> queued_, processing_, dirty_;
  std::multimap<Clock::time_point, std::string> delayed_;
  std::unordered_map<std::string, Clock::time_point> delayed_at_;
  std::unordered_map<std::string, int> failures_;
  bool shut_down_ = false;
  std::shared_ptr<serve::WorkQueueMetrics> metrics_;
};

// A worker on `queue` until `stop` says so (checked when no key came): each key reconciled
// (true: done), forgotten when done, else retried after its failure delay; measured with the
// ReconcileMetrics `metrics` picks for the key (null: none).
using ReconcileFn = std::function<bool(const std::string&)>;
using MetricsFor = std::function<serve::ReconcileMetrics*(const std::string&)>;
void RunWorker(WorkQueue& queue, const ReconcileFn& reconcile, const std::function<bool()>& stop,
               const MetricsFor& metrics = {});

}  // namespace kai::runtime
