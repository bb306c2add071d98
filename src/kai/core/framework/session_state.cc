#include "kai/core/framework/session_state.h"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai {
namespace {

// Pods a node's list makes room for when its first pod arrives.
constexpr size_t kFirstNodePods = 16;

uint64_t NextRoomVersion() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

// A shared-GPU pod being released and pipelined onto other GPUs (of its node or another) is a
// second instance: the first keeps releasing its GPUs until it is gone (KAI adds the task again
// and keeps the old accounting), so only the new placement is added.
bool IsSecondInstance(const SnapPod& pod, PodStatus status, NodeId node,
                      const std::vector<std::string>* groups) {
  return pod.share.IsShared() && pod.status == PodStatus::kReleasing &&
         status == PodStatus::kPipelined && groups &&
         (node != pod.node || *groups != pod.gpu_groups);
}

AllocationChange ChangeOf(bool was_allocated, bool is_allocated) {
  if (was_allocated == is_allocated) return AllocationChange::kNone;
  return is_allocated ? AllocationChange::kAllocated : AllocationChange::kDeallocated;
}

}  // namespace

SessionState::SessionState(Snapshot snapshot)
    : snap_(std::move(snapshot)), job_reasons_(snap_.jobs.size()) {
  all_nodes_.resize(snap_.nodes.size());
  std::iota(all_nodes_.begin(), all_nodes_.end(), NodeId{0});
  candidates_ = all_nodes_;
  scored_ = all_nodes_;
  room_version_ = NextRoomVersion();
  job_versions_.assign(snap_.jobs.size(), NextRoomVersion());
  queue_versions_.assign(snap_.queues.size(), 0);
  pending_pods_.assign(snap_.jobs.size(), 0);
  for (const SnapPod& pod : snap_.pods) {
    if (pod.job != kNone && pod.status == PodStatus::kPending) ++pending_pods_[pod.job];
  }
}

SessionState::~SessionState() = default;

void SessionState::RoomMayHaveGrown() { room_version_ = NextRoomVersion(); }

void SessionState::JobChanged(JobId job) {
  job_versions_[job] = NextRoomVersion();
  ++state_version_;
  for (QueueId q = snap_.jobs[job].queue; q != kNone; q = snap_.queues[q].parent) {
    queue_versions_[q] = state_version_;
  }
}

// The versions every move changes, and the pod's job's.
inline void SessionState::NoteMove(PodId id) {
  ++placement_version_;
  ++state_version_;
  moved_pods_.push_back(id);
  if (const JobId job = snap_.pods[id].job; job != kNone) JobChanged(job);
}

// Takes the pod off the node it holds resources on, if any; `keep_accounting` leaves what it
// holds there counted (a second instance: the first one is still releasing).
inline void SessionState::LeaveNode(PodId id, bool keep_accounting) {
  const SnapPod& pod = snap_.pods[id];
  if (pod.node == kNone || !IsActiveUsed(pod.status)) return;
  // A releasing pod's resources count as free already: only other pods give room back.
  if (pod.status != PodStatus::kReleasing) room_version_ = NextRoomVersion();
  SnapNode& old = snap_.nodes[pod.node];
  if (!keep_accounting) RemovePodFromNode(old, pod, pod.status);
  std::erase(old.pods, id);
  NodeChanged(pod.node);
}

inline void SessionState::CountPending(const SnapPod& pod, PodStatus status) {
  if (pod.job == kNone) return;
  pending_pods_[pod.job] += (status == PodStatus::kPending) - (pod.status == PodStatus::kPending);
}

// Puts the pod on the node of its (new) status and node, when it holds resources there.
inline void SessionState::EnterNode(PodId id) {
  SnapPod& pod = snap_.pods[id];
  if (pod.node == kNone || !IsActiveUsed(pod.status)) return;
  SnapNode& target = snap_.nodes[pod.node];
  AddPodToNode(target, pod, pod.status);
  // Room for a few pods at once rather than growing one by one from an empty list.
  if (target.pods.capacity() == 0) target.pods.reserve(kFirstNodePods);
  target.pods.push_back(id);
  NodeChanged(pod.node);
}

