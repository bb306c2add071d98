#pragma once
// The search shared by the disruptive actions (reclaim, preempt, consolidation): simulate first,
// commit later (KAI actions/common/solvers). Victim jobs are taken in victim order, one eviction
// unit at a time, into a growing scenario. Each scenario is simulated inside the caller's
// Statement: evict the victims virtually, then re-run a pipeline-only allocation of the preemptor
// and the victims' jobs in job order. A scenario succeeds when the preemptor's tasks all fit and
// the validators accept it; victims that found a new place are moved (Pipelined), the others are
// evicted. Hopeless scenarios are skipped by a cheap necessary condition (enough GPUs) before any
// simulation, and a scenario already tried is never simulated twice.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unordered_map>

#include "kai/core/actions/common/eviction_units.h"
#include "kai/core/actions/common/job_queue.h"
#include "kai/core/framework/session_metrics.h"
#include "kai/core/framework/statement.h"

namespace kai::actions {

class QueueUseBook;

struct SolverConfig {
  std::string action;                        // reclaim, preempt, consolidation (for explanations)
  std::optional<DisruptionKind> validators;  // which session validators apply
  bool all_victims_replaced = false;         // consolidation: no victim may end evicted
  // Skip victims running only on nodes where none of the preemptor's tasks could ever run
  // (resources or predicates): evicting them cannot make room. Off for consolidation, where
  // such evictions can still open a new home for a moved pod.
  bool skip_useless_victims = true;
  int64_t max_scenarios = 100000;  // bound on simulations per job
  // A victim gang that loses placed pods restarts whole (its pods placed back on their own node
  // too) instead of running split (KAI's behaviour; spec.args restart-partly-moved-gangs).
  bool restart_split_gangs = false;
  // Each bound comes with the name the job's reason gives it when it stops the search.
  struct Bound {
    int64_t limit = -1;  // -1: none (0 stops at once)
    std::string name;    // the configuration field with its value, e.g. "spec.args.x=5"
  };
  // The work budget, in work units (deterministic, machine-independent): every scenario the
  // search considers costs 1, a simulated one also 1 per victim it evicts and 1 per pod whose
  // placement it tries (the preemptor's and the victims' jobs re-placed). The search stops before
  // simulating a scenario once the budget is spent.
  Bound max_work;
  Bound max_millis;  // search time per job (session clock), checked once per victim unit
  // Time per generator pass (KAI's NodeLocalGreedy, then MultiNodeGang): the pass ends, the next
  // one starts.
  Bound node_local_millis, accumulated_millis;
};

// One eviction unit of a victim job (VictimJobPods::TakeUnit): a surplus pod or SubGroup, else
// every pod the job still runs.
struct EvictionUnit {
  JobId job = kNone;
  std::vector<PodId> pods;
  bool job_done = false;  // the job has given all it may: it comes back no more
  bool dropped = false;   // the caller did not want the unit (VictimQueue::Next): pods not listed
};

// GPUs free or being freed on usable nodes (milli-GPU).
int64_t FreeOrReleasingGpus(const Session& session);
// Whether the usable nodes' free or releasing GPUs, whole or in shared GPUs' free fractions, and
// their GPU memory cover what the tasks ask (KAI's IsEnoughGPUsAllocatableForJob).
bool EnoughGpusForTasks(const Session& session, const std::vector<PodId>& tasks);
// Whole GPUs the tasks need for sure (shared-GPU tasks may fit in shared groups: 0).
int64_t WholeGpuDemand(const Session& session, const std::vector<PodId>& tasks);

// Pods of a job a disruptive action may evict: every active-allocated pod.
std::vector<PodId> EvictablePods(const Session& session, JobId job);
// The GPUs (milli) of those pods, without listing them.
int64_t EvictableMilliGpus(const Session& session, JobId job);
// EvictablePods(session, job) is not empty, without building the list (it runs for every job for
// every preemptor).
bool HasEvictablePod(const Session& session, JobId job);

// KAI's victim job order (priority, then gang state, then age, then uid) on the given gang
// levels, the job id last: true when `a` is taken before `b`.
bool VictimBefore(const Session& session, JobId a, GangLevel level_a, JobId b, GangLevel level_b);

// Victim jobs per leaf queue, each queue's list in victim order (VictimBefore on the jobs' gang
// levels as they stand), and the queues that hold any.
struct VictimsByQueue {
  std::vector<std::vector<JobId>> by_queue;  // per queue id
  std::vector<QueueId> leaves;
};
// The jobs sorted so; jobs of no queue or of an inner queue are left out. `levels`, when given
// (per job id), receives the gang level each sorted job was sorted by.
VictimsByQueue SortVictims(const Session& session, const std::vector<JobId>& jobs,
                           std::vector<std::optional<GangLevel>>* levels = nullptr);

// Per-job arrays a caller lends to the searches it runs one after another, so that no search sizes
// arrays by the snapshot's jobs: each entry is given back as it was lent.
struct VictimScratch {
  explicit VictimScratch(size_t jobs) : slots(jobs, -1), accepted(jobs, 0) {}
  std::vector<int> slots;        // per job id, -1: the victim queue's slots
  std::vector<int8_t> accepted;  // per job id, 0: a search's answers on which jobs are victims
};

// The victims a search may take, offered lazily: a leaf queue's list is read only as far as the
// search takes jobs from it, and `accept` is asked about each job reached (unset: every job).
// The lists must be in victim order on the jobs' gang levels as they stand when the search runs.
struct VictimOffer {
  const std::vector<std::vector<JobId>>* by_queue = nullptr;  // per queue id
  std::vector<QueueId> leaves;                                // the lists offered
  std::function<bool(JobId)> accept;
  // Scratch lent to one search (and its victim queues) at a time, given back as lent. Unset: each
  // makes its own, sized by the snapshot's jobs.
  VictimScratch* scratch = nullptr;
  // Every listed job helps the preemptor (UsefulNodes::Helps): the search need not ask again.
  bool helpful_only = false;
};

// Whether a victim can make room for a preemptor's tasks. A node is useful when one of the tasks
// could run there once emptied (resources and predicates); each node is asked once, in the state
// of the first question, then kept.
class UsefulNodes {
 public:
  UsefulNodes(const Session& session, std::vector<PodId> tasks);
  bool Of(NodeId node);
  // Some pod of `pods` is on a useful node.
  bool OnAny(const std::vector<PodId>& pods);
  // The job helps: it does not give all it runs at once (at `level`), or some active pod of it
  // runs on a useful node. A job that does neither is no victim.
  bool Helps(JobId job, GangLevel level);

