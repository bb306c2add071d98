#include "kai/core/actions/common/solver.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "kai/core/actions/common/job_queue.h"
#include "kai/core/actions/common/placement.h"
#include "kai/core/actions/common/queue_use.h"
#include "kai/core/framework/job_tasks.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai::actions {

namespace {

// Every active-allocated pod, Pipelined ones included, as KAI's GetTasksToEvict takes them; of a
// semi-preemptible job only those above the floors.
bool Evictable(const SnapJob& job, const SnapPod& pod) {
  return IsActiveAllocated(pod.status) && !(job.semi_preemptible && pod.in_floor);
}

}  // namespace

std::vector<PodId> EvictablePods(const Session& s, JobId job) {
  std::vector<PodId> out;
  const SnapJob& j = s.snap().jobs[job];
  for (PodId p : j.pods) {
    if (Evictable(j, s.snap().pods[p])) out.push_back(p);
  }
  return out;
}

int64_t EvictableMilliGpus(const Session& s, JobId job) {
  int64_t total = 0;
  const SnapJob& j = s.snap().jobs[job];
  for (PodId p : j.pods) {
    const SnapPod& pod = s.snap().pods[p];
    if (Evictable(j, pod)) total += pod.request.milli_gpu;
  }
  return total;
}

bool HasEvictablePod(const Session& s, JobId job) {
  const SnapJob& j = s.snap().jobs[job];
  if (!j.semi_preemptible) return j.active_allocated > 0;  // kept live by Session::MovePod
  return std::any_of(j.pods.begin(), j.pods.end(),
                     [&](PodId p) { return Evictable(j, s.snap().pods[p]); });
}

namespace {

// A job that never gave a unit gives all it runs at once: a preemptible job without SubGroups
// not above its minimum (no surplus pod to give alone).
bool GivesAllAtOnce(const SnapJob& job, GangLevel level) {
  return !job.semi_preemptible && !job.has_sub_groups && level != GangLevel::kAbove;
}

}  // namespace

bool VictimBefore(const Session& s, JobId a, GangLevel level_a, JobId b, GangLevel level_b) {
  const SnapJob& ja = s.snap().jobs[a];
  const SnapJob& jb = s.snap().jobs[b];
  if (ja.priority != jb.priority) return ja.priority < jb.priority;
  if (level_a != level_b) return level_a > level_b;
  if (ja.creation != jb.creation) return ja.creation > jb.creation;
  if (ja.uid != jb.uid) return ja.uid > jb.uid;
  return a > b;  // UIDs repeated in the input: the job id keeps the order total
}

VictimsByQueue SortVictims(const Session& s, const std::vector<JobId>& jobs,
                           std::vector<std::optional<GangLevel>>* levels) {
  struct Entry {
    JobId job;
    GangLevel level;
  };
  std::vector<std::vector<Entry>> entries(s.snap().queues.size());
  VictimsByQueue out;
  for (JobId j : jobs) {
    const QueueId q = s.snap().jobs[j].queue;
    if (q == kNone || !s.snap().queues[q].IsLeaf()) continue;
    if (entries[q].empty()) out.leaves.push_back(q);
    entries[q].push_back({j, JobGangLevel(s.snap().jobs[j])});
    if (levels) (*levels)[j] = entries[q].back().level;
  }
  out.by_queue.resize(s.snap().queues.size());
  for (QueueId q : out.leaves) {
    std::vector<Entry>& list = entries[q];
    // Jobs often come in their order already (the snapshot's follows creation), or reversed.
    auto before = [&](const Entry& a, const Entry& b) {
      return VictimBefore(s, a.job, a.level, b.job, b.level);
    };
    if (std::is_sorted(list.rbegin(), list.rend(), before)) {
      std::reverse(list.begin(), list.end());
    } else if (!std::is_sorted(list.begin(), list.end(), before)) {
      std::sort(list.begin(), list.end(), before);
    }
    out.by_queue[q].reserve(list.size());
    for (const Entry& e : list) out.by_queue[q].push_back(e.job);
  }
  return out;
}

VictimQueue::VictimQueue(const Session& s, const std::vector<JobId>& jobs)
    : VictimQueue(s, std::make_shared<const VictimsByQueue>(SortVictims(s, jobs))) {}

VictimQueue::VictimQueue(const Session& s, std::shared_ptr<const VictimsByQueue> own)
    : VictimQueue(s, VictimOffer{&own->by_queue, own->leaves, {}}, own) {}

VictimQueue::VictimQueue(const Session& s, VictimOffer offer)
    : VictimQueue(s, std::move(offer), nullptr) {}

// The first jobs are drawn before the queue, whose heap orders them.
VictimQueue::VictimQueue(const Session& s, VictimOffer offer,
                         std::shared_ptr<const VictimsByQueue> own)
    : session_(s),
      own_(std::move(own)),
      offer_(std::move(offer)),
      cursor_(s.snap().queues.size(), 0),
      last_drawn_(s.snap().queues.size(), kNone),
      slot_(offer_.scratch ? &offer_.scratch->slots : nullptr),
      queue_(
          s, DrawFirsts(), /*reverse=*/true, [this](JobId a, JobId b) { return VictimFirst(a, b); },
          [this](JobId j) { return Held(j); }) {}

