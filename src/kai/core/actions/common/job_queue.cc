#include "kai/core/actions/common/job_queue.h"

#include <algorithm>

#include "kai/core/framework/job_tasks.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai::actions {

bool JobHasPending(const Session& s, JobId job) { return s.PendingPods(job) > 0; }

bool JobIsNominated(const Session& s, JobId job) {
  for (PodId p : s.snap().jobs[job].pods) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.status == PodStatus::kPending && pod.nominated != kNone) return true;
  }
  return false;
}

bool WithinPreemptionDelay(const Session& s, JobId j) {
  const std::optional<UnixSeconds> end = s.snap().jobs[j].PreemptionDelayEnd();
  return end && s.now() < *end;
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
      skipped_.push_back({j, QueueMissingReason{job.obj->queue}});
      continue;
    }
    if (!snap.queues[job.queue].IsLeaf()) continue;  // rejected at load time; never scheduled
    if (options.skip_non_preemptible && !PreemptibleNextTasks(s, j)) continue;
    if (options.skip_within_preemption_delay && WithinPreemptionDelay(s, j)) {
      skipped_.push_back({j, PreemptionDelayReason{}});
      continue;
    }
    if (options.skip_unready && !JobIsReady(s, j)) {
      int alive = 0;
      for (PodId p : job.pods) alive += IsAlive(snap.pods[p].status);
      skipped_.push_back({j, NotReadyReason{.live = alive, .min_member = job.MinAvailable()}});
      continue;
    }
    leaf_jobs_[job.queue].push_back(j);
    ++size_;
  }
  if (size_ > 0 && session_.JobOrderHasKeys()) {
    if (options.jobs_fixed_while_queued) {
      UseSortKeys(leaf_jobs_);
    } else {
      UseLiveKeys();
    }
  }
  for (auto& jobs : leaf_jobs_) {
    if (options.max_depth >= 0 && static_cast<int64_t>(jobs.size()) > options.max_depth) {
      std::sort(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return JobFirst(a, b); });
      size_ -= jobs.size() - options.max_depth;
      jobs.resize(options.max_depth);
    }
    Arrange(jobs);
  }
}

std::vector<JobId> JobQueue::Jobs() const {
  std::vector<JobId> out;
  out.reserve(size_);
  for (const auto& jobs : leaf_jobs_) out.insert(out.end(), jobs.begin(), jobs.end());
  return out;
}

void JobQueue::UseSortKeys(const std::vector<std::vector<JobId>>& leaves) {
  sort_keys_.resize(session_.snap().jobs.size());
  for (const auto& jobs : leaves) {
    for (JobId j : jobs) sort_keys_[j] = *session_.SortKeyOf(j);
  }
}

void JobQueue::UseLiveKeys() {
  live_ = true;
  live_keys_.reserve(size_);
}

const JobSortKey& JobQueue::LiveKey(JobId job) const {
  LiveKeyEntry& e = live_keys_[job];
  if (e.read != session_.JobVersion(job)) {
    e.key = *session_.SortKeyOf(job);
    e.read = session_.JobVersion(job);
  }
  return e.key;
}

JobQueue::JobQueue(const Session& s, const std::vector<JobId>& jobs, bool reverse,
                   std::function<bool(JobId, JobId)> first, std::function<Resources(JobId)> victims)
    : session_(s),
      reverse_(reverse),
      job_first_(std::move(first)),
      victims_(reverse ? std::move(victims) : nullptr),
      leaf_jobs_(s.snap().queues.size()) {
  if (victims_) {
    popped_victims_.resize(s.snap().queues.size());
    standing_.resize(s.snap().queues.size());
  }
  for (JobId j : jobs) {
    const QueueId q = s.snap().jobs[j].queue;
    if (q == kNone) continue;
    leaf_jobs_[q].push_back(j);
    ++size_;
  }
  for (auto& v : leaf_jobs_) Arrange(v);
}

