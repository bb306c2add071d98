#pragma once
// The registry of a session's hooks: what plugins register (one small interface per extension
// point) and the rule by which several registrations of one hook combine (all-of, sum of scores,
// first decisive). The hooks read and change the session's state (framework/session_state.h)
// through the Session they are given.
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kai/core/framework/reasons.h"
#include "kai/core/snapshot/fit.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {

class Session;

// Hook types. Each states how several registrations combine.
// Order hooks return <0 when the first argument goes first, >0 when the second does, 0 for no
// opinion; the first non-zero answer in registration order decides (KAI's session_plugins.go).
using JobOrderFn = std::function<int(const Session&, JobId, JobId)>;
// A job order stated as a key: the job with the smaller key goes first. The key reads only the
// job (its spec and its pods), so it changes only with Session::JobVersion().
using JobOrderKeyFn = std::function<int64_t(const Session&, JobId)>;
// Every registered job order's key, in registration order, then the creation time: two jobs
// compare as their JobSortKeys, then by UID (Session::JobBefore's order).
struct JobSortKey {
  static constexpr size_t kOrders = 4;
  std::array<int64_t, kOrders> order{};
  UnixSeconds creation = 0;
};
using TaskOrderFn = std::function<int(const Session&, PodId, PodId)>;
// A member of a SubGroupSet as the SubGroup order sees it: satisfied members (pods of a PodSet)
// against the number it needs. The caller supplies the counts, so that the eviction order can be
// asked about what a victim job would still run.
struct SubGroupStanding {
  SubGroupIndex index = kNone;
  int satisfied = 0;
  int needed = 0;
};
// Compares two members of one SubGroupSet of a job.
using SubGroupOrderFn =
    std::function<int(const Session&, JobId, const SubGroupStanding&, const SubGroupStanding&)>;
// Compares two queues, each with the job that would be scheduled next from it.
using QueueOrderFn = std::function<int(const Session&, QueueId, JobId, QueueId, JobId)>;
// What a queue order reads of the jobs it is given, for callers that reuse its answers: the order
// of (qa, ja) and (qb, jb) depends on ja and jb only through their keys (e.g. their next-step
// requests), and on the rest of the session only through the state of qa's and qb's subtrees
// (their jobs' pods and accounting), which changes with Session::QueueVersion() of qa and qb.
using QueueJobKey = std::array<int64_t, 3>;
// Compares two queues as victim queues (reclaim's victim order), each with the resources (cpu,
// memory, gpu) of the victims taken from it so far and of the job it would give next: KAI's queue
// order in victim mode, which sees no pending job and counts those victims as gone.
using VictimQueueOrderFn = std::function<int(const Session&, QueueId, const Resources& victims_a,
                                             QueueId, const Resources& victims_b)>;
using QueueJobKeyFn = std::function<QueueJobKey(const Session&, JobId)>;
// Node scores are summed over all scorers; higher is better. Scores are doubles, as in KAI, so
// that ties between equal formulas resolve the same way. A scorer adds its score of every
// candidate node (CandidateNodes()) to out[node] in one call; a score of -infinity drops the node
// from the candidates (KAI drops a node whose scoring fails).
using NodeScoresFn = std::function<void(const Session&, PodId, std::span<double> out)>;
// What a scorer's scores for a pod depend on, for caching them across the tasks of a session
// (NodeRanking): returns false unless the score of every node is a function of that node's own
// state (its accounting, as NodeChanges() reports, and its static properties), of the pod's
// request and GPU share (always part of the key), and of what the function appends to `key` (an
// opaque byte string; e.g. a normalisation range, a nominated node). A scorer registered without
// one is never cached.
using ScoreKeyFn = std::function<bool(const Session&, PodId, std::string& key)>;
// Scores one GPU of a node for a shared-GPU pod: an existing shared group, or (group == nullptr)
// a whole free GPU that would become a new group. Scores of all registrations are summed; higher
// GPUs are offered first (KAI's GpuOrderFn).
using GpuOrderFn = std::function<double(const Session&, PodId, const SnapNode&, const GpuGroup*)>;
// Called once per task before its nodes are scored (e.g. to compute min/max over nodes).
using PreScoreFn = std::function<void(const Session&, PodId)>;
// All predicates must pass; the first failure is reported.
using PredicateFn = std::function<NodeVerdict(const Session&, PodId, NodeId)>;
// What placing some tasks of a job charges its queue: all of it against the limit, the protected
// part (all of a non-preemptible job, the floor pods of a semi-preemptible one, nothing of a
// preemptible one) against non-preemptible quota.
struct JobRequest {
  Resources all;
  Resources protected_part;
};
// Queue capacity of a whole job (limit, non-preemptible quota): the first registered decides.
using JobCapacityFn =
    std::function<std::optional<Reason>(const Session&, JobId, const JobRequest& request)>;
