#pragma once
// The state of a scheduling session: its snapshot as the decisions change it, the node set being
// placed on, the change tracking that lets derived state be cached (versions, the pods moved and
// nodes changed, pending counts per job), and the outcomes kept for output and explanations.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kai/core/framework/eviction.h"
#include "kai/core/framework/reasons.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {

struct SessionCounters {
  int binds = 0, evictions = 0, pipelines = 0;
};

// What a MovePod did to the pod's hold on resources (active-allocated or not).
enum class AllocationChange : uint8_t { kNone, kAllocated, kDeallocated };

class SessionState {
 public:
  explicit SessionState(Snapshot snapshot);
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  Snapshot& snap() { return snap_; }
  const Snapshot& snap() const { return snap_; }
  UnixSeconds now() const { return snap_.now; }

  // Every node id, in id order.
  std::span<const NodeId> AllNodes() const { return all_nodes_; }
  // The node set the task being placed may use (all nodes unless a SubsetNodes hook narrowed
  // it). Scorers only need to score these; binpack normalises over them (KAI scores the node
  // set it is given).
  std::span<const NodeId> CandidateNodes() const { return candidates_; }
  void SetCandidateNodes(std::span<const NodeId> nodes) { candidates_ = nodes; }
  // The nodes whose scores the ScoreNodes call in progress must produce.
  std::span<const NodeId> ScoredNodes() const { return scored_; }
  void SetScoredNodes(std::span<const NodeId> nodes) const { scored_ = nodes; }

  // Changes with every MovePod: state derived from pod placement can be cached against it.
  uint64_t PlacementVersion() const { return placement_version_; }
  // Changes whenever a pod of the job moves or a Statement commits one of its pods: state derived
  // from the job's pods (its next tasks) can be cached against it. Unique across sessions.
  uint64_t JobVersion(JobId job) const { return job_versions_[job]; }
  // The job's pods in status Pending now (kept by MovePod; every action's job queue asks).
  int32_t PendingPods(JobId job) const { return pending_pods_[job]; }
  // Every pod of the job is Pending now (so none is placed, releasing or finished).
  bool AllPodsPending(JobId job) const {
    return pending_pods_[job] == static_cast<int32_t>(snap_.jobs[job].pods.size());
  }
  void JobChanged(JobId job);
  // Changes whenever a pod moves or a job changes (JobChanged): state that the order hooks read
  // (queue accounting, jobs' next tasks) is the same while it stays the same.
  uint64_t StateVersion() const { return state_version_; }
  // Changes whenever a job of the queue's subtree changes (JobChanged): the queue's accounting
  // and its jobs' next tasks are the same while it stays the same. Unique within the session.
  uint64_t QueueVersion(QueueId queue) const { return queue_versions_[queue]; }
  // Changes whenever a pod leaves a node (evicted, moved back, rolled back): while it stays the
  // same, free room (idle + releasing) on every node can only have shrunk. Unique across
  // sessions.
  uint64_t RoomVersion() const { return room_version_; }
  // For code that gives room back other than by MovePod (Statement restoring GPU state).
  void RoomMayHaveGrown();
  // Every change of a node's accounting (idle, releasing, used, GPU groups) in this session, in
  // order, one entry per change (a node may repeat): state derived from node accounting stays
  // current by re-reading the nodes of the entries added since it last looked.
  std::span<const NodeId> NodeChanges() const { return node_changes_; }
  // For code that changes node accounting other than by MovePod (Statement restoring GPU state).
  void NodeChanged(NodeId node) { node_changes_.push_back(node); }
  // Every pod MovePod moved in this session, in order (a pod may repeat).
  std::span<const PodId> MovedPods() const { return moved_pods_; }
  // Gives the snapshot back, e.g. to the SnapshotCache it was lent from (which derives the moved
  // pods and changed nodes again). Only destruction may follow.
  Snapshot TakeSnapshot() { return std::move(snap_); }

  // How many Statements committed a change so far: while it stays the same, the session's state
  // is what it was (a discarded Statement leaves nothing behind).
  uint64_t CommitCount() const { return commits_; }
  void NoteCommit() { ++commits_; }

  // Outcomes, for output and explanations.
  SessionCounters& counters() { return counters_; }
  const SessionCounters& counters() const { return counters_; }
  void SetJobReasons(JobId job, std::vector<Reason> reasons);
  // Appends to the job's reasons (copied first only when they are shared).
  void AddJobReasons(JobId job, const std::vector<Reason>& reasons);
  const std::vector<Reason>& JobReasons(JobId job) const;
  // The same reasons held, not copied (a cycle's reasons kept for the next: framework/
  // verdict_memo.h); null when the job has none.
  using SharedReasons = std::shared_ptr<const std::vector<Reason>>;
  void ShareJobReasons(JobId job, SharedReasons reasons);
  SharedReasons SharedJobReasons(JobId job) const { return job_reasons_[job]; }
  // Why a pod was evicted (action, beneficiary, rule), for outputs, events and explanations.
  void SetEviction(PodId pod, EvictionVerdict verdict);
  const EvictionVerdict& Eviction(PodId pod) const;
  // The same as one line ("" when the pod was not evicted).
  std::string EvictionReason(PodId pod) const;

  // Requested resources of a set of pods (a shared-GPU pod's GPU as its queue request), and of a
  // job's pending pods.
  Resources SumRequests(const std::vector<PodId>& pods) const;
  // The same for queue capacity checks (a gpu-memory pod over the largest device memory).
  Resources SumCapacityRequests(const std::vector<PodId>& pods) const;

 protected:
  ~SessionState();
  // Moves a pod to a status and node, keeping node and job accounting and the change tracking;
  // `groups`, when given, become the pod's shared GPU groups on the new node, and receive its
  // previous ones (exchanged, not copied). Session::MovePod adds the events.
  AllocationChange ApplyMove(PodId pod, PodStatus status, NodeId node,
                             std::vector<std::string>* groups);
  // A pod that started or stopped holding resources joins or leaves its PodSet's protected floor
  // (semi-preemptible jobs).
  void JoinFloorOf(PodId pod);
  void LeaveFloorOf(PodId pod);

 private:
  void NoteMove(PodId id);
  void LeaveNode(PodId id, bool keep_accounting);
  void CountPending(const SnapPod& pod, PodStatus status);
  void EnterNode(PodId id);
  void CountAllocated(SnapPod& pod, bool was_allocated, bool is_allocated);

  Snapshot snap_;
  std::vector<PodId> moved_pods_;
  std::vector<NodeId> all_nodes_;
  std::span<const NodeId> candidates_;
  mutable std::span<const NodeId> scored_;  // set for the duration of one ScoreNodes call
  SessionCounters counters_;
  uint64_t commits_ = 0;
  uint64_t placement_version_ = 0;
  uint64_t room_version_ = 0;
  uint64_t state_version_ = 0;
  std::vector<uint64_t> job_versions_;
  std::vector<int32_t> pending_pods_;  // per job
  std::vector<uint64_t> queue_versions_;
  std::vector<NodeId> node_changes_;
  // Held by the session alone or shared with a record of the last cycle (ShareJobReasons).
  std::vector<std::shared_ptr<std::vector<Reason>>> job_reasons_;
  // By pod, only those with a verdict: a cycle evicts few of its pods, and a verdict per pod
  // would be built and torn down for every pod in every cycle.
  std::unordered_map<PodId, EvictionVerdict> evictions_;
};

}  // namespace kai
