#pragma once
// Verdicts on pending jobs that a session takes instead of deciding them again (docs/design.md,
// "A cycle costs what changed"). An action that could not serve a job leaves a verdict: the
// reasons it set or added and, for a disruptive search, the work it spent under which bound.
// Another job takes that verdict without being decided when its decision is bound to come out the
// same:
//   - kept: the same job in the next cycle, when that cycle starts from the state the previous
//     one found and left (it decided nothing, the world did not change, no pod's status, node
//     accounting, fair share or configuration moved, and for disruptive actions no min-runtime
//     ended), and nothing has been committed yet in this session;
//   - shared: a job of the same shape (queue, priority, preemptibility, gang and SubGroups,
//     topology, every pod's requests, selectors, affinity and tolerations; pods of plain jobs
//     only: no pod affinity, host ports, volumes, claims or nominations) later in the same
//     action, when nothing has been committed since.
// Both leave the session's state exactly as deciding the job would have (a failed decision
// commits nothing), so the decisions are KAI's; sim::SimulateOptions::verify_kept_verdicts runs
// the full evaluation beside and fails on the first difference. SchedulerConfig::keep_verdicts
// turns this off. A search bounded by time is never kept or shared (its outcome depends on the
// machine's speed).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kai/core/framework/reasons.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {

class Session;
struct ActionMetrics;

// What one action concluded about a job it could not serve.
struct ActionVerdict {
  std::vector<Reason> reasons;  // allocate: the job's reasons; a disruptive action: those it added
  // A disruptive search: whether one ran, the work it spent and the work bound it ran under (-1:
  // none).
  bool searched = false;
  int64_t work = 0;
  int64_t bound_limit = -1;
  std::string bound_name;
  bool gave_up = false;
  // Jobs of the same shape may take it. A search that simulated scenarios re-placed the job among
  // the candidate jobs of its own leaf queue: `after` (`before`) is the last (first) of them
  // created before (after) it (SnapJob::CreatedBefore), and a job of the same shape takes the
  // verdict only when it lies between the two too.
  bool shareable = true;
  JobId after = kNone, before = kNone;
  // The same search run under the bound (`limit`, `name`) takes the same path: it finished below
  // that bound, or stopped on the very same bound.
  bool HoldsUnder(int64_t limit, std::string_view name) const;
};

// One cycle's record for the next: what it found, whether it changed anything, and its verdicts
// on the jobs it left pending.
struct CycleVerdicts {
  bool recorded = false;
  bool quiet = false;  // no bind, eviction, pipeline, and no job timer set
  UnixSeconds now = 0;
  std::string config;  // SchedulerConfig's decision-relevant settings, as text
  std::vector<std::pair<PodStatus, NodeId>> pods;  // as the session found them
  std::vector<Resources> node_idle, node_releasing;
  std::vector<Resources> fair_shares;  // per queue, after the plugins opened
  struct Job {
    std::string uid;
    // By action, the action's index in CycleVerdicts::action_names.
    std::vector<std::pair<uint8_t, std::shared_ptr<const ActionVerdict>>> actions;
    std::shared_ptr<const std::vector<Reason>> reasons;  // the job's reasons as the session closed
  };
  std::vector<Job> jobs;  // by job id; empty uid: no verdict
  std::vector<std::string> action_names;
  std::vector<std::pair<std::string, int64_t>> verdicts_per_action;  // how many each action left
};

