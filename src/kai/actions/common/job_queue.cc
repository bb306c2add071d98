#include "kai/actions/common/job_queue.h"

#include <algorithm>

#include "kai/framework/job_tasks.h"
#include "kai/framework/subgroups.h"
#include "kai/snapshot/semi_preemptible.h"

namespace kai::actions {

bool JobHasPending(const Session& s, JobId job) {
  for (PodId p : s.snap().jobs[job].pods) {
    if (s.snap().pods[p].status == PodStatus::kPending) return true;
  }
  return false;
}

bool JobIsNominated(const Session& s, JobId job) {
  for (PodId p : s.snap().jobs[job].pods) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.status != PodStatus::kPending || pod.obj->nominated_node.empty()) continue;
    if (s.snap().node_by_name.count(pod.obj->nominated_node)) return true;
  }
  return false;
}

bool WithinPreemptionDelay(const Session& s, JobId j) {
  const SnapJob& job = s.snap().jobs[j];
  if (!job.obj->preemption_delay_seconds) return false;
  UnixSeconds since = job.creation;
  if (job.obj->last_eviction) since = std::max(since, *job.obj->last_eviction);
  return s.now() < since + *job.obj->preemption_delay_seconds;
}

// A preemptible job; or a semi-preemptible one whose next tasks all land above its floors.
bool PreemptibleNextTasks(const Session& s, JobId j) {
  const SnapJob& job = s.snap().jobs[j];
  if (job.preemptible) return true;
  return job.semi_preemptible && ProtectedTasks(s.snap(), job, TasksToAllocate(s, j)).empty();
}

bool JobIsReady(const Session& s, JobId job) {
  return IsReadyForScheduling(s.snap(), s.snap().jobs[job]);
}

JobQueue::JobQueue(const Session& s, JobQueueOptions options)
    : session_(s), leaf_jobs_(s.snap().queues.size()) {
  const Snapshot& snap = s.snap();
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    const SnapJob& job = snap.jobs[j];
    if (options.skip_non_pending && !JobHasPending(s, j)) continue;
    if (options.only_nominated && !JobIsNominated(s, j)) continue;
    if (job.queue == kNone) {
      skipped_.push_back({j, Reason{.kind = ReasonKind::kQueueMissing, .queue = job.obj->queue}});
      continue;
    }
    if (!snap.queues[job.queue].IsLeaf()) continue;  // rejected at load time; never scheduled
    if (options.skip_non_preemptible && !PreemptibleNextTasks(s, j)) continue;
    if (options.skip_within_preemption_delay && WithinPreemptionDelay(s, j)) {
      skipped_.push_back({j, Reason{.kind = ReasonKind::kPreemptionDelay}});
      continue;
    }
    if (options.skip_unready && !JobIsReady(s, j)) {
      int alive = 0;
      for (PodId p : job.pods) alive += IsAlive(snap.pods[p].status);
      skipped_.push_back(
          {j,
           Reason{.kind = ReasonKind::kNotReady, .placed = alive, .required = job.MinAvailable()}});
      continue;
    }
    leaf_jobs_[job.queue].push_back(j);
    ++size_;
  }
  auto after = [&](JobId a, JobId b) { return s.JobBefore(b, a); };
  for (auto& jobs : leaf_jobs_) std::make_heap(jobs.begin(), jobs.end(), after);
  if (options.max_depth >= 0) {
    for (auto& jobs : leaf_jobs_) {
      if (static_cast<int64_t>(jobs.size()) <= options.max_depth) continue;
      std::sort(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return s.JobBefore(a, b); });
      size_ -= jobs.size() - options.max_depth;
      jobs.resize(options.max_depth);
      std::make_heap(jobs.begin(), jobs.end(), after);
    }
  }
}

JobQueue::JobQueue(const Session& s, const std::vector<JobId>& jobs, bool reverse,
                   std::function<bool(JobId, JobId)> first)
    : session_(s),
      reverse_(reverse),
      job_first_(std::move(first)),
      leaf_jobs_(s.snap().queues.size()) {
  for (JobId j : jobs) {
    const QueueId q = s.snap().jobs[j].queue;
    if (q == kNone) continue;
    leaf_jobs_[q].push_back(j);
    ++size_;
  }
  for (auto& v : leaf_jobs_)
    std::make_heap(v.begin(), v.end(), [&](JobId a, JobId b) { return JobFirst(b, a); });
}

bool JobQueue::Before(QueueId qa, JobId ja, QueueId qb, JobId jb) const {
  return reverse_ ? session_.QueueBefore(qb, jb, qa, ja) : session_.QueueBefore(qa, ja, qb, jb);
}

