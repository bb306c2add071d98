#include "kai/core/framework/hooks.h"

#include <algorithm>

#include "kai/core/framework/session.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai {

const Session& SessionHooks::self() const { return static_cast<const Session&>(*this); }
Session& SessionHooks::self() { return static_cast<Session&>(*this); }

bool SessionHooks::JobBefore(JobId a, JobId b) const {
  for (size_t i = 0; i < job_order_.size(); ++i) {
    if (const JobOrderKeyFn& key = job_order_keys_[i]) {
      const int64_t ka = key(self(), a), kb = key(self(), b);
      if (ka != kb) return ka < kb;
    } else if (int c = job_order_[i](self(), a, b)) {
      return c < 0;
    }
  }
  return self().snap().jobs[a].CreatedBefore(self().snap().jobs[b]);
}

void SessionHooks::AddJobOrderKey(JobOrderKeyFn key) {
  job_order_.emplace_back();  // JobBefore compares the keys
  job_order_keys_.push_back(std::move(key));
}

bool SessionHooks::JobOrderHasKeys() const {
  if (job_order_keys_.size() > JobSortKey::kOrders) return false;
  return std::all_of(job_order_keys_.begin(), job_order_keys_.end(),
                     [](const JobOrderKeyFn& key) { return static_cast<bool>(key); });
}

std::optional<JobSortKey> SessionHooks::SortKeyOf(JobId job) const {
  if (!JobOrderHasKeys()) return std::nullopt;
  JobSortKey out;
  for (size_t i = 0; i < job_order_keys_.size(); ++i) {
    out.order[i] = job_order_keys_[i](self(), job);
  }
  out.creation = self().snap().jobs[job].creation;
  return out;
}

bool SessionHooks::TaskBefore(PodId a, PodId b) const {
  for (const auto& f : task_order_) {
    if (int c = f(self(), a, b)) return c < 0;
  }
  const SnapPod& pa = self().snap().pods[a];
  const SnapPod& pb = self().snap().pods[b];
  if (pa.creation != pb.creation) return pa.creation < pb.creation;
  return pa.uid < pb.uid;
}

bool SessionHooks::SubGroupBefore(JobId job, const SubGroupStanding& a,
                                  const SubGroupStanding& b) const {
  for (const auto& f : sub_group_order_) {
    if (int c = f(self(), job, a, b)) return c < 0;
  }
  const SnapJob& j = self().snap().jobs[job];
  return j.sub_groups[a.index].name < j.sub_groups[b.index].name;
}

namespace {

bool OlderQueue(const SnapQueue& a, const SnapQueue& b) {
  if (a.creation != b.creation) return a.creation < b.creation;
  return a.name < b.name;
}

}  // namespace

bool SessionHooks::QueueBefore(QueueId qa, JobId ja, QueueId qb, JobId jb) const {
  for (const auto& f : queue_order_) {
    if (int c = f(self(), qa, ja, qb, jb)) return c < 0;
  }
  return OlderQueue(self().snap().queues[qa], self().snap().queues[qb]);
}

bool SessionHooks::VictimQueueBefore(QueueId qa, const Resources& victims_a, QueueId qb,
                                     const Resources& victims_b) const {
  for (const auto& f : victim_queue_order_) {
    if (int c = f(self(), qa, victims_a, qb, victims_b)) return c < 0;
  }
  return OlderQueue(self().snap().queues[qa], self().snap().queues[qb]);
}

QueueJobKey SessionHooks::QueueOrderKey(JobId job) const {
  if (queue_job_keys_.empty()) return {};
  if (queue_job_keys_.size() > 1 || !queue_job_keys_.front()) return {job, 0, 0};
  return queue_job_keys_.front()(self(), job);
}

void SessionHooks::PrepareScores(PodId pod) const {
  for (const auto& f : pre_score_) f(self(), pod);
}

