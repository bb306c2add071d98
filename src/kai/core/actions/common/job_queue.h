#pragma once
// Pending jobs ordered the way KAI's actions pop them (job_order_by_queue.go): a tree mirroring
// the queue hierarchy. Inside a leaf queue jobs follow the session's job order; at every inner
// level the child queues are compared by the session's queue order, each child represented by the
// job it would yield next, the children scanned in order and a later one taking the lead only
// when it goes strictly first (the queue order need not be transitive, so the scan is kept as is).
// Every pop reflects allocations made since the previous one. The scan of a level is kept between
// pops while none of its children changed: no job of theirs changed (Session::QueueVersion) and
// the next job of none of their leaves changed its queue-order key (Session::QueueOrderKey); a
// leaf whose next job changes to one with the same key only replaces the job on its path.
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kai/core/framework/session.h"

namespace kai::actions {

struct JobQueueOptions {
  bool skip_non_pending = true;  // jobs without Pending pods
  bool skip_unready = true;      // jobs with fewer live pods than their minimum
  int64_t max_depth = -1;        // jobs kept per leaf queue; -1 unlimited
  // Jobs whose next tasks are protected: non-preemptible jobs, semi-preemptible ones below a floor.
  bool skip_non_preemptible = false;
  bool skip_within_preemption_delay = false;  // PodGroup spec.preemptionDelay not yet elapsed
  bool only_nominated = false;                // keep only jobs with a nominated pending pod
  // No job changes while it waits in the queue (allocate moves only the popped job's pods): the
  // queue then orders jobs by their sort keys (Session::SortKeyOf), read when they enter.
  bool jobs_fixed_while_queued = false;
};

class JobQueue {
 public:
  JobQueue(const Session& session, JobQueueOptions options);
  // A queue over the given jobs only. `reverse` pops in victim order: the queue that would be
  // served last and, inside it, the job that would be scheduled last, first. `first`, when set,
  // replaces the order of jobs inside a leaf queue (true when the first goes first).
  // `victims`, when set with `reverse`, orders the queues by the session's victim queue order
  // (Session::VictimQueueBefore): a leaf stands with the resources of every job popped from it
  // (what `victims` said of the job when it was popped) and of its next job (what `victims` says
  // now), as KAI's victim queue counts the popped victims and the next one as gone.
  JobQueue(const Session& session, const std::vector<JobId>& jobs, bool reverse,
           std::function<bool(JobId, JobId)> first = {},
           std::function<Resources(JobId)> victims = {});
  bool Empty() const;
  // Removes and returns the next job, or kNone.
  JobId Pop();
  void Push(JobId job);
  // The jobs waiting in the queue, in no particular order.
  std::vector<JobId> Jobs() const;
  // Jobs that could not enter: (job, reason kind) for explanations.
  const std::vector<std::pair<JobId, Reason>>& Skipped() const { return skipped_; }

 private:
  // The best job of a subtree and the leaf it lives in; job kNone when empty. A leaf's entry
  // keeps its job's queue-order key once asked (UpdateLeaf).
  struct Best {
    JobId job = kNone;
    QueueId leaf = kNone;
    std::optional<QueueJobKey> key;
  };
  // How a subtree's best changed since the last Refresh.
  enum class Change : uint8_t {
    kNone,
    kJob,   // another job with the same queue-order key, from the same leaf
    kScan,  // anything else: the levels above scan again
  };
  // Brings best_ of the subtree rooted at `queue` up to date, scanning only changed levels.
  Change Update(QueueId queue);
  Change UpdateLeaf(QueueId leaf);
  // The scan of one level over the children's cached bests.
  Best ScanOf(const std::vector<QueueId>& queues) const;
  Best LeafBest(QueueId leaf) const;
  // Notes that the leaf's next job may change; `Refresh` brings best_ up to date.
  void MarkChanged(QueueId leaf);
  void Refresh();
  bool Before(QueueId qa, JobId ja, QueueId qb, JobId jb) const;
  // The same for two subtrees' bests (the victim queue order reads their leaves).
  bool Before(QueueId qa, const Best& a, QueueId qb, const Best& b) const;
  bool JobFirst(JobId a, JobId b) const;
  // Reads the sort keys of the jobs when every job order gives one (see JobQueueOptions).
  void UseSortKeys(const std::vector<std::vector<JobId>>& leaves);
  // Jobs that may change while queued (the disruptive actions): where every job order gives a
  // key, JobFirst compares keys read again only when the job changed (Session::JobVersion), which
  // is Session::JobBefore's answer without asking every job order at every comparison.
  void UseLiveKeys();
  const JobSortKey& LiveKey(JobId job) const;
  // Session::JobBefore on keys already read, with the job id as the final tie-breaker.
  bool KeyFirst(const JobSortKey& ka, const JobSortKey& kb, JobId a, JobId b) const;
  bool Sorted() const { return !sort_keys_.empty(); }
  // Orders a leaf's jobs as leaf_jobs_ keeps them.
  void Arrange(std::vector<JobId>& jobs) const;
  // The leaf's next job, or kNone.
  JobId Next(QueueId leaf) const;

  const Session& session_;
  bool reverse_ = false;
  std::function<bool(JobId, JobId)> job_first_;
  std::function<Resources(JobId)> victims_;
  std::vector<Resources> popped_victims_;  // per leaf queue id, with victims_
  // Per leaf queue id, with victims_: popped_victims_ and what victims_ says of the leaf's next
  // job, read when the leaf's best was last brought up to date (UpdateLeaf).
  std::vector<Resources> standing_;
  std::vector<JobSortKey> sort_keys_;  // per job id, when the queue orders by sort keys
  // With UseLiveKeys, per queued job: its key and the JobVersion it was read at. Kept for the
  // jobs of the queue only (a cycle may have few pending jobs among many).
  struct LiveKeyEntry {
    JobSortKey key;
    uint64_t read = 0;  // 0: not read
  };
  bool live_ = false;
  mutable std::unordered_map<JobId, LiveKeyEntry> live_keys_;
  // Per queue id: sorted with the next job last when the queue orders by sort keys (jobs are
  // popped far more often than pushed back), else a heap with the next job in front.
  std::vector<std::vector<JobId>> leaf_jobs_;
  std::vector<Best> best_;      // per queue id: its subtree's best (see Refresh)
  std::vector<uint64_t> seen_;  // per queue id: QueueVersion best_ was computed at
  // Per queue id: a leaf below popped or pushed a job since the last Refresh.
  std::vector<char> dirty_;
  // Per leaf queue id: its best job when it was first marked dirty.
  std::vector<JobId> old_front_;
  Best top_;  // the best of all roots
  bool computed_ = false;
  std::vector<std::pair<JobId, Reason>> skipped_;
  size_t size_ = 0;
};

// Jobs eligible for allocation (see options); reasons for the others go to `skipped`.
bool JobIsReady(const Session& session, JobId job);
bool JobHasPending(const Session& session, JobId job);
bool WithinPreemptionDelay(const Session& session, JobId job);
// A pending pod of the job carries status.nominatedNodeName naming a node of the snapshot.
bool JobIsNominated(const Session& session, JobId job);

}  // namespace kai::actions
