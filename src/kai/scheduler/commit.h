#pragma once
// Writes one cycle's decisions to the API server as KAI's scheduler does (S/cache/cache.go,
// status_updater/): a BindRequest per bind, the Evict event and a delete per eviction, events and
// the PodScheduled condition for pending pods, the PodGroups' scheduling conditions and timer
// annotations, the pipelined pods' nominations, the stale BindRequests' deletion.
//
// Writes run concurrently, at most `max_in_flight` at once, and Commit returns when the server
// has answered all of them. Each write is idempotent or guarded: a BindRequest is named after its
// pod, so a retried create answers 409 and is checked against the pod and node it asked for,
// never creating a second one. A failed write leaves a state the next cycle corrects.
#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "kai/informer/informer.h"
#include "kai/k8s/api_client.h"
#include "kai/scheduler/decisions.h"
#include "kai/scheduler/events.h"

namespace kai::scheduler {

struct CommitOptions {
  std::string scheduler_name = "kai-scheduler";
  std::string node_pool_key = "kai.scheduler/node-pool";
  std::string node_pool_value;  // the shard's partitionLabelValue ("" = the default pool)
  int max_in_flight = 32;
  bool update_pod_eviction_condition = false;  // DisruptionTarget condition before a delete
  std::function<void(const std::string&)> log;
};

struct CommitResult {
  int binds = 0, evictions = 0, status_writes = 0, failed = 0;
  int events = 0;                   // queued (events.h writes them in the background)
  std::vector<std::string> errors;  // each names the call and the object
};

class Committer {
 public:
  Committer(const k8s::ApiClient& client, informer::Informer* informer, CommitOptions options);

  CommitResult Commit(const Decisions& d, UnixSeconds now);
  // Events go out in the background (events.h); this waits for them (--once).
  bool FlushEvents(std::chrono::milliseconds timeout);
  EventStats event_stats() const { return events_.stats(); }

  // Entries remembered for pods and PodGroups (what was last written, so that an unchanged
  // message is not written again); pruned each cycle to the objects the cycle mentioned.
  size_t Remembered() const;

 private:
  struct Run;
  void Bind(const BindDecision& b, UnixSeconds now, Run& run);
  void Evict(const EvictDecision& e, UnixSeconds now, Run& run);
  void MarkPending(const PendingPodDecision& p, UnixSeconds now, Run& run);
  void UpdatePodGroup(const PodGroupDecision& g, UnixSeconds now, Run& run);
  void Nominate(const NominateDecision& n, Run& run);
  void DeleteStale(const ObjectRef& b, Run& run);
  bool Event(const ObjectRef& obj, std::string_view api_version, std::string_view kind,
             std::string_view type, std::string_view reason, const std::string& message,
             const std::map<std::string, std::string>& annotations, UnixSeconds now, Run& run);
  bool Changed(std::map<std::string, std::string>& memory, const std::string& key,
               const std::string& value);

  const k8s::ApiClient& client_;
  informer::Informer* informer_;
  CommitOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> pod_messages_;    // pod uid -> last Unschedulable message
  std::map<std::string, std::string> group_messages_;  // PodGroup uid -> last condition message
  std::atomic<uint64_t> event_seq_{0};
  EventRecorder events_;
};

}  // namespace kai::scheduler
