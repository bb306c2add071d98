#include "kai/framework/session.h"

#include "kai/framework/node_ranking.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>

#include "kai/snapshot/gpu_accounting.h"
#include "kai/snapshot/semi_preemptible.h"

namespace kai {
namespace {

// Pods a node's list makes room for when its first pod arrives.
constexpr size_t kFirstNodePods = 16;

uint64_t NextRoomVersion() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

}  // namespace

Session::Session(Snapshot snapshot, SchedulerConfig config)
    : snap_(std::move(snapshot)),
      config_(std::move(config)),
      job_reasons_(snap_.jobs.size()),
      eviction_reasons_(snap_.pods.size()) {
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
  ranking_ = std::make_unique<NodeRanking>(*this);
}

Session::~Session() = default;

int64_t Session::MonotonicMillis() const {
  if (clock_) return clock_();
  const auto since = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(since).count();
}

Result<bool> Session::OpenPlugins() {
  for (const PluginConfig& pc : config_.plugins) {
    const PluginInfo* info = FindPlugin(pc.name);
    if (!info) return Error{"unknown plugin \"" + pc.name + "\""};
    auto plugin = info->make(pc.arguments);
    if (!plugin.ok()) return Error{"plugin " + pc.name + ": " + plugin.error().message};
    plugins_.push_back(std::move(plugin.value()));
  }
  for (auto& p : plugins_) p->OnSessionOpen(*this);
  return true;
}

void Session::Close() {
  for (auto& p : plugins_) p->OnSessionClose(*this);
}

bool Session::JobBefore(JobId a, JobId b) const {
  for (size_t i = 0; i < job_order_.size(); ++i) {
    if (const JobOrderKeyFn& key = job_order_keys_[i]) {
      const int64_t ka = key(*this, a), kb = key(*this, b);
      if (ka != kb) return ka < kb;
    } else if (int c = job_order_[i](*this, a, b)) {
      return c < 0;
    }
  }
  const SnapJob& ja = snap_.jobs[a];
  const SnapJob& jb = snap_.jobs[b];
  if (ja.creation != jb.creation) return ja.creation < jb.creation;
  return ja.uid < jb.uid;
}

void Session::AddJobOrderKey(JobOrderKeyFn key) {
  job_order_.emplace_back();  // JobBefore compares the keys
  job_order_keys_.push_back(std::move(key));
}

std::optional<JobSortKey> Session::SortKeyOf(JobId job) const {
  if (job_order_keys_.size() > JobSortKey::kOrders) return std::nullopt;
  JobSortKey out;
  for (size_t i = 0; i < job_order_keys_.size(); ++i) {
    if (!job_order_keys_[i]) return std::nullopt;
    out.order[i] = job_order_keys_[i](*this, job);
  }
  out.creation = snap_.jobs[job].creation;
  return out;
}

bool Session::TaskBefore(PodId a, PodId b) const {
  for (const auto& f : task_order_) {
    if (int c = f(*this, a, b)) return c < 0;
  }
  const SnapPod& pa = snap_.pods[a];
  const SnapPod& pb = snap_.pods[b];
  if (pa.creation != pb.creation) return pa.creation < pb.creation;
  return pa.uid < pb.uid;
}

bool Session::SubGroupBefore(JobId job, const SubGroupStanding& a,
                             const SubGroupStanding& b) const {
  for (const auto& f : sub_group_order_) {
    if (int c = f(*this, job, a, b)) return c < 0;
  }
  const SnapJob& j = snap_.jobs[job];
  return j.sub_groups[a.index].name < j.sub_groups[b.index].name;
}

namespace {

bool OlderQueue(const SnapQueue& a, const SnapQueue& b) {
  if (a.creation != b.creation) return a.creation < b.creation;
  return a.name < b.name;
}

}  // namespace

bool Session::QueueBefore(QueueId qa, JobId ja, QueueId qb, JobId jb) const {
  for (const auto& f : queue_order_) {
    if (int c = f(*this, qa, ja, qb, jb)) return c < 0;
  }
  return OlderQueue(snap_.queues[qa], snap_.queues[qb]);
}

bool Session::VictimQueueBefore(QueueId qa, const Resources& victims_a, QueueId qb,
                                const Resources& victims_b) const {
  for (const auto& f : victim_queue_order_) {
    if (int c = f(*this, qa, victims_a, qb, victims_b)) return c < 0;
  }
  return OlderQueue(snap_.queues[qa], snap_.queues[qb]);
}

QueueJobKey Session::QueueOrderKey(JobId job) const {
  if (queue_job_keys_.empty()) return {};
  if (queue_job_keys_.size() > 1 || !queue_job_keys_.front()) return {job, 0, 0};
  return queue_job_keys_.front()(*this, job);
}

void Session::PrepareScores(PodId pod) const {
  for (const auto& f : pre_score_) f(*this, pod);
}

void Session::ScoreNodes(PodId pod, std::span<double> out) const {
  std::fill(out.begin(), out.end(), 0.0);
  scored_ = candidates_;
  for (const auto& f : node_scores_) f(*this, pod, out);
}

double Session::ScoreGpu(PodId pod, const SnapNode& node, const GpuGroup* group) const {
  double score = 0;
  for (const auto& f : gpu_order_) score += f(*this, pod, node, group);
  return score;
}

std::optional<GpuChoice> Session::ChooseSharedGpus(PodId pod, NodeId node_id,
                                                   bool pipeline_only) const {
  const SnapNode& node = snap_.nodes[node_id];
  return kai::ChooseSharedGpus(snap_.pods[pod], node, pipeline_only,
                               [&](const GpuGroup* group) { return ScoreGpu(pod, node, group); });
}

void Session::ScoreNodes(PodId pod, std::span<double> out, std::span<const NodeId> scored) const {
  for (NodeId n : scored) out[n] = 0.0;
  scored_ = scored;
  for (const auto& f : node_scores_) f(*this, pod, out);
  scored_ = candidates_;
}

bool Session::NodeScoreKey(PodId pod, std::string& key) const {
  for (const auto& f : score_keys_) {
    if (!f || !f(*this, pod, key)) return false;
  }
  return true;
}

void Session::RoomMayHaveGrown() { room_version_ = NextRoomVersion(); }

void Session::JobChanged(JobId job) {
  job_versions_[job] = NextRoomVersion();
  ++state_version_;
  for (QueueId q = snap_.jobs[job].queue; q != kNone; q = snap_.queues[q].parent) {
    queue_versions_[q] = state_version_;
  }
}

NodeVerdict Session::CheckPredicates(PodId pod, NodeId node) const {
  for (const auto& f : predicates_) {
    NodeVerdict v = f(*this, pod, node);
    if (!v.Fits()) return v;
  }
  return {};
}

std::optional<Reason> Session::CheckJobCapacity(JobId job, const std::vector<PodId>& tasks) const {
  if (!job_capacity_) return std::nullopt;
  const JobRequest request{SumCapacityRequests(tasks),
                           SumCapacityRequests(ProtectedTasks(snap_, snap_.jobs[job], tasks))};
  return job_capacity_(*this, job, request);
}

void Session::MovePod(PodId id, PodStatus status, NodeId node, std::vector<std::string>* groups) {
  ++placement_version_;
  ++state_version_;
  moved_pods_.push_back(id);
  SnapPod& pod = snap_.pods[id];
  if (pod.job != kNone) JobChanged(pod.job);
  const bool was_allocated = IsActiveAllocated(pod.status);
  // A shared-GPU pod being released and pipelined onto other GPUs (of its node or another) is a
  // second instance: the first keeps releasing its GPUs until it is gone (KAI adds the task again
  // and keeps the old accounting), so only the new placement is added.
  const bool second_instance = pod.share.IsShared() && pod.status == PodStatus::kReleasing &&
                               status == PodStatus::kPipelined && groups &&
                               (node != pod.node || *groups != pod.gpu_groups);
  if (pod.node != kNone && IsActiveUsed(pod.status)) {
    // A releasing pod's resources count as free already: only other pods give room back.
    if (pod.status != PodStatus::kReleasing) room_version_ = NextRoomVersion();
    SnapNode& old = snap_.nodes[pod.node];
    if (!second_instance) RemovePodFromNode(old, pod, pod.status);
    std::erase(old.pods, id);
    NodeChanged(pod.node);
  }
  if (pod.job != kNone) {
    pending_pods_[pod.job] += (status == PodStatus::kPending) - (pod.status == PodStatus::kPending);
  }
  pod.status = status;
  pod.node = node;
  if (groups) std::swap(pod.gpu_groups, *groups);
  if (node != kNone && IsActiveUsed(status)) {
    SnapNode& target = snap_.nodes[node];
    AddPodToNode(target, pod, status);
    // Room for a few pods at once rather than growing one by one from an empty list.
    if (target.pods.capacity() == 0) target.pods.reserve(kFirstNodePods);
    target.pods.push_back(id);
    NodeChanged(node);
  }
  const bool is_allocated = IsActiveAllocated(status);
  if (pod.job != kNone && was_allocated != is_allocated) {
    SnapJob& job = snap_.jobs[pod.job];
    const int delta = is_allocated ? 1 : -1;
    job.active_allocated += delta;
    job.sub_groups[pod.sub_group].active_allocated += delta;
  }
  if (!was_allocated && is_allocated) {
    if (pod.job != kNone) JoinFloor(snap_.jobs[pod.job], pod);
    for (auto& f : on_allocate_) f(*this, id);
  } else if (was_allocated && !is_allocated) {
    for (auto& f : on_deallocate_) f(*this, id);
    if (pod.job != kNone) LeaveFloor(snap_.jobs[pod.job], pod);
  }
}

NodeSubsets Session::SubsetNodes(const TaskGroup& group, std::span<const NodeId> nodes) {
  NodeSubsets result;
  if (subset_nodes_.empty()) {
    result.sets.push_back(nodes);
    return result;
  }
  // The first hook splits `nodes` itself; each later one every set the previous one produced.
  std::span<const std::span<const NodeId>> sets(&nodes, 1);
  for (const auto& f : subset_nodes_) {
    NodeSubsets next;
    next.reasons = std::move(result.reasons);
    next.built = std::move(result.built);  // the sets of this step may be views of them
    for (std::span<const NodeId> set : sets) f(*this, group, set, next);
    result = std::move(next);
    sets = result.sets;
  }
  return result;
}

bool Session::VictimAllowed(DisruptionKind k, JobId preemptor, JobId victim) const {
  for (const auto& f : victim_filters_[static_cast<int>(k)]) {
    if (!f(*this, preemptor, victim)) return false;
  }
  return true;
}

bool Session::ScenarioValid(DisruptionKind k, const Scenario& scenario) const {
  for (const auto& f : validators_[static_cast<int>(k)]) {
    if (!f(*this, scenario)) return false;
  }
  return true;
}

bool Session::ScenarioPossible(DisruptionKind k, const Scenario& scenario,
                               const Resources& min_evicted) const {
  for (const auto& f : prechecks_[static_cast<int>(k)]) {
    if (!f(*this, scenario, min_evicted)) return false;
  }
  return true;
}

void Session::SetEvictionReason(PodId pod, std::string why) {
  eviction_reasons_[pod] = std::move(why);
}

const std::string& Session::EvictionReason(PodId pod) const { return eviction_reasons_[pod]; }

void Session::SetJobReasons(JobId job, std::vector<Reason> reasons) {
  job_reasons_[job] = std::move(reasons);
}

const std::vector<Reason>& Session::JobReasons(JobId job) const { return job_reasons_[job]; }

Resources Session::SumRequests(const std::vector<PodId>& pods) const {
  Resources total;
  for (PodId p : pods) {
    const SnapPod& pod = snap_.pods[p];
    total += pod.request;
    if (pod.share.IsShared()) total.milli_gpu += RequestedMilliGpu(pod);
  }
  return total;
}

Resources Session::SumCapacityRequests(const std::vector<PodId>& pods) const {
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