VictimQueue::~VictimQueue() {
  for (const Drawn& d : drawn_jobs_) (*slot_)[d.job] = -1;  // the scratch goes back as lent
}

std::vector<JobId> VictimQueue::DrawFirsts() {
  if (!slot_) {
    own_slots_.assign(session_.snap().jobs.size(), -1);
    slot_ = &own_slots_;
  }
  std::vector<JobId> firsts;
  for (QueueId q : offer_.leaves) {
    const JobId j = Draw(q);
    if (j != kNone) firsts.push_back(j);
  }
  return firsts;
}

JobId VictimQueue::Draw(QueueId leaf) {
  const std::vector<JobId>& list = (*offer_.by_queue)[leaf];
  last_drawn_[leaf] = kNone;
  while (cursor_[leaf] < list.size()) {
    const JobId j = list[cursor_[leaf]++];
    if (offer_.accept && !offer_.accept(j)) continue;
    (*slot_)[j] = static_cast<int>(drawn_jobs_.size());
    drawn_jobs_.push_back({.job = j, .level = JobGangLevel(session_.snap().jobs[j])});
    last_drawn_[leaf] = j;
    return j;
  }
  return kNone;
}

Resources VictimQueue::Held(JobId job) {
  Holding& held = drawn_jobs_[Slot(job)].held;
  if (!held.known) {
    held.known = true;
    for (PodId p : session_.snap().jobs[job].pods) {
      const SnapPod& pod = session_.snap().pods[p];
      if (IsAllocated(pod.status)) Add(held, pod, +1);
    }
  }
  Resources r;
  r.milli_cpu = held.milli_cpu;
  r.memory = held.memory;
  r.milli_gpu = held.milli_gpu;
  return r;
}

void VictimQueue::Add(Holding& held, const SnapPod& pod, int sign) {
  held.milli_cpu += sign * pod.request.milli_cpu;
  held.memory += sign * pod.request.memory;
  held.milli_gpu += sign * DemandedGpus(pod).milli_gpu;
}

bool VictimQueue::VictimFirst(JobId a, JobId b) const {
  return VictimBefore(session_, a, drawn_jobs_[Slot(a)].level, b, drawn_jobs_[Slot(b)].level);
}

VictimJobPods& VictimQueue::Remaining(int slot) {
  std::optional<VictimJobPods>& pods = drawn_jobs_[slot].remaining;
  if (!pods) pods.emplace(session_, drawn_jobs_[slot].job);
  return *pods;
}

bool VictimQueue::WholeAtOnce(JobId job) const {
  const int slot = Slot(job);
  const Drawn& drawn = drawn_jobs_[slot];
  return !drawn.remaining && GivesAllAtOnce(session_.snap().jobs[job], drawn.level);
}

EvictionUnit VictimQueue::Next(const std::function<bool(JobId)>& wanted) {
  EvictionUnit unit;
  Next(unit, wanted);
  return unit;
}

void VictimQueue::Next(EvictionUnit& unit, const std::function<bool(JobId)>& wanted) {
  unit.pods.clear();
  unit.job_done = unit.dropped = false;
  unit.job = queue_.Pop();
  if (unit.job == kNone) return;
  // The leaf's next job comes forward (before any slot is held by reference: drawing grows them).
  const QueueId leaf = session_.snap().jobs[unit.job].queue;
  if (last_drawn_[leaf] == unit.job) {
    const JobId next = Draw(leaf);
    if (next != kNone) queue_.Push(next);
  }
  if (WholeAtOnce(unit.job)) {
    unit.job_done = true;
    unit.dropped = wanted && !wanted(unit.job);
    if (!unit.dropped) AppendWholeJob(session_, unit.job, unit.pods);
    return;
  }
  const int slot = Slot(unit.job);
  VictimJobPods& pods = Remaining(slot);
  pods.TakeUnit(unit.pods);
  Holding& held = drawn_jobs_[slot].held;  // known since the job was popped
  for (PodId p : unit.pods) {
    const SnapPod& pod = session_.snap().pods[p];
    if (IsAllocated(pod.status)) Add(held, pod, -1);
  }
  drawn_jobs_[slot].level = pods.Level();
  unit.job_done = pods.Empty() || unit.pods.empty();
  if (!unit.job_done) queue_.Push(unit.job);  // the rest competes again
}

int64_t WholeGpuDemand(const Session& s, const std::vector<PodId>& tasks) {
  int64_t total = 0;
  for (PodId t : tasks) total += s.snap().pods[t].request.milli_gpu;
  return total;
}

int64_t FreeOrReleasingGpus(const Session& s) {
  int64_t free = 0;
  for (const SnapNode& n : s.snap().nodes) {
    if (n.unusable_reason.empty()) free += n.idle.milli_gpu + n.releasing.milli_gpu;
  }
  return free;
}

bool EnoughGpusForTasks(const Session& s, const std::vector<PodId>& tasks) {
  GpuAmount free, need;
  for (const SnapNode& n : s.snap().nodes) {
    if (!n.unusable_reason.empty()) continue;
    const GpuAmount a = AvailableGpus(n);
    free.milli_gpu += a.milli_gpu;
    free.memory_mib += a.memory_mib;
  }
  for (PodId t : tasks) {
    const GpuAmount d = DemandedGpus(s.snap().pods[t]);
    need.milli_gpu += d.milli_gpu;
    need.memory_mib += d.memory_mib;
  }
  return free.milli_gpu >= need.milli_gpu && free.memory_mib >= need.memory_mib;
}