// Allocation and deallocation events: every handler sees every event; they cannot fail.
using PodEventFn = std::function<void(Session&, PodId)>;

// A candidate solution of a disruptive action: the preemptor job (its tasks placed in the
// simulation) and the victim pods evicted for it (statuses as left by the simulation: Releasing
// when evicted for good, Pipelined when re-placed elsewhere).
struct Scenario {
  JobId preemptor = kNone;
  Resources preemptor_request;  // the tasks being placed now
  const std::vector<PodId>* victims = nullptr;
  // The part of preemptor_request charged to non-preemptible quota (semi-preemptible preemptors;
  // a non-preemptible preemptor's whole request is).
  Resources preemptor_protected;
  // Set by a search whose scenarios only grow by appending victims: the victims of the previous
  // scenario so marked since the solution started (Session::StartSolution) are a prefix of these,
  // so a precheck may keep what it read of them.
  bool extends_previous = false;
};
// Victim filters and scenario validators: all must agree (AND).
using VictimFilterFn = std::function<bool(const Session&, JobId preemptor, JobId victim)>;
// A victim filter that reads of a victim only its queue (kNone: the victim has none): a queue it
// refuses holds no victim, so its jobs need not be read.
using VictimQueueFilterFn =
    std::function<bool(const Session&, JobId preemptor, QueueId victim_queue)>;
using ScenarioValidatorFn = std::function<bool(const Session&, const Scenario&)>;
// A necessary condition checked before a scenario is simulated: false only when the validators
// would reject every outcome in which the victims left without a new place (evicted) request at
// least `min_evicted` in total. All registered must agree (AND).
using ScenarioPrecheckFn =
    std::function<bool(const Session&, const Scenario&, const Resources& min_evicted)>;
// Whether a job's queue may reclaim at all: the first registered decides.
using CanReclaimFn = std::function<bool(const Session&, JobId)>;
// Called when a disruptive action starts solving for one job (e.g. to freeze queue state).
using SolutionStartFn = std::function<void(Session&)>;

// Tasks of one job placed together: the whole job (sub_group 0, its root) or one SubGroup.
struct TaskGroup {
  JobId job = kNone;
  int32_t sub_group = 0;
  std::span<const PodId> tasks;
};
using NodeSet = std::vector<NodeId>;
// The node sets a task group may be placed on, in the order to try them, and why sets were
// ruled out (for the job's pending reasons). A set is a view: of a set a hook built (kept in
// `built`), or of the nodes the hook was given when it passes them on unchanged (no copy).
struct NodeSubsets {
  std::vector<std::span<const NodeId>> sets;
  std::vector<NodeSet> built;  // the storage of the sets hooks built (moving it keeps the views)
  std::vector<Reason> reasons;
  // Appends a set the hook built.
  void Add(NodeSet set) {
    built.push_back(std::move(set));
    sets.emplace_back(built.back());
  }
};
// Splits `nodes` into the sets a task group may use (e.g. topology domains), appending them to
// out.sets in the order to try them (out.Add for a set it builds, `nodes` itself to keep them
// all); appending none means the group cannot be placed on `nodes`.
// Registrations chain: each splits every set the previous ones produced (KAI's SubsetNodesFn);
// with none registered the group gets `nodes` itself.
using SubsetNodesFn = std::function<void(Session&, const TaskGroup&, std::span<const NodeId> nodes,
                                         NodeSubsets& out)>;
// Called when an attempt to place a job's tasks starts: every handler, in registration order.
using JobAttemptFn = std::function<void(Session&, JobId)>;

