#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a candidate
// takes the lease when its holder has not renewed it for a lease duration (judged by this
// process's own clock from when it last saw the record change, so clock skew between machines
// does not matter); the leader renews every retry period and, if it cannot renew within the
// renew deadline, stops leading, which is before its lease can expire for anyone else.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "kai/k8s/api_client.h"

namespace kai::scheduler {

struct LeaderOptions {
  std::string ns = "kai-scheduler";
  std::string name = "kai-scheduler";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::function<void(const std::string&)> log;
};

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
  // Blocks until this process leads or `stop` is set.
  void WaitForLeadership(const std::atomic<bool>& stop) const;
  // One attempt to acquire or renew (public for tests). True when this process holds the lease.
  bool TryAcquireOrRenew();

 private:
  void Loop();
  const k8s::ApiClient& client_;
  LeaderOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool leading_ = false;
  std::chrono::steady_clock::time_point renewed_at_{};
  std::string observed_record_;  // holder + renewTime last seen
  std::chrono::steady_clock::time_point observed_at_{};
};

}  // namespace kai::scheduler