namespace {

// A NUMA zone that is full now may be freed by the victims; a pod no zone holds even empty may
// not (NodeVerdict::never). The other predicates read the pod and the node only.
bool FitsOnceEmptied(const NodeVerdict& v) {
  return v.Fits() || (v.code == FitCode::kNumaUnaligned && !v.never);
}

}  // namespace

UsefulNodes::UsefulNodes(const Session& session, std::vector<PodId> tasks)
    : s_(session), tasks_(std::move(tasks)), known_(session.snap().nodes.size(), -1) {}

bool UsefulNodes::Of(NodeId node) {
  int8_t& known = known_[node];
  if (known < 0) {
    known = 0;
    for (PodId t : tasks_) {
      if (FitsIn(s_.snap().pods[t].request, s_.snap().nodes[node].allocatable) &&
          FitsOnceEmptied(s_.CheckPredicates(t, node))) {
        known = 1;
        break;
      }
    }
  }
  return known == 1;
}

bool UsefulNodes::OnAny(const std::vector<PodId>& pods) {
  for (PodId p : pods) {
    const NodeId n = s_.snap().pods[p].node;
    if (n != kNone && Of(n)) return true;
  }
  return false;
}

bool UsefulNodes::Helps(JobId job, GangLevel level) {
  if (!GivesAllAtOnce(s_.snap().jobs[job], level)) return true;
  for (PodId p : s_.snap().jobs[job].pods) {
    const SnapPod& pod = s_.snap().pods[p];
    if (IsActiveAllocated(pod.status) && pod.node != kNone && Of(pod.node)) return true;
  }
  return false;
}

namespace {

class Search {
  // A unit taken by RunGenerator: its pods are accumulated_[begin, end).
  struct UnitRange {
    std::ptrdiff_t begin = 0, end = 0;
  };

 public:
  Search(Session& s, Statement& stmt, JobId job, const SolverConfig& cfg)
      : s_(s), stmt_(stmt), job_(job), cfg_(cfg) {}
  ~Search() {
    for (JobId j : asked_) scratch_->accepted[j] = 0;  // the scratch goes back as lent
  }
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  SolveResult Run(const VictimOffer& offer) {
    tasks_ = TasksToAllocate(s_, job_, /*real=*/false);
    if (tasks_.empty()) return result_;
    request_ = s_.SumRequests(tasks_);
    protected_request_ = s_.SumRequests(ProtectedTasks(s_.snap(), s_.snap().jobs[job_], tasks_));
    whole_gpus_ = WholeGpuDemand(s_, tasks_);
    free_gpus_ = FreeOrReleasingGpus(s_);
    min_task_gpu_ = 0;
    for (PodId t : tasks_) {
      const int64_t g = s_.snap().pods[t].request.milli_gpu;
      if (g > 0 && (min_task_gpu_ == 0 || g < min_task_gpu_)) min_task_gpu_ = g;
    }
    if (cfg_.max_millis.limit >= 0) deadline_ = s_.MonotonicMillis() + cfg_.max_millis.limit;
    base_.assign(s_.snap().nodes.size(), 0);
    base_slots_ = 0;
    for (size_t n = 0; n < base_.size(); ++n) {
      const SnapNode& node = s_.snap().nodes[n];
      if (!node.unusable_reason.empty()) continue;
      base_[n] = std::max<int64_t>(0, node.idle.milli_gpu + node.releasing.milli_gpu);
      if (min_task_gpu_ > 0) base_slots_ += base_[n] / min_task_gpu_;
    }
    min_evicted_ = MinEvicted();
    useful_.emplace(s_, tasks_);
    s_.StartSolution();
    offer_ = offer;
    offer_.accept = [this, &offer](JobId j) { return Accepted(offer, j); };
    if (!offer_.scratch) {
      own_scratch_.emplace(s_.snap().jobs.size());
      offer_.scratch = &*own_scratch_;
    }
    scratch_ = offer_.scratch;
    if (RunPass(/*node_local=*/true) || stopped_) return Finish();
    RunPass(/*node_local=*/false);
    return Finish();
  }

 private:
  // Whether the offered job is a victim of this search, asked once per job for both passes (they
  // start from the same state). A job giving all it runs at once with no pod on a useful node is
  // passed over: it is no victim, and the victim order does not count it as gone.
  bool Accepted(const VictimOffer& offer, JobId job) {
    int8_t& known = scratch_->accepted[job];
    if (known == 0) {
      asked_.push_back(job);
      const SnapJob& j = s_.snap().jobs[job];
      const bool victim = (!offer.accept || offer.accept(job)) &&
                          (!cfg_.skip_useless_victims || offer.helpful_only ||
                           useful_->Helps(job, JobGangLevel(j)));
      known = victim ? 1 : -1;
    }
    return known > 0;
  }