inline void SessionState::CountAllocated(SnapPod& pod, bool was_allocated, bool is_allocated) {
  if (pod.job == kNone || was_allocated == is_allocated) return;
  SnapJob& job = snap_.jobs[pod.job];
  const int delta = is_allocated ? 1 : -1;
  job.active_allocated += delta;
  job.sub_groups[pod.sub_group].active_allocated += delta;
}

AllocationChange SessionState::ApplyMove(PodId id, PodStatus status, NodeId node,
                                         std::vector<std::string>* groups) {
  NoteMove(id);
  SnapPod& pod = snap_.pods[id];
  const bool was_allocated = IsActiveAllocated(pod.status);
  NumaLeave(snap_, id);
  LeaveNode(id, IsSecondInstance(pod, status, node, groups));
  CountPending(pod, status);
  pod.status = status;
  pod.node = node;
  if (groups) std::swap(pod.gpu_groups, *groups);
  EnterNode(id);
  NumaEnter(snap_, id);
  const bool is_allocated = IsActiveAllocated(status);
  CountAllocated(pod, was_allocated, is_allocated);
  return ChangeOf(was_allocated, is_allocated);
}

void SessionState::JoinFloorOf(PodId id) {
  SnapPod& pod = snap_.pods[id];
  if (pod.job != kNone) JoinFloor(snap_.jobs[pod.job], pod);
}

void SessionState::LeaveFloorOf(PodId id) {
  SnapPod& pod = snap_.pods[id];
  if (pod.job != kNone) LeaveFloor(snap_.jobs[pod.job], pod);
}

void SessionState::SetEviction(PodId pod, EvictionVerdict verdict) {
  evictions_[pod] = std::move(verdict);
}

const EvictionVerdict& SessionState::Eviction(PodId pod) const {
  static const EvictionVerdict kNone;
  auto it = evictions_.find(pod);
  return it == evictions_.end() ? kNone : it->second;
}

std::string SessionState::EvictionReason(PodId pod) const {
  return DescribeEviction(Eviction(pod), snap_, pod);
}

void SessionState::SetJobReasons(JobId job, std::vector<Reason> reasons) {
  if (reasons.empty()) {
    job_reasons_[job].reset();
    return;
  }
  job_reasons_[job] = std::make_shared<std::vector<Reason>>(std::move(reasons));
}

void SessionState::AddJobReasons(JobId job, const std::vector<Reason>& reasons) {
  if (reasons.empty()) return;
  std::shared_ptr<std::vector<Reason>>& held = job_reasons_[job];
  if (!held || held.use_count() > 1) {
    held = held ? std::make_shared<std::vector<Reason>>(*held)
                : std::make_shared<std::vector<Reason>>();
  }
  held->insert(held->end(), reasons.begin(), reasons.end());
}

void SessionState::ShareJobReasons(JobId job, SharedReasons reasons) {
  // Never changed in place while shared (AddJobReasons copies a shared vector first).
  job_reasons_[job] = std::const_pointer_cast<std::vector<Reason>>(std::move(reasons));
}

const std::vector<Reason>& SessionState::JobReasons(JobId job) const {
  static const std::vector<Reason> kNone;
  return job_reasons_[job] ? *job_reasons_[job] : kNone;
}

Resources SessionState::SumRequests(const std::vector<PodId>& pods) const {
  Resources total;
  for (PodId p : pods) {
    const SnapPod& pod = snap_.pods[p];
    total += pod.request;
    if (pod.share.IsShared()) total.milli_gpu += RequestedMilliGpu(pod);
  }
  return total;
}

Resources SessionState::SumCapacityRequests(const std::vector<PodId>& pods) const {
  Resources total = SumRequests(pods);
  for (PodId p : pods) {
    const SnapPod& pod = snap_.pods[p];
    if (pod.share.kind == GpuShareKind::kMemory) {
      total.milli_gpu += pod.memory_capacity_milli_gpu - pod.memory_request_milli_gpu;
    }
  }
  return total;
}

}  // namespace kai