 private:
  const Session& s_;
  std::vector<PodId> tasks_;
  std::vector<int8_t> known_;  // per node: Of's answer (-1: not asked yet)
};

// Victim jobs in victim order (the queue served last first; inside a queue the job scheduled
// last first). A job that still has pods after giving a unit goes back into the queue and is
// ordered again by what it still runs, as KAI re-pushes the job's remaining tasks.
// A job's pods are listed (VictimJobPods) only when it is first taken: until then its standing
// is its gang level on what it runs. A leaf queue's next job is drawn from the offer only when
// the one before it is taken: its order is the offer's, and the queue order between leaves reads
// only each leaf's next job. The caller keeps the session's state as it was at construction
// whenever it calls Next (a disruptive search rolls every scenario back).
class VictimQueue {
 public:
  // Over the given jobs, every one a victim.
  VictimQueue(const Session& session, const std::vector<JobId>& jobs);
  // Over the offer, whose lists outlive the queue.
  VictimQueue(const Session& session, VictimOffer offer);
  ~VictimQueue();
  VictimQueue(const VictimQueue&) = delete;
  VictimQueue& operator=(const VictimQueue&) = delete;
  bool Empty() const { return queue_.Empty(); }
  // Takes the next unit. `wanted`, when given, is asked first about a job whose next unit is
  // every pod it runs (WholeAtOnce): when it says no, the job is dropped without listing its pods.
  // Such a unit is listed straight from the snapshot (the job never comes back, so no
  // VictimJobPods is kept for it).
  EvictionUnit Next(const std::function<bool(JobId)>& wanted = {});
  // The same into `unit`, whose pod list's storage is reused.
  void Next(EvictionUnit& unit, const std::function<bool(JobId)>& wanted = {});
  // The job, never taken from before, gives all its active-allocated pods in its first unit: a
  // preemptible job without SubGroups not above its minimum (no surplus pod to give alone).
  bool WholeAtOnce(JobId job) const;
  // The job's index among the jobs drawn so far (0, 1, ...: a job drawn is given the next one).
  int Slot(JobId job) const { return (*slot_)[job]; }