  // One generator pass, measured (SolveResult::passes).
  bool RunPass(bool node_local) {
    result_.passes.push_back({.generator = node_local ? "NodeLocalGreedy" : "MultiNodeGang"});
    const int64_t started = s_.MetricsMillis();
    pass_timed_out_ = false;
    const bool solved = RunGenerator(node_local);
    GeneratorPass& pass = result_.passes.back();
    pass.result = solved                        ? "solved"
                  : stopped_ || pass_timed_out_ ? "deadline_exhausted"
                                                : "unsolved";
    if (started >= 0) pass.millis = s_.MetricsMillis() - started;
    return solved;
  }

  // Node-local first: for each growing scenario and each node of the newest victim, try only the
  // victim jobs with a pod on that node, each with every unit taken from it so far (a unit is
  // never split: a gang leaves whole). Then, in a second pass, whole accumulated scenarios across
  // nodes.
  bool RunGenerator(bool node_local) {
    StartPass(node_local ? cfg_.node_local_millis : cfg_.accumulated_millis);
    VictimQueue victims(s_, offer_);
    // The units taken, each a range of `accumulated_` (every unit's pods, in the order taken).
    std::vector<UnitRange> units;
    // Victim jobs with a unit pod on each node, in order of first appearance there.
    std::vector<std::vector<JobId>> jobs_by_node(s_.snap().nodes.size());
    // Each job's units, newest first: last_unit_ per victim slot, then prev_unit_ per unit.
    last_unit_.clear();
    prev_unit_.clear();
    std::unordered_map<JobId, std::vector<PodId>> useless;  // skipped units' pods, per job
    accumulated_.clear();
    growing_ = {};
    std::vector<int64_t> acc_extra(s_.snap().nodes.size(), 0);
    int64_t acc_slots = base_slots_, acc_gpus = 0;
    int64_t gpu_tasks = 0;
    for (PodId t : tasks_) gpu_tasks += s_.snap().pods[t].request.milli_gpu > 0;
    EvictionUnit next;  // the unit being taken (its pod list's storage reused)
    while (!victims.Empty()) {
      if (OutOfBudget() || PassOver()) return false;
      victims.Next(next);
      if (next.dropped) continue;
      if (cfg_.skip_useless_victims && !useful_->OnAny(next.pods)) {
        // Kept aside: a later unit of the same job assumes these pods gone and takes them along.
        if (next.job_done) continue;  // there is none
        std::vector<PodId>& aside = useless[next.job];
        aside.insert(aside.end(), next.pods.begin(), next.pods.end());
        continue;
      }
      if (auto it = useless.find(next.job); it != useless.end()) {
        next.pods.insert(next.pods.begin(), it->second.begin(), it->second.end());
        useless.erase(it);
      }
      const auto begin = static_cast<std::ptrdiff_t>(accumulated_.size());
      units.push_back({begin, begin + static_cast<std::ptrdiff_t>(next.pods.size())});
      accumulated_.insert(accumulated_.end(), next.pods.begin(), next.pods.end());
      const auto slot = static_cast<size_t>(victims.Slot(next.job));
      if (slot >= last_unit_.size()) last_unit_.resize(slot + 1, -1);
      int& last = last_unit_[slot];
      prev_unit_.push_back(last);
      last = static_cast<int>(units.size() - 1);
      NodesOf(next.pods, unit_nodes_);
      for (NodeId node : unit_nodes_) {
        std::vector<JobId>& on_node = jobs_by_node[node];
        if (std::find(on_node.begin(), on_node.end(), next.job) == on_node.end()) {
          on_node.push_back(next.job);
        }
      }
      for (PodId p : next.pods) {
        const SnapPod& pod = s_.snap().pods[p];
        acc_gpus += GpuFreedBound(pod);
        if (min_task_gpu_ == 0 || pod.node == kNone ||
            !s_.snap().nodes[pod.node].unusable_reason.empty()) {
          continue;
        }
        const int64_t before = (base_[pod.node] + acc_extra[pod.node]) / min_task_gpu_;
        acc_extra[pod.node] += GpuFreedBound(pod);
        acc_slots += (base_[pod.node] + acc_extra[pod.node]) / min_task_gpu_ - before;
      }
      if (free_gpus_ + acc_gpus < whole_gpus_ || (min_task_gpu_ > 0 && acc_slots < gpu_tasks)) {
        Pruned();
        continue;
      }
      if (node_local) {
        for (NodeId node : unit_nodes_) {
          if (stopped_) return false;
          const std::vector<PodId>& local =
              UnitsOfJobs(units, accumulated_, victims, jobs_by_node[node]);
          if (!EnoughSlots(local)) {
            Pruned();
            continue;
          }
          if (TryScenario(local)) return true;
        }
      } else if (TryScenario(accumulated_, /*grows=*/true)) {
        return true;
      }
    }
    return false;
  }

  // Whether a bound (scenario count, work, then time) ends the search; records which one.
  bool OutOfBudget() {
    if (stopped_) return true;
    if (result_.scenarios_tried >= cfg_.max_scenarios) {
      return Stop("spec.args.max-scenarios-per-job=" + std::to_string(cfg_.max_scenarios));
    }
    if (OutOfWork()) return true;
    if (deadline_ >= 0 && s_.MonotonicMillis() >= deadline_) return Stop(cfg_.max_millis.name);
    return false;
  }