bool JobQueue::JobFirst(JobId a, JobId b) const {
  if (job_first_) return job_first_(a, b);
  return reverse_ ? session_.JobBefore(b, a) : session_.JobBefore(a, b);
}

bool JobQueue::Empty() const { return size_ == 0; }

JobQueue::Best JobQueue::LeafBest(QueueId leaf) const {
  const auto& jobs = leaf_jobs_[leaf];
  if (jobs.empty()) return Best{};
  return Best{jobs.front(), leaf};
}

JobQueue::Best JobQueue::ScanOf(const std::vector<QueueId>& queues) const {
  Best best;
  QueueId best_child = kNone;
  for (QueueId q : queues) {
    const Best& cand = best_[q];
    if (cand.job == kNone) continue;
    if (best.job == kNone || Before(q, cand.job, best_child, best.job)) {
      best = cand;
      best_child = q;
    }
  }
  return best;
}

const JobQueue::Best& JobQueue::Recompute(QueueId queue) {
  const SnapQueue& q = session_.snap().queues[queue];
  if (q.IsLeaf()) return best_[queue] = LeafBest(queue);
  for (QueueId c : q.children) Recompute(c);
  return best_[queue] = ScanOf(q.children);
}

// While the session's state is unchanged only the changed leaves' paths need a look; otherwise
// every level is scanned again.
void JobQueue::Refresh() {
  if (computed_ && state_version_ == session_.StateVersion()) {
    for (const auto& [leaf, old_front] : changed_) LeafChanged(leaf, old_front);
    changed_.clear();
    return;
  }
  changed_.clear();
  best_.resize(session_.snap().queues.size());
  for (QueueId root : session_.snap().root_queues) Recompute(root);
  top_ = ScanOf(session_.snap().root_queues);
  state_version_ = session_.StateVersion();
  computed_ = true;
}

void JobQueue::MarkChanged(QueueId leaf) {
  if (!computed_ || !session_.snap().queues[leaf].IsLeaf()) return;  // inner: never reached
  for (const auto& [changed, old_front] : changed_) {
    if (changed == leaf) return;
  }
  changed_.push_back({leaf, best_[leaf].job});
}

// Each scan compares children by queue and queue-order key alone, so a new next job with the old
// one's key changes no scan: it only takes the old one's place on the path. Otherwise the scans
// on the path are redone, over the other children's cached bests.
void JobQueue::LeafChanged(QueueId leaf, JobId old_front) {
  Best next = LeafBest(leaf);
  const Snapshot& snap = session_.snap();
  if (leaf_jobs_[leaf].size() == size_) {
    // The only leaf holding jobs (the others' changes, if any, come next): every scan on its path
    // and at the roots yields its next job, whatever its queue-order key.
    for (QueueId q = leaf; q != kNone; q = snap.queues[q].parent) best_[q] = next;
    top_ = next;
    return;
  }
  if (next.job != kNone && old_front != kNone && next.job != old_front) {
    const std::optional<QueueJobKey>& kept = best_[leaf].key;
    const QueueJobKey old_key = kept ? *kept : session_.QueueOrderKey(old_front);
    next.key = session_.QueueOrderKey(next.job);
    if (*next.key == old_key) {
      for (QueueId q = leaf; q != kNone && best_[q].leaf == leaf; q = snap.queues[q].parent) {
        best_[q].job = next.job;
      }
      best_[leaf].key = next.key;
      if (top_.leaf == leaf) top_.job = next.job;
      return;
    }
  }
  if (next.job != kNone && next.job == old_front) return;  // the same next job
  best_[leaf] = next;
  for (QueueId q = snap.queues[leaf].parent; q != kNone; q = snap.queues[q].parent) {
    best_[q] = ScanOf(snap.queues[q].children);
  }
  top_ = ScanOf(snap.root_queues);
}

JobId JobQueue::Pop() {
  if (size_ == 0) return kNone;
  Refresh();
  const JobId job = top_.job;
  const QueueId leaf = top_.leaf;
  if (job == kNone) return kNone;
  auto& jobs = leaf_jobs_[leaf];
  std::pop_heap(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return JobFirst(b, a); });
  jobs.pop_back();
  --size_;
  MarkChanged(leaf);
  return job;
}

void JobQueue::Push(JobId job) {
  const QueueId leaf = session_.snap().jobs[job].queue;
  auto& jobs = leaf_jobs_[leaf];
  MarkChanged(leaf);
  jobs.push_back(job);
  std::push_heap(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return JobFirst(b, a); });
  ++size_;
}

}  // namespace kai::actions