void JobQueue::Arrange(std::vector<JobId>& jobs) const {
  auto first = [&](JobId a, JobId b) { return JobFirst(a, b); };
  auto after = [&](JobId a, JobId b) { return JobFirst(b, a); };
  if (Sorted()) {
    // Jobs often come in their order already (snapshot order follows creation): one pass then.
    if (std::is_sorted(jobs.begin(), jobs.end(), first)) {
      std::reverse(jobs.begin(), jobs.end());
    } else {
      std::sort(jobs.begin(), jobs.end(), after);
    }
  } else {
    std::make_heap(jobs.begin(), jobs.end(), after);
  }
}

JobId JobQueue::Next(QueueId leaf) const {
  const auto& jobs = leaf_jobs_[leaf];
  if (jobs.empty()) return kNone;
  return Sorted() ? jobs.back() : jobs.front();
}

bool JobQueue::Before(QueueId qa, JobId ja, QueueId qb, JobId jb) const {
  return reverse_ ? session_.QueueBefore(qb, jb, qa, ja) : session_.QueueBefore(qa, ja, qb, jb);
}

bool JobQueue::Before(QueueId qa, const Best& a, QueueId qb, const Best& b) const {
  if (!victims_) return Before(qa, a.job, qb, b.job);
  return session_.VictimQueueBefore(qb, standing_[b.leaf], qa, standing_[a.leaf]);
}

bool JobQueue::JobFirst(JobId a, JobId b) const {
  if (job_first_) return job_first_(a, b);
  // Session::JobBefore's order (reverse_ is never set with keys): keys read when the jobs entered,
  // or read again when a job changed.
  if (!sort_keys_.empty()) return KeyFirst(sort_keys_[a], sort_keys_[b], a, b);
  if (live_) return KeyFirst(LiveKey(a), LiveKey(b), a, b);
  return reverse_ ? session_.JobBefore(b, a) : session_.JobBefore(a, b);
}

bool JobQueue::KeyFirst(const JobSortKey& ka, const JobSortKey& kb, JobId a, JobId b) const {
  for (size_t i = 0; i < JobSortKey::kOrders; ++i) {
    if (ka.order[i] != kb.order[i]) return ka.order[i] < kb.order[i];
  }
  const SnapJob& ja = session_.snap().jobs[a];
  const SnapJob& jb = session_.snap().jobs[b];
  if (ja.CreatedBefore(jb)) return true;
  if (jb.CreatedBefore(ja)) return false;
  return a < b;  // UIDs repeated in the input: the job id keeps the order total
}

bool JobQueue::Empty() const { return size_ == 0; }

JobQueue::Best JobQueue::LeafBest(QueueId leaf) const {
  const JobId next = Next(leaf);
  if (next == kNone) return Best{};
  return Best{next, leaf};
}

JobQueue::Best JobQueue::ScanOf(const std::vector<QueueId>& queues) const {
  Best best;
  QueueId best_child = kNone;
  for (QueueId q : queues) {
    const Best& cand = best_[q];
    if (cand.job == kNone) continue;
    if (best.job == kNone || Before(q, cand, best_child, best)) {
      best = cand;
      best_child = q;
    }
  }
  return best;
}

JobQueue::Change JobQueue::UpdateLeaf(QueueId leaf) {
  const bool version_changed = seen_[leaf] != session_.QueueVersion(leaf);
  if (!version_changed && !dirty_[leaf]) return Change::kNone;
  const JobId old_front = dirty_[leaf] ? old_front_[leaf] : best_[leaf].job;
  dirty_[leaf] = 0;
  seen_[leaf] = session_.QueueVersion(leaf);
  Best next = LeafBest(leaf);
  if (victims_) {  // the victim order also reads what the leaf has given: any pop or push counts
    standing_[leaf] = popped_victims_[leaf];
    if (next.job != kNone) standing_[leaf] += victims_(next.job);
    best_[leaf] = next;
    return Change::kScan;
  }
  if (version_changed) {  // the queue's accounting or its jobs changed: keys read again
    best_[leaf] = next;
    return Change::kScan;
  }
  if (next.job == old_front) return Change::kNone;
  if (leaf_jobs_[leaf].size() == size_) {
    // The only leaf holding jobs: the scans on its path compare nothing, whatever the key.
    best_[leaf] = next;
    return Change::kScan;
  }
  // Scans compare children by queue and queue-order key alone: a next job with the old one's key
  // changes no scan, it only takes the old one's place on the path.
  if (next.job != kNone && old_front != kNone) {
    const std::optional<QueueJobKey>& kept = best_[leaf].key;
    const QueueJobKey old_key = kept ? *kept : session_.QueueOrderKey(old_front);
    next.key = session_.QueueOrderKey(next.job);
    if (*next.key == old_key) {
      best_[leaf] = next;
      return Change::kJob;
    }
  }
  best_[leaf] = next;
  return Change::kScan;
}