  bool OutOfWork() {
    if (stopped_) return true;
    return cfg_.max_work.limit >= 0 && work_ >= cfg_.max_work.limit && Stop(cfg_.max_work.name);
  }

  bool Stop(const std::string& bound) {
    stopped_ = true;
    GiveUp(bound);
    return true;
  }

  // The first bound that cut the search short is the one reported.
  void GiveUp(const std::string& bound) {
    if (result_.gave_up) return;
    result_.gave_up = true;
    result_.bound = bound;
  }

  void StartPass(const SolverConfig::Bound& limit) {
    pass_limit_ = &limit;
    pass_deadline_ = limit.limit >= 0 ? s_.MonotonicMillis() + limit.limit : -1;
  }

  // The generator pass's own time is up: it ends (the search goes on with the next pass).
  bool PassOver() {
    if (pass_deadline_ < 0 || s_.MonotonicMillis() < pass_deadline_) return false;
    GiveUp(pass_limit_->name);
    pass_timed_out_ = true;
    return true;
  }

  void Pruned() {
    ++result_.scenarios_pruned;
    ++result_.passes.back().filtered;
    ++work_;
  }

  SolveResult Finish() {
    result_.work = work_;
    if (result_.solved) {  // a bound met along the way did not stop this search
      result_.gave_up = false;
      result_.bound.clear();
    }
    return std::move(result_);
  }

  // Necessary: the preemptor's GPU tasks fit, slot-wise, in idle + releasing + the victims' GPUs
  // on each node (re-placing victims only takes space away).
  bool EnoughSlots(const std::vector<PodId>& victims) {
    if (!EnoughGpus(victims)) return false;
    if (min_task_gpu_ == 0) return true;
    extra_.resize(s_.snap().nodes.size(), 0);
    extra_nodes_.clear();
    for (PodId p : victims) {
      const SnapPod& pod = s_.snap().pods[p];
      if (pod.node == kNone || !s_.snap().nodes[pod.node].unusable_reason.empty()) continue;
      if (extra_[pod.node] == 0) extra_nodes_.push_back(pod.node);
      extra_[pod.node] += GpuFreedBound(pod);
    }
    int64_t slots = base_slots_;
    for (NodeId n : extra_nodes_) {
      slots += (base_[n] + extra_[n]) / min_task_gpu_ - base_[n] / min_task_gpu_;
      extra_[n] = 0;
    }
    int64_t gpu_tasks = 0;
    for (PodId t : tasks_) gpu_tasks += s_.snap().pods[t].request.milli_gpu > 0;
    return slots >= gpu_tasks;
  }

  bool EnoughGpus(const std::vector<PodId>& victims) const {
    int64_t freed = 0;
    for (PodId p : victims) freed += GpuFreedBound(s_.snap().pods[p]);
    return free_gpus_ + freed >= whole_gpus_;
  }

