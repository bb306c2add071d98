#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate
// takes the lease when its holder has not renewed it for a lease duration (judged by this
// process's own clock from when it last saw the record change, so clock skew between machines
// does not matter); the leader renews every retry period and, if it cannot renew within the
// renew deadline, stops leading, which is before its lease can expire for anyone else.
//
// One rule for every component (scheduler, binder, pod grouper, controllers, scale adjuster, and
// each of them inside `kai run`): its writes pass a k8s::WriteFence that only a renewed lease
// keeps open, so writes stop the moment a renewal misses the renew deadline or another holder
// is seen, whatever the component's threads are doing; queued writes are then dropped, not
// sent, and the component returns kLeadershipLostExit (the process exits and its Deployment
// restarts it into the election, as KAI's components do). A clean shutdown hands the lease back
// (holder cleared) so that a standby takes over at once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kai/kube/client/api_client.h"

namespace kai::runtime {

struct LeaderOptions {
  std::string ns = "kai-scheduler";
  std::string name = "kai-scheduler";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::function<void(const std::string&)> log;
  // Opened until renew deadline by each renewal, closed on a loss (optional).
  std::shared_ptr<k8s::WriteFence> fence;
};

// The exit status of a component that lost its lease, and what it says.
inline constexpr int kLeadershipLostExit = 1;
inline constexpr const char* kLeadershipLostMessage =
    "error: leader election lost: writes stopped; exiting so that a restart rejoins the election";

// hostname_pid: the holder identity client-go's leader election defaults to.
std::string DefaultLeaderIdentity();

class LeaderElector {
 public:
  LeaderElector(const k8s::ApiClient& client, LeaderOptions options);
  ~LeaderElector();
  void Start();
  void Stop();
  // True while this process holds the lease and renewed it within the renew deadline.
  bool IsLeader() const;
  // True once this process led and then missed the renew deadline or saw another holder. A lost
  // lease is never taken again by this elector (its loop ends).
  bool Lost() const;
  // Clean shutdown: stops renewing and, when still leading, closes the fence and hands the
  // lease back (empty holder, a one-second duration: client-go's ReleaseOnCancel).
  void Release();
  // Blocks until this process leads or `stop` is set.
  void WaitForLeadership(const std::atomic<bool>& stop) const;
  // One attempt to acquire or renew (public for tests). True when this process holds the lease.
  bool TryAcquireOrRenew();

 private:
  void Loop();
  bool LeadingLocked(std::chrono::steady_clock::time_point now) const;
  void LoseLocked(const std::string& why);
  const k8s::ApiClient& client_;
  LeaderOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool leading_ = false, lost_ = false, released_ = false;
  std::chrono::steady_clock::time_point renewed_at_{};
  std::string observed_record_;  // holder + renewTime last seen
  std::chrono::steady_clock::time_point observed_at_{};
};

// The LeaderOptions of a component whose options carry the leader_elect_* flags.
template <class Options>
LeaderOptions LeaderOptionsOf(const Options& o, std::function<void(const std::string&)> log) {
  LeaderOptions lo;
  lo.ns = o.leader_elect_namespace;
  lo.name = o.leader_elect_id;
  lo.identity = o.identity;
  lo.lease_duration = o.lease_duration;
  lo.renew_deadline = o.renew_deadline;
  lo.retry_period = o.retry_period;
  lo.log = std::move(log);
  return lo;
}

// One component's leadership, built from its leader flags: the fenced client it writes through
// and the elector that keeps the fence open. Without election (`elect` false) the component
// always leads and its writes are never fenced.
class Leadership {
 public:
  Leadership(const k8s::ApiClient& client, bool elect, LeaderOptions options);
  const k8s::ApiClient& client() const { return fenced_; }
  bool electing() const { return elector_ != nullptr; }
  void Start();
  bool Leading() const;
  bool Lost() const;
  // Blocks until leading or `stop`; true when leading.
  bool WaitForLeadership(const std::atomic<bool>& stop) const;
  // After the component's writers stopped: a clean shutdown releases the lease, a lost one
  // only stops the elector.
  void Release();
  int64_t writes_admitted() const { return fence_ ? fence_->admitted() : 0; }

 private:
  std::shared_ptr<k8s::WriteFence> fence_;
  k8s::ApiClient fenced_;
  std::unique_ptr<LeaderElector> elector_;
};

}  // namespace kai::runtime