enum class DisruptionKind : uint8_t { kReclaim, kPreempt };

// Every hook registered for a session, and their combinations. Only a Session is one (the hooks
// are handed the Session they belong to).
class SessionHooks {
 public:
  SessionHooks(const SessionHooks&) = delete;
  SessionHooks& operator=(const SessionHooks&) = delete;

  void AddJobOrder(JobOrderFn f) {
    job_order_.push_back(std::move(f));
    job_order_keys_.emplace_back();
  }
  void AddJobOrderKey(JobOrderKeyFn key);
  void AddTaskOrder(TaskOrderFn f) { task_order_.push_back(std::move(f)); }
  void AddSubGroupOrder(SubGroupOrderFn f) { sub_group_order_.push_back(std::move(f)); }
  // `key`, when given, states what the order reads of the jobs (QueueJobKeyFn).
  void AddQueueOrder(QueueOrderFn f, QueueJobKeyFn key = {}) {
    queue_order_.push_back(std::move(f));
    queue_job_keys_.push_back(std::move(key));
  }
  void AddVictimQueueOrder(VictimQueueOrderFn f) { victim_queue_order_.push_back(std::move(f)); }
  void AddNodeScores(NodeScoresFn f, ScoreKeyFn key = {}) {
    node_scores_.push_back(std::move(f));
    score_keys_.push_back(std::move(key));
  }
  void AddPreScore(PreScoreFn f) { pre_score_.push_back(std::move(f)); }
  void AddGpuOrder(GpuOrderFn f) { gpu_order_.push_back(std::move(f)); }
  void AddPredicate(PredicateFn f) { predicates_.push_back(std::move(f)); }
  void SetJobCapacity(JobCapacityFn f) {
    if (!job_capacity_) job_capacity_ = std::move(f);
  }
  void AddVictimFilter(DisruptionKind k, VictimFilterFn f) {
    victim_filters_[static_cast<int>(k)].push_back(std::move(f));
  }
  void AddVictimQueueFilter(DisruptionKind k, VictimQueueFilterFn f) {
    victim_queue_filters_[static_cast<int>(k)].push_back(std::move(f));
  }
  void AddScenarioValidator(DisruptionKind k, ScenarioValidatorFn f) {
    validators_[static_cast<int>(k)].push_back(std::move(f));
  }
  void AddScenarioPrecheck(DisruptionKind k, ScenarioPrecheckFn f) {
    prechecks_[static_cast<int>(k)].push_back(std::move(f));
  }
  void SetCanReclaim(CanReclaimFn f) {
    if (!can_reclaim_) can_reclaim_ = std::move(f);
  }
  void AddSolutionStart(SolutionStartFn f) { on_solution_start_.push_back(std::move(f)); }
  void AddSubsetNodes(SubsetNodesFn f) { subset_nodes_.push_back(std::move(f)); }
  void AddJobAttempt(JobAttemptFn f) { on_job_attempt_.push_back(std::move(f)); }
  void AddAllocateHandler(PodEventFn f) { on_allocate_.push_back(std::move(f)); }
  void AddDeallocateHandler(PodEventFn f) { on_deallocate_.push_back(std::move(f)); }