JobQueue::Change JobQueue::Update(QueueId queue) {
  const SnapQueue& q = session_.snap().queues[queue];
  if (q.IsLeaf()) return UpdateLeaf(queue);
  if (seen_[queue] == session_.QueueVersion(queue) && !dirty_[queue]) return Change::kNone;
  dirty_[queue] = 0;
  seen_[queue] = session_.QueueVersion(queue);
  bool scan = false;
  QueueId job_changed = kNone;  // a child whose best changed to an equal-key job
  for (QueueId c : q.children) {
    const Change change = Update(c);
    if (change == Change::kScan) scan = true;
    if (change == Change::kJob) job_changed = c;
  }
  if (scan || job_changed == kNone) {
    // A changed version with unchanged children still means changed accounting below.
    best_[queue] = ScanOf(q.children);
    return Change::kScan;
  }
  // Only equal-key replacements below: the level keeps its choice.
  bool replaced = false;
  for (QueueId c : q.children) {
    if (best_[queue].leaf != kNone && best_[queue].leaf == best_[c].leaf) {
      replaced = best_[queue].job != best_[c].job;
      best_[queue].job = best_[c].job;
    }
  }
  return replaced ? Change::kJob : Change::kNone;
}

// Levels whose children are unchanged keep their scan; see the header.
void JobQueue::Refresh() {
  const Snapshot& snap = session_.snap();
  if (!computed_) {
    best_.assign(snap.queues.size(), Best{});
    seen_.assign(snap.queues.size(), ~uint64_t{0});  // every level scanned the first time
    dirty_.assign(snap.queues.size(), 0);
    old_front_.assign(snap.queues.size(), kNone);
    computed_ = true;
  }
  bool scan = false;
  for (QueueId root : snap.root_queues) scan |= Update(root) == Change::kScan;
  if (scan || top_.job == kNone) {
    top_ = ScanOf(snap.root_queues);
  } else if (top_.leaf != kNone) {
    top_.job = best_[top_.leaf].job;
  }
}

void JobQueue::MarkChanged(QueueId leaf) {
  if (!computed_ || !session_.snap().queues[leaf].IsLeaf()) return;  // inner: never reached
  if (dirty_[leaf]) return;
  old_front_[leaf] = best_[leaf].job;
  for (QueueId q = leaf; q != kNone && !dirty_[q]; q = session_.snap().queues[q].parent) {
    dirty_[q] = 1;
  }
}

JobId JobQueue::Pop() {
  if (size_ == 0) return kNone;
  Refresh();
  const JobId job = top_.job;
  const QueueId leaf = top_.leaf;
  if (job == kNone) return kNone;
  if (victims_) popped_victims_[leaf] += victims_(job);
  auto& jobs = leaf_jobs_[leaf];
  if (!Sorted()) {
    std::pop_heap(jobs.begin(), jobs.end(), [&](JobId a, JobId b) { return JobFirst(b, a); });
  }
  jobs.pop_back();
  --size_;
  MarkChanged(leaf);
  return job;
}

void JobQueue::Push(JobId job) {
  const QueueId leaf = session_.snap().jobs[job].queue;
  if (!sort_keys_.empty()) sort_keys_[job] = *session_.SortKeyOf(job);  // it changed when popped
  auto& jobs = leaf_jobs_[leaf];
  MarkChanged(leaf);
  auto after = [&](JobId a, JobId b) { return JobFirst(b, a); };
  if (Sorted()) {
    jobs.insert(std::upper_bound(jobs.begin(), jobs.end(), job, after), job);
  } else {
    jobs.push_back(job);
    std::push_heap(jobs.begin(), jobs.end(), after);
  }
  ++size_;
}

}  // namespace kai::actions