  // The nodes of the pods, each once, in order of first appearance.
  void NodesOf(const std::vector<PodId>& pods, std::vector<NodeId>& nodes) const {
    nodes.clear();
    for (PodId p : pods) {
      const NodeId n = s_.snap().pods[p].node;
      if (n != kNone && std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
  }

  // Every unit taken so far from the given victim jobs, in the order they were taken. A job's
  // units only make sense together: a later unit (a gang at its minimum, a surplus SubGroup)
  // assumes the earlier ones (its surplus pods) are gone too, so a node-local scenario takes all
  // of them, as KAI's by-node scenario takes all task groups of a victim job found on the node.
  // The result lives in a buffer reused by the next call.
  const std::vector<PodId>& UnitsOfJobs(const std::vector<UnitRange>& units,
                                        const std::vector<PodId>& accumulated,
                                        const VictimQueue& victims,
                                        const std::vector<JobId>& jobs) {
    unit_indices_.clear();
    for (JobId j : jobs) {
      for (int u = last_unit_[victims.Slot(j)]; u >= 0; u = prev_unit_[u]) {
        unit_indices_.push_back(u);
      }
    }
    std::sort(unit_indices_.begin(), unit_indices_.end());
    local_.clear();
    for (int i : unit_indices_)
      local_.insert(local_.end(), accumulated.begin() + units[i].begin,
                    accumulated.begin() + units[i].end);
    return local_;
  }

  // What the victims left without a place must free at least, whatever the simulation does: a
  // placement needs free room (idle + releasing) and only evictions add to it, so on every node
  // the tasks placed there take at most its free room now (if positive) plus what its victims
  // release. Zero when a GPU-shared pod is involved (shared GPUs are not accounted per pod).
  Resources MinEvicted() const {
    Resources free;
    for (const SnapNode& n : s_.snap().nodes) {
      free.milli_cpu += std::max<int64_t>(0, n.idle.milli_cpu + n.releasing.milli_cpu);
      free.memory += std::max<int64_t>(0, n.idle.memory + n.releasing.memory);
      free.milli_gpu += std::max<int64_t>(0, n.idle.milli_gpu + n.releasing.milli_gpu);
    }
    Resources min;
    if (AnyGpuShared(tasks_)) return min;
    min.milli_cpu = std::max<int64_t>(0, request_.milli_cpu - free.milli_cpu);
    min.memory = std::max<int64_t>(0, request_.memory - free.memory);
    min.milli_gpu = std::max<int64_t>(0, request_.milli_gpu - free.milli_gpu);
    return min;
  }

  bool AnyGpuShared(const std::vector<PodId>& pods) const {
    return std::any_of(pods.begin(), pods.end(),
                       [&](PodId p) { return s_.snap().pods[p].share.IsShared(); });
  }

  // The validators' necessary condition, before simulating. `grows`: the victims of the previous
  // growing scenario of this solution are a prefix of these (Scenario::extends_previous).
  bool Possible(const std::vector<PodId>& victims, bool grows) const {
    if (!cfg_.validators || min_evicted_.IsZero()) return true;
    if (grows ? growing_.any_shared : AnyGpuShared(victims)) return true;
    Scenario scenario{job_, request_, &victims, protected_request_};
    scenario.extends_previous = grows;
    return s_.ScenarioPossible(*cfg_.validators, scenario, min_evicted_);
  }

  // `grows`: the accumulated scenario (accumulated_), which only grows by appending victims.
  bool TryScenario(const std::vector<PodId>& victims, bool grows = false) {
    if (victims.empty() || stopped_) return false;
    if (grows) ReadGrowing(victims);
    const uint64_t fingerprint = grows ? victims.size() + growing_.mixed : Fingerprint(victims);
    if (!FirstTry(victims, fingerprint, grows)) {
      ++result_.passes.back().duplicates;
      return false;
    }
    if (!Possible(victims, grows)) {
      Pruned();
      return false;
    }
    if (OutOfWork()) return false;
    ++result_.scenarios_tried;
    ++result_.passes.back().simulated;
    work_ += 1 + static_cast<int64_t>(victims.size());
    const size_t cp = stmt_.Checkpoint();
    before_.clear();
    for (PodId v : victims) {
      before_.push_back(s_.snap().pods[v].status);
      stmt_.Evict(v);
    }
    restarted_.clear();
    if (Simulate(victims)) {
      if (cfg_.restart_split_gangs) RestartSplitVictims(victims);
      if (Accept(victims)) return true;
    }
    stmt_.Rollback(cp);
    return false;
  }

  // A victim job that loses placed pods (moved or evicted) while others keep their place
  // (allocated: not pipelined, not releasing) must not run split: its victims placed back on their
  // own node restart too (kai's opt-in, see docs/deviations.md; KAI keeps them running), first
  // those of PodSets left below their minimum, then, if the SubGroup tree is still not met, all of
  // them.
  // `before_` holds the victims' statuses before the scenario evicted them.
  void RestartSplitVictims(const std::vector<PodId>& victims) {
    const Snapshot& snap = s_.snap();
    auto placed = [&](PodId p) { return IsAllocated(snap.pods[p].status); };
    std::unordered_map<JobId, std::vector<PodId>> of_job;
    std::unordered_set<JobId> lost;  // jobs with a victim that held its place and lost it
    for (size_t i = 0; i < victims.size(); ++i) {
      const PodId v = victims[i];
      of_job[snap.pods[v].job].push_back(v);
      if (IsAllocated(before_[i]) && !placed(v)) lost.insert(snap.pods[v].job);
    }
    if (lost.empty()) return;
    const std::vector<JobId> jobs = SimulatedJobs(victims);
    for (size_t i = 1; i < jobs.size(); ++i) {  // jobs[0] is the preemptor
      const SnapJob& job = snap.jobs[jobs[i]];
      const std::vector<PodId>& pods = of_job[jobs[i]];
      if (!lost.count(jobs[i]) || !IsSplitBy(job, placed)) continue;
      std::vector<int> in_set(job.sub_groups.size(), 0);  // placed pods per PodSet
      for (PodId p : job.pods) in_set[snap.pods[p].sub_group] += placed(p) ? 1 : 0;
      for (PodId v : pods) {
        const SubGroupIndex set = snap.pods[v].sub_group;
        if (placed(v) && in_set[set] < job.sub_groups[set].min_member) Restart(v);
      }
      if (!IsSplitBy(job, placed)) continue;
      for (PodId v : pods) {
        if (placed(v)) Restart(v);
      }
    }
  }

  void Restart(PodId victim) {
    stmt_.Restart(victim);
    restarted_.push_back(victim);
  }

  static uint64_t Mixed(PodId p) {
    uint64_t x = static_cast<uint64_t>(p) + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  // Order-independent fingerprint of a victim set (pods are distinct): a sum of mixed ids.
  static uint64_t Fingerprint(const std::vector<PodId>& victims) {
    uint64_t h = victims.size();
    for (PodId p : victims) h += Mixed(p);
    return h;
  }

  // Reads the victims the accumulated scenario gained since the last read: its fingerprint and
  // whether it holds a shared-GPU pod follow without reading it all again.
  void ReadGrowing(const std::vector<PodId>& victims) {
    for (; growing_.read < victims.size(); ++growing_.read) {
      const PodId p = victims[growing_.read];
      growing_.mixed += Mixed(p);
      growing_.any_shared = growing_.any_shared || s_.snap().pods[p].share.IsShared();
    }
  }

  // A victim set tried: its pods, or (for the accumulated scenario, which only grows during its
  // pass) the length of the prefix of accumulated_ it was.
  struct Tried {
    std::vector<PodId> pods;
    size_t prefix = 0;
    std::span<const PodId> View(const std::vector<PodId>& accumulated) const {
      return prefix > 0 ? std::span<const PodId>(accumulated.data(), prefix)
                        : std::span<const PodId>(pods);
    }
  };

  // True the first time a victim set is seen. Sets are kept unsorted under their fingerprint and
  // compared as sets only when fingerprints collide, so the growing accumulated scenarios are
  // not sorted on every step (that was quadratic in the victims), nor copied.
  bool FirstTry(const std::vector<PodId>& victims, uint64_t fingerprint, bool grows) {
    std::vector<Tried>& same = tried_[fingerprint];
    if (!same.empty()) {
      std::vector<PodId> sorted = victims;
      std::sort(sorted.begin(), sorted.end());
      for (const Tried& tried : same) {
        const std::span<const PodId> seen = tried.View(accumulated_);
        if (seen.size() != sorted.size()) continue;
        std::vector<PodId> other(seen.begin(), seen.end());
        std::sort(other.begin(), other.end());
        if (other == sorted) return false;
      }
    }
    if (grows) {
      same.push_back(Tried{.prefix = victims.size()});
    } else {
      same.push_back(Tried{.pods = victims});
    }
    return true;
  }

  // The preemptor, then the victims' jobs in order of first appearance.
  std::vector<JobId> SimulatedJobs(const std::vector<PodId>& victims) {
    listed_.resize(s_.snap().jobs.size(), false);
    std::vector<JobId> jobs = {job_};
    listed_[job_] = true;
    for (PodId v : victims) {
      const JobId j = s_.snap().pods[v].job;
      if (!listed_[j]) {
        listed_[j] = true;
        jobs.push_back(j);
      }
    }
    for (JobId j : jobs) listed_[j] = false;
    return jobs;
  }

  // Re-places the preemptor and the victims' jobs, pipeline only, in job order.
  bool Simulate(const std::vector<PodId>& victims) {
    const std::vector<JobId> jobs = SimulatedJobs(victims);
    JobQueue order(s_, jobs, /*reverse=*/false);
    // Requests that found no node with room. Once the victims are out, a simulation only places
    // pods, so free room only shrinks: a later task with the same request finds none either.
    std::vector<Resources> no_room;
    StartTail(jobs);
    bool preemptor_placed = false;
    while (!order.Empty()) {
      if (preemptor_placed && !no_room.empty() && OnlyHopelessLeft(jobs, no_room)) break;
      const JobId j = order.Pop();
      if (j == kNone) break;
      popped_[j] = true;
      const std::vector<PodId> tasks = TasksToAllocate(s_, j, /*real=*/false);
      if (tasks.empty()) {
        if (j == job_) return false;
        continue;
      }
      // Shared-GPU pods fit by device state, not by request alone: never remembered. (Passed over
      // here or by the capacity check below alike.)
      const SnapPod& front = s_.snap().pods[tasks.front()];
      const bool plain = !front.share.IsShared();
      if (plain && std::find(no_room.begin(), no_room.end(), front.request) != no_room.end()) {
        if (j == job_) return false;
        continue;
      }
      if (s_.CheckJobCapacity(j, tasks)) {
        if (j == job_) return false;
        continue;
      }
      const size_t cp = stmt_.Checkpoint();
      work_ += static_cast<int64_t>(tasks.size());
      if (!PlaceJob(s_, stmt_, j, tasks, /*pipeline_only=*/true).ok) {
        stmt_.Rollback(cp);
        if (plain && !AnyNodeHasRoom(s_, tasks.front(), s_.AllNodes())) {
          no_room.push_back(front.request);
        }
        if (j == job_) return false;
      }
      preemptor_placed = preemptor_placed || j == job_;
    }
    // KAI: every PodSet of the real job holds its minimum of active-used pods.
    return IsGangSatisfied(s_.snap(), s_.snap().jobs[job_]);
  }

  // Simulate's early end. After the preemptor, a job every pod of which asks for a plain request
  // that found no room is passed over when popped (whichever pods it would place), and passing
  // over changes nothing: once only such jobs are left, the rest of the simulation is a no-op.
  // The jobs are checked in a fixed order (`jobs`), each popped or hopeless one passed for good
  // (room never grows back), the first other one checked again only when `no_room` has grown.
  void StartTail(const std::vector<JobId>& jobs) {
    popped_.resize(s_.snap().jobs.size(), false);
    for (JobId j : jobs) popped_[j] = false;
    tail_next_ = 0;
    tail_checked_ = 0;
  }

  bool OnlyHopelessLeft(const std::vector<JobId>& jobs, const std::vector<Resources>& no_room) {
    while (tail_next_ < jobs.size()) {
      const JobId j = jobs[tail_next_];
      if (!popped_[j]) {
        if (tail_checked_ == no_room.size()) return false;  // not hopeless with this no_room
        tail_checked_ = no_room.size();
        if (!Hopeless(j, no_room)) return false;
      }
      ++tail_next_;
      tail_checked_ = 0;
    }
    return true;
  }

  bool Hopeless(JobId job, const std::vector<Resources>& no_room) const {
    for (PodId p : s_.snap().jobs[job].pods) {
      const SnapPod& pod = s_.snap().pods[p];
      if (pod.share.IsShared() ||
          std::find(no_room.begin(), no_room.end(), pod.request) == no_room.end()) {
        return false;
      }
    }
    return true;
  }

  bool Accept(const std::vector<PodId>& victims) {
    std::vector<PodId> evicted, moved;
    for (PodId v : victims) {
      const PodStatus st = s_.snap().pods[v].status;
      if (st == PodStatus::kReleasing) evicted.push_back(v);
      if (st == PodStatus::kPipelined) moved.push_back(v);
    }
    if (cfg_.all_victims_replaced && !evicted.empty()) return false;
    if (evicted.empty() && moved.empty()) return false;  // nothing was needed: not a disruption
    if (cfg_.validators) {
      const Scenario scenario{job_, request_, &victims, protected_request_};
      if (!s_.ScenarioValid(*cfg_.validators, scenario)) return false;
    }
    result_.solved = true;
    result_.evicted = std::move(evicted);
    result_.moved = std::move(moved);
    result_.restarted = restarted_;
    return true;
  }

  Session& s_;
  Statement& stmt_;
  JobId job_;
  const SolverConfig& cfg_;
  std::vector<PodId> tasks_;
  Resources request_;
  Resources protected_request_;  // the part of request_ joining the preemptor's floors
  int64_t free_gpus_ = 0;
  int64_t whole_gpus_ = 0;  // whole GPUs the tasks need (shared ones may use shared groups)
  int64_t min_task_gpu_ = 0;
  int64_t deadline_ = -1;        // session-clock milliseconds at which the search stops; -1: none
  int64_t pass_deadline_ = -1;   // the same for the generator pass running
  bool pass_timed_out_ = false;  // the running pass ended on its own time bound
  const SolverConfig::Bound* pass_limit_ = nullptr;
  int64_t work_ = 0;      // work units spent (SolverConfig::max_work)
  bool stopped_ = false;  // a bound ended the whole search
  std::vector<int64_t> base_;
  int64_t base_slots_ = 0;
  Resources min_evicted_;
  std::vector<int64_t> extra_;  // scratch of EnoughSlots: GPUs freed per node (all zero between)
  std::vector<NodeId> extra_nodes_;  // the nodes EnoughSlots touched
  // RunGenerator's bookkeeping: per candidate slot its newest unit, per unit the job's previous
  // one (-1: none); the newest unit's nodes; UnitsOfJobs' buffers.
  std::vector<int> last_unit_;
  std::vector<int> prev_unit_;
  std::vector<NodeId> unit_nodes_;
  std::vector<int> unit_indices_;
  std::vector<PodId> local_;
  std::optional<UsefulNodes> useful_;         // of tasks_
  VictimOffer offer_;                         // the caller's offer, through Accepted
  std::optional<VictimScratch> own_scratch_;  // when the offer lends none
  VictimScratch* scratch_ = nullptr;
  std::vector<JobId> asked_;  // the jobs Accepted answered on (scratch_->accepted set)
  std::vector<bool> listed_;  // scratch of SimulatedJobs
  // Simulate's early end (OnlyHopelessLeft): per job whether this simulation popped it (set for
  // the simulated jobs by StartTail); the first simulated job not known to be popped or hopeless,
  // and the size of no_room it was last found not hopeless with (0: not checked).
  std::vector<bool> popped_;
  size_t tail_next_ = 0;
  size_t tail_checked_ = 0;
  std::vector<PodId> restarted_;   // victims of the scenario restarted in place with their gang
  std::vector<PodStatus> before_;  // the scenario's victims' statuses before it evicted them
  std::unordered_map<uint64_t, std::vector<Tried>> tried_;  // by Fingerprint
  // RunGenerator's scenario of every unit taken (the units are ranges of it), and what
  // TryScenario has read of it as the growing scenario of the accumulated pass.
  std::vector<PodId> accumulated_;
  struct {
    size_t read = 0;
    uint64_t mixed = 0;  // the sum of Mixed over the victims read
    bool any_shared = false;
  } growing_;
  SolveResult result_;
};

}  // namespace

SolveResult SolveJob(Session& s, Statement& stmt, JobId job, const VictimOffer& victims,
                     const SolverConfig& config) {
  Search search(s, stmt, job, config);
  return search.Run(victims);
}

namespace {

bool SemiPreemptible(const Session& s, PodId p) {
  const JobId j = s.snap().pods[p].job;
  return j != kNone && s.snap().jobs[j].semi_preemptible;
}

}  // namespace

void ExplainEvictions(Session& s, JobId preemptor, const SolveResult& result,
                      const std::string& action, const std::string& rule, QueueUseBook* book) {
  const auto shared_rule = std::make_shared<const std::string>(rule);
  auto mark = [&](const std::vector<PodId>& pods, EvictionKind kind, bool note_floor) {
    for (PodId p : pods) {
      s.SetEviction(p, {kind, action, preemptor, shared_rule, note_floor && SemiPreemptible(s, p),
                        book ? book->For(p) : nullptr});
    }
  };
  mark(result.evicted, EvictionKind::kEvicted, true);
  mark(result.moved, EvictionKind::kMoved, true);
  mark(result.restarted, EvictionKind::kRestarted, false);
}

}  // namespace kai::actions