 private:
  VictimQueue(const Session& session, std::shared_ptr<const VictimsByQueue> own);
  VictimQueue(const Session& session, VictimOffer offer, std::shared_ptr<const VictimsByQueue> own);
  // KAI's job order (priority, then gang state, then age, then uid) on the remaining pods.
  bool VictimFirst(JobId a, JobId b) const;
  // Draws the leaf's next accepted job from the offer and gives it a slot; kNone when none is left.
  JobId Draw(QueueId leaf);
  // The first accepted job of every offered leaf.
  std::vector<JobId> DrawFirsts();

  VictimJobPods& Remaining(int slot);
  // What the job still holds (allocated pods, KAI's AllocatedVector) for the victim queue order.
  Resources Held(JobId job);
  struct Holding;
  // Adds (sign +1) or takes away (-1) the pod as KAI's victim queue order counts it (its request
  // vector: cpu, memory, whole GPUs or fraction x devices; a gpu-memory pod asks no GPU there).
  static void Add(Holding& held, const SnapPod& pod, int sign);

  const Session& session_;
  std::shared_ptr<const VictimsByQueue> own_;  // the lists of the jobs constructor
  VictimOffer offer_;
  std::vector<size_t> cursor_;     // per queue id: the next place of its list to draw from
  std::vector<JobId> last_drawn_;  // per queue id: its job drawn last, while it waits in queue_
  std::vector<int> own_slots_;     // when the offer lends no scratch
  // Per job id: a drawn job's index in the per-slot vectors, else -1 (the offer's scratch or
  // own_slots_).
  std::vector<int>* slot_;
  // Per slot: the job's allocated pods' cpu, memory and GPUs, summed when first asked (`known`),
  // less those given.
  struct Holding {
    int64_t milli_cpu = 0, memory = 0, milli_gpu = 0;
    bool known = false;
  };
  // A job drawn, in its slot.
  struct Drawn {
    JobId job = kNone;
    GangLevel level{};                       // the gang level on the pods the job still runs
    std::optional<VictimJobPods> remaining;  // built when first taken
    Holding held;
  };
  std::vector<Drawn> drawn_jobs_;
  JobQueue queue_;
};

struct SolveResult {
  bool solved = false;
  std::vector<PodId> evicted;  // victims that end Releasing
  std::vector<PodId> moved;    // victims re-placed elsewhere (Pipelined)
  // Victims re-placed on their own node but restarted with their gang (also in `moved`).
  std::vector<PodId> restarted;
  int scenarios_tried = 0;
  int scenarios_pruned = 0;
  int64_t work = 0;                   // work units spent (SolverConfig::max_work)
  bool gave_up = false;               // a bound stopped the search before it was exhausted
  std::string bound;                  // which one, as its SolverConfig::Bound name (when gave_up)
  std::vector<GeneratorPass> passes;  // the generator passes run, measured
};

// Solves for the next tasks of `job` with the victims offered; on success the statement holds
// the solution (uncommitted).
SolveResult SolveJob(Session& session, Statement& stmt, JobId job, const VictimOffer& victims,
                     const SolverConfig& config);

// Records on each victim why it was evicted (action, beneficiary, rule and, when `book` is given,
// the queues reclaim weighed).
void ExplainEvictions(Session& session, JobId preemptor, const SolveResult& result,
                      const std::string& action, const std::string& rule,
                      QueueUseBook* book = nullptr);

}  // namespace kai::actions
