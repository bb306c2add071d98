#pragma once
// Writes one cycle's decisions to the API server as KAI's scheduler does (S/cache/cache.go,
// status_updater/): a BindRequest per bind, the Evict event and a delete per eviction, events and
// the PodScheduled condition for pending pods, the PodGroups' scheduling conditions and timer
// annotations, the pipelined pods' nominations, the stale BindRequests' deletion.
//
// The writes that change what runs where (binds, evictions, nominations, stale BindRequests) run
// concurrently, at most `max_in_flight` at once, and Commit returns when the server has answered
// all of them. The status writes (pending pods' conditions, PodGroups' timers and conditions)
// and the events go to a background queue (background.h) that waits while those run (and, in a
// burst of binds, a while longer), as KAI's status updater writes them off the cycle; the
// PodGroups' timers count in the next cycle at once (Scheduler assumes them), and their answers are
// assumed like the binds.
//
// Each write is idempotent or guarded: a BindRequest is named after its pod, so a retried create
// answers 409 and is checked against the pod and node it asked for, never creating a second
// one. A failed write leaves a state the next cycle corrects.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "kai/daemons/scheduler/decisions.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/informer.h"
#include "kai/kube/runtime/background.h"

namespace kai::scheduler {

struct CommitOptions {
  std::string scheduler_name = "kai-scheduler";
  std::string node_pool_key = "kai.scheduler/node-pool";
  std::string node_pool_value;  // the shard's partitionLabelValue ("" = the default pool)
  int max_in_flight = 32;
  int background_writers = 8;  // the background queue's concurrent writes
  // How long status writes and events may wait behind a burst of binds (commit.cc).
  std::chrono::milliseconds background_deferral{10000};
  // The DisruptionTarget condition before a delete (on by default; KAI's default is off).
  bool update_pod_eviction_condition = true;
  std::function<void(const std::string&)> log;
};

struct CommitResult {
  int binds = 0, evictions = 0, nominations = 0, failed = 0;
  int background = 0;               // status writes and events queued for the background
  std::vector<std::string> errors;  // each names the call and the object
  std::vector<double> bind_millis;  // each BindRequest's creation, from its first call
};

class Committer {
 public:
  Committer(const k8s::ApiClient& client, informer::Informer* informer, CommitOptions options);

  CommitResult Commit(const Decisions& d, UnixSeconds now);
  // Status writes and events go out in the background; this waits for them (--once, shutdown).
  bool FlushBackground(std::chrono::milliseconds timeout);
  runtime::WriteStats background_stats() const { return background_.stats(); }
  // No longer the leader: queued status writes and events are dropped and what was written is
  // forgotten, so that a leader again writes every status anew.
  void Abandon();

  // Entries remembered for pods and PodGroups (what was last written, so that an unchanged
  // message is not written again); pruned each cycle to the objects the cycle mentioned.
  size_t Remembered() const;

 private:
  struct Run;
  void Bind(const BindDecision& b, UnixSeconds now, Run& run);
  void Evict(const EvictDecision& e, UnixSeconds now, Run& run);
  bool MarkDisruptionTarget(const EvictDecision& e, const std::string& path, UnixSeconds now,
                            Run& run);
  void Background(std::string key, std::function<bool()> write, Run& run);
  bool MarkPending(const PendingPodDecision& p, UnixSeconds now);
  void QueuePodGroup(const PodGroupDecision& g, UnixSeconds now, Run& run);
  bool PatchTimers(const PodGroupDecision& g);
  bool PatchConditions(const PodGroupDecision& g, UnixSeconds now);
  void Forget(std::map<std::string, std::string>& memory, const std::string& key);
  void LogFailure(const std::string& what) const;
  void ResumeBackground(const CommitResult& r);
  void AssumeAnswer(const k8s::ResourceType& type, const k8s::HttpResponse& r);
  void Nominate(const NominateDecision& n, Run& run);
  void DeleteStale(const ObjectRef& b, Run& run);
  // KAI's Pipelined, NotReady and StaleJob events, each written when its message changes; the
  // memory of objects the cycle no longer mentions is forgotten.
  void StatusEvents(const Decisions& d, UnixSeconds now);
  void Event(const ObjectRef& obj, std::string_view api_version, std::string_view kind,
             std::string_view type, std::string_view reason, const std::string& message,
             const std::map<std::string, std::string>& annotations, UnixSeconds now);
  bool Changed(std::map<std::string, std::string>& memory, const std::string& key,
               const std::string& value);

  const k8s::ApiClient& client_;
  informer::Informer* informer_;
  CommitOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> pod_messages_;    // pod uid -> last Unschedulable message
  std::map<std::string, std::string> group_messages_;  // PodGroup uid -> last condition message
  // "<reason>/<uid>" -> the last message of a Pipelined, NotReady or StaleJob event.
  std::map<std::string, std::string> event_messages_;
  std::atomic<uint64_t> event_seq_{0};
  std::optional<std::chrono::steady_clock::time_point> deferred_since_;  // Commit's thread only
  bool deferral_spent_ = false;
  runtime::BackgroundWriter background_;  // last member: its workers stop before the rest goes
};

}  // namespace kai::scheduler