class VerdictMemo {
 public:
  // Called once the plugins are open (fair shares are known). `previous`: the last cycle's
  // record, which Finish may take from; `world_unchanged`: nothing in the cluster changed since
  // that cycle; `record`: Finish will be asked for this cycle's record.
  void Open(const Session& s, CycleVerdicts* previous, bool world_unchanged, bool record);
  void StartAction(std::string_view action);
  // The whole cycle repeats the last one (every verdict kept, no pending job's preemption delay
  // ended, the actions that decide pending jobs run first): each of those actions, while nothing
  // has been committed, is replaced by Replay, which gives every job its reasons of the last
  // cycle at once, without ordering or visiting the jobs action by action.
  bool Replays(const Session& s, std::string_view action) const;
  void Replay(Session& s);
  // A verdict the job takes instead of being decided, or null. `limit`/`name`: the work bound its
  // search would run under (allocate: -1, ""). The job is given the verdict's reasons: in place
  // of its own (allocate: kReplace) or after them (the disruptive actions: kAppend). Jobs that
  // held the same reasons and take the same verdict in this action end up holding one shared
  // vector, not a copy each.
  enum class Reasons { kReplace, kAppend };
  const ActionVerdict* Take(Session& s, JobId job, Reasons how, int64_t limit = -1,
                            std::string_view name = "");
  // The job was decided now and not served.
  void Decided(Session& s, JobId job, ActionVerdict verdict);
  // The job was decided now (served or not): counted as tried.
  void Tried(Session& s);
  // Every job in `jobs` takes a kept verdict in the action starting, so the action may apply
  // them without ordering the jobs (nothing can be committed in between). A disruptive action
  // gives its per-job work bound and its per-action one (-1: none): each kept search must have
  // run under the per-job bound, which holds while the action's bound leaves more than that.
  bool KeepsAll(const Session& s, const std::vector<JobId>& jobs, int64_t job_limit = -1,
                std::string_view job_bound = "", int64_t action_limit = -1) const;
  // The record for the next cycle (after the session's last decision).
  CycleVerdicts Finish(const Session& s);
  // The first job of the job's shape in this session (SameShape), when the job may share
  // verdicts now (Shareable); kNone otherwise.
  JobId ShapeOf(const Session& s, JobId job);
  // Allocate, for a job its queue admits (Session::CheckJobCapacity passed): the verdict of a job
  // of its shape in any queue whose placement failed (PlacementFailed) since the last commit, or
  // null. A placement does not read the queue of a job of plain pods, so it would fail alike,
  // with the same reasons; the job takes them (in place of its own) and the verdict becomes its
  // queue's class verdict too.
  const ActionVerdict* TakePlacement(Session& s, JobId job);
  // The first job whose placement is the job's in this session, whatever their queues (what
  // TakePlacement shares by), when the job may share verdicts now; kNone otherwise.
  JobId PlacementShapeOf(const Session& s, JobId job);
  // Decided, for an allocate verdict that is the job's failed placement (not its queue's refusal).
  void PlacementFailed(Session& s, JobId job, ActionVerdict verdict);

 private:
  struct ClassEntry {
    uint64_t commits = 0;  // Session::CommitCount when it was decided
    std::shared_ptr<const ActionVerdict> verdict;
  };
  const std::shared_ptr<const ActionVerdict>* Kept(const Session& s, JobId job, int64_t limit,
                                                   std::string_view name) const;
  const std::shared_ptr<const ActionVerdict>* Shared(const Session& s, JobId job, JobId shape,
                                                     int64_t limit, std::string_view name) const;
  void Remember(JobId job, const std::shared_ptr<const ActionVerdict>& verdict);
  // A held verdict given to `job`: counted (kept from the last cycle, or shared), recorded, and
  // its reasons given to the job.
  void Give(Session& s, JobId job, const std::shared_ptr<const ActionVerdict>& verdict, Reasons how,
            bool kept);
  // The verdict `job` reached, recorded and offered to its shape's later jobs; null outside an
  // action.
  std::shared_ptr<const ActionVerdict> Keep(Session& s, JobId job, ActionVerdict verdict);
  void GiveReasons(Session& s, JobId job, const std::shared_ptr<const ActionVerdict>& verdict,
                   Reasons how);
  ActionMetrics* Metrics(Session& s) const;

  bool enabled_ = false;
  bool searches_ = false;  // disruptive searches are deterministic (no time bound)
  bool keep_allocate_ = false, keep_disruptive_ = false;
  bool replay_ = false;    // Replays may say yes
  bool replayed_ = false;  // Replay gave the jobs their reasons
  size_t jobs_ = 0;        // the snapshot's jobs
  CycleVerdicts* previous_ = nullptr;
  std::string action_;
  uint8_t action_index_ = 0;  // in next_.action_names
  bool disruptive_ = false;
  std::unordered_map<JobId, ClassEntry> classes_;  // this action's, by shape (ShapeOf)
  // This action's Take results: by the reasons a job held and the verdict it took, the reasons
  // it holds after (`held` and `verdict` keep the keys alive, so that no address is reused).
  struct Given {
    std::shared_ptr<const std::vector<Reason>> held, after;
    std::shared_ptr<const ActionVerdict> verdict;
  };
  struct GivenKeyHash {
    size_t operator()(const std::pair<const void*, const void*>& k) const {
      return std::hash<const void*>()(k.first) * 31 + std::hash<const void*>()(k.second);
    }
  };
  std::unordered_map<std::pair<const void*, const void*>, Given, GivenKeyHash> given_;
  // The shapes seen in the session, with or without the queue.
  struct ShapeIndex {
    bool with_queue;  // ShapeOf; without it: TakePlacement
    // Per job: the first job of its shape, kNone when it can never share, -2 not yet known.
    std::vector<JobId> of;
    std::unordered_map<uint64_t, std::vector<JobId>> seen;  // by ShapeHash
  };
  JobId Find(const Session& s, JobId job, ShapeIndex& index);
  ShapeIndex shapes_{.with_queue = true};
  ShapeIndex placement_shapes_{.with_queue = false};
  std::unordered_map<JobId, ClassEntry> placements_;  // this action's, by placement shape
  CycleVerdicts next_;
};

}  // namespace kai