  // Combined hooks. The orders are total: the final tie-breakers are creation time, then UID.
  bool JobBefore(JobId a, JobId b) const;
  // The job's JobSortKey, when every registered job order gives a key (at most
  // JobSortKey::kOrders of them); valid while JobVersion(job) is unchanged.
  std::optional<JobSortKey> SortKeyOf(JobId job) const;
  // Whether SortKeyOf gives a key (for every job: it depends only on the registered orders).
  bool JobOrderHasKeys() const;
  bool TaskBefore(PodId a, PodId b) const;
  // Members of one SubGroupSet; the final tie-breaker is the SubGroup name (unique in a job).
  bool SubGroupBefore(JobId job, const SubGroupStanding& a, const SubGroupStanding& b) const;
  bool QueueBefore(QueueId qa, JobId ja, QueueId qb, JobId jb) const;
  // The job's key for QueueBefore: two jobs with equal keys (read at the same StateVersion()) are
  // interchangeable there. The job's own id when a registered queue order gives no key or more
  // than one does; all zero when none is registered.
  QueueJobKey QueueOrderKey(JobId job) const;
  // The victim queue order (VictimQueueOrderFn): true when qa comes before qb; ties by creation
  // time, then name.
  bool VictimQueueBefore(QueueId qa, const Resources& victims_a, QueueId qb,
                         const Resources& victims_b) const;
  void PrepareScores(PodId pod) const;
  // Scores the candidate nodes into out[node]. With `scored`, the caller reads only those nodes'
  // scores (some of the candidates): scorers may score just ScoredNodes(), but normalise over all
  // candidates as before, so each score read is the same.
  void ScoreNodes(PodId pod, std::span<double> out) const;
  double ScoreGpu(PodId pod, const SnapNode& node, const GpuGroup* group) const;
  // The node's GPUs for a shared-GPU pod (snapshot/fit.h), offered in the GPU order's sum.
  std::optional<GpuChoice> ChooseSharedGpus(PodId pod, NodeId node, bool pipeline_only) const;
  void ScoreNodes(PodId pod, std::span<double> out, std::span<const NodeId> scored) const;
  // Appends every scorer's key for the pod (ScoreKeyFn); false when some scorer's scores for it
  // cannot be cached.
  bool NodeScoreKey(PodId pod, std::string& key) const;
  NodeVerdict CheckPredicates(PodId pod, NodeId node) const;
  // Checks placing `tasks` (pending pods of `job`, in placement order) against queue capacity.
  std::optional<Reason> CheckJobCapacity(JobId job, const std::vector<PodId>& tasks) const;
  bool VictimAllowed(DisruptionKind k, JobId preemptor, JobId victim) const;
  // False when the queue filters refuse every job of `queue` as a victim of `preemptor` (true
  // says nothing of the jobs themselves).
  bool VictimQueueAllowed(DisruptionKind k, JobId preemptor, QueueId queue) const;
  bool ScenarioValid(DisruptionKind k, const Scenario& scenario) const;
  bool ScenarioPossible(DisruptionKind k, const Scenario& scenario,
                        const Resources& min_evicted) const;
  bool CanReclaim(JobId job) const { return !can_reclaim_ || can_reclaim_(self(), job); }
  void StartSolution();
  void StartJobAttempt(JobId job);
  NodeSubsets SubsetNodes(const TaskGroup& group, std::span<const NodeId> nodes);

 protected:
  SessionHooks() = default;
  ~SessionHooks() = default;
  // The allocation and deallocation events (every handler, in registration order).
  void FireAllocated(PodId pod);
  void FireDeallocated(PodId pod);

 private:
  const Session& self() const;
  Session& self();

  std::vector<JobOrderFn> job_order_;
  std::vector<JobOrderKeyFn> job_order_keys_;  // one per job_order_ entry (may be empty)
  std::vector<TaskOrderFn> task_order_;
  std::vector<SubGroupOrderFn> sub_group_order_;
  std::vector<QueueOrderFn> queue_order_;
  std::vector<QueueJobKeyFn> queue_job_keys_;  // one per queue_order_ entry (may be empty)
  std::vector<VictimQueueOrderFn> victim_queue_order_;
  std::vector<NodeScoresFn> node_scores_;
  std::vector<ScoreKeyFn> score_keys_;  // one per node_scores_ entry (may be empty)
  std::vector<PreScoreFn> pre_score_;
  std::vector<GpuOrderFn> gpu_order_;
  std::vector<PredicateFn> predicates_;
  JobCapacityFn job_capacity_;
  std::vector<VictimFilterFn> victim_filters_[2];
  std::vector<VictimQueueFilterFn> victim_queue_filters_[2];
  std::vector<ScenarioValidatorFn> validators_[2];
  std::vector<ScenarioPrecheckFn> prechecks_[2];
  CanReclaimFn can_reclaim_;
  std::vector<SolutionStartFn> on_solution_start_;
  std::vector<SubsetNodesFn> subset_nodes_;
  std::vector<JobAttemptFn> on_job_attempt_;
  std::vector<PodEventFn> on_allocate_;
  std::vector<PodEventFn> on_deallocate_;
};

}  // namespace kai