void SessionHooks::ScoreNodes(PodId pod, std::span<double> out) const {
  std::fill(out.begin(), out.end(), 0.0);
  self().SetScoredNodes(self().CandidateNodes());
  for (const auto& f : node_scores_) f(self(), pod, out);
}

double SessionHooks::ScoreGpu(PodId pod, const SnapNode& node, const GpuGroup* group) const {
  double score = 0;
  for (const auto& f : gpu_order_) score += f(self(), pod, node, group);
  return score;
}

std::optional<GpuChoice> SessionHooks::ChooseSharedGpus(PodId pod, NodeId node_id,
                                                        bool pipeline_only) const {
  const SnapNode& node = self().snap().nodes[node_id];
  return kai::ChooseSharedGpus(self().snap().pods[pod], node, pipeline_only,
                               [&](const GpuGroup* group) { return ScoreGpu(pod, node, group); });
}

void SessionHooks::ScoreNodes(PodId pod, std::span<double> out,
                              std::span<const NodeId> scored) const {
  for (NodeId n : scored) out[n] = 0.0;
  self().SetScoredNodes(scored);
  for (const auto& f : node_scores_) f(self(), pod, out);
  self().SetScoredNodes(self().CandidateNodes());
}

bool SessionHooks::NodeScoreKey(PodId pod, std::string& key) const {
  for (const auto& f : score_keys_) {
    if (!f || !f(self(), pod, key)) return false;
  }
  return true;
}

NodeVerdict SessionHooks::CheckPredicates(PodId pod, NodeId node) const {
  for (const auto& f : predicates_) {
    NodeVerdict v = f(self(), pod, node);
    if (!v.Fits()) return v;
  }
  return {};
}

std::optional<Reason> SessionHooks::CheckJobCapacity(JobId job,
                                                     const std::vector<PodId>& tasks) const {
  if (!job_capacity_) return std::nullopt;
  const Snapshot& snap = self().snap();
  const JobRequest request{self().SumCapacityRequests(tasks),
                           self().SumCapacityRequests(ProtectedTasks(snap, snap.jobs[job], tasks))};
  return job_capacity_(self(), job, request);
}

void SessionHooks::StartSolution() {
  for (auto& f : on_solution_start_) f(self());
}

void SessionHooks::StartJobAttempt(JobId job) {
  for (auto& f : on_job_attempt_) f(self(), job);
}

void SessionHooks::FireAllocated(PodId pod) {
  for (auto& f : on_allocate_) f(self(), pod);
}

void SessionHooks::FireDeallocated(PodId pod) {
  for (auto& f : on_deallocate_) f(self(), pod);
}

NodeSubsets SessionHooks::SubsetNodes(const TaskGroup& group, std::span<const NodeId> nodes) {
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
    for (std::span<const NodeId> set : sets) f(self(), group, set, next);
    result = std::move(next);
    sets = result.sets;
  }
  return result;
}

bool SessionHooks::VictimAllowed(DisruptionKind k, JobId preemptor, JobId victim) const {
  for (const auto& f : victim_filters_[static_cast<int>(k)]) {
    if (!f(self(), preemptor, victim)) return false;
  }
  return VictimQueueAllowed(k, preemptor, self().snap().jobs[victim].queue);
}

bool SessionHooks::VictimQueueAllowed(DisruptionKind k, JobId preemptor, QueueId queue) const {
  for (const auto& f : victim_queue_filters_[static_cast<int>(k)]) {
    if (!f(self(), preemptor, queue)) return false;
  }
  return true;
}

bool SessionHooks::ScenarioValid(DisruptionKind k, const Scenario& scenario) const {
  for (const auto& f : validators_[static_cast<int>(k)]) {
    if (!f(self(), scenario)) return false;
  }
  return true;
}

bool SessionHooks::ScenarioPossible(DisruptionKind k, const Scenario& scenario,
                                    const Resources& min_evicted) const {
  for (const auto& f : prechecks_[static_cast<int>(k)]) {
    if (!f(self(), scenario, min_evicted)) return false;
  }
  return true;
}

}  // namespace kai
