#include "kai/core/framework/verdict_memo.h"

#include <algorithm>
#include <map>
#include <set>

#include "kai/core/framework/session.h"

namespace kai {

bool ActionVerdict::HoldsUnder(int64_t limit, std::string_view name) const {
  if (!searched) return true;
  if (gave_up) return limit == bound_limit && name == bound_name;
  // The search checks its work against the bound as it goes and stops once the work reaches it:
  // a bound above every work it reached, or one no tighter than the bound it ran under, lets it
  // finish the same way.
  return limit < 0 || limit > work || (bound_limit >= 0 && limit >= bound_limit);
}

namespace {

// The settings a decision reads, as text: two cycles with the same text decide alike.
std::string ConfigText(const SchedulerConfig& c) {
  std::string t;
  for (const std::string& a : c.actions) t += a + ",";
  t += ";";
  for (const PluginConfig& p : c.plugins) {
    t += p.name + ":" + std::to_string(p.priority) + "{";
    for (const auto& [k, v] : p.arguments) t += k + "=" + v + ",";
    t += "}";
  }
  for (const auto& [a, d] : c.queue_depth_per_action) t += a + "=" + std::to_string(d) + ",";
  t += ";" + c.placement_gpu + ";" + c.placement_cpu;
  for (int64_t v :
       {c.max_consolidation_preemptees, c.default_staleness_grace_seconds, c.max_scenarios_per_job,
        c.max_search_work_per_job, c.max_search_work_per_action}) {
    t += ";" + std::to_string(v);
  }
  for (bool b :
       {c.allow_consolidating_reclaim, c.restart_partly_moved_gangs, c.full_hierarchy_fairness}) {
    t += b ? ";1" : ";0";
  }
  return t;
}

bool TimeBoundSearch(const SchedulerConfig& c) {
  const SearchTimeBudgets& t = c.search_time;
  return c.max_search_millis_per_job > 0 || t.job_millis > 0 || t.min_job_millis > 0 ||
         !t.action_millis.empty() || !t.generator_millis.empty();
}

// Every min runtime the configuration or a queue sets (plugins/minruntime).
std::set<int64_t> MinRuntimes(const Session& s) {
  std::set<int64_t> out = s.config().DefaultMinRuntimes();
  for (const SnapQueue& q : s.snap().queues) {
    if (q.obj->preempt_min_runtime) out.insert(*q.obj->preempt_min_runtime);
    if (q.obj->reclaim_min_runtime) out.insert(*q.obj->reclaim_min_runtime);
  }
  return out;
}

// A running job's min runtime ended in (from, to]: a victim protected then may be taken now.
bool MinRuntimeEnded(const Session& s, UnixSeconds from, UnixSeconds to) {
  if (to < from) return true;
  if (to == from) return false;
  const std::set<int64_t> runtimes = MinRuntimes(s);
  if (runtimes.empty()) return false;
  for (const SnapJob& job : s.snap().jobs) {
    if (!job.last_start || job.active_allocated == 0) continue;
    for (int64_t r : runtimes) {
      const UnixSeconds end = *job.last_start + r;
      if (from < end && end <= to) return true;
    }
  }
  return false;
}

std::vector<std::pair<PodStatus, NodeId>> PodStates(const Snapshot& snap) {
  std::vector<std::pair<PodStatus, NodeId>> out;
  out.reserve(snap.pods.size());
  for (const SnapPod& p : snap.pods) out.emplace_back(p.status, p.node);
  return out;
}

// The session starts from the state the previous one found (and, being quiet, left).
bool SameStart(const Session& s, const CycleVerdicts& prev) {
  const Snapshot& snap = s.snap();
  if (prev.jobs.size() != snap.jobs.size() || prev.pods.size() != snap.pods.size() ||
      prev.node_idle.size() != snap.nodes.size() || prev.fair_shares.size() != snap.queues.size()) {
    return false;
  }
  for (size_t i = 0; i < snap.pods.size(); ++i) {
    if (prev.pods[i] != std::pair(snap.pods[i].status, snap.pods[i].node)) return false;
  }
  for (size_t n = 0; n < snap.nodes.size(); ++n) {
    if (!(prev.node_idle[n] == snap.nodes[n].idle) ||
        !(prev.node_releasing[n] == snap.nodes[n].releasing)) {
      return false;
    }
  }
  for (size_t q = 0; q < snap.queues.size(); ++q) {
    if (!(prev.fair_shares[q] == snap.queues[q].fair_share)) return false;
  }
  return true;
}

bool Disruptive(std::string_view action) {
  return action == "reclaim" || action == "preempt" || action == "consolidation";
}

bool DecidesPendingJobs(std::string_view action) {
  return action == "allocate" || Disruptive(action);
}

// The actions that decide pending jobs come before every other one.
bool JobActionsFirst(const SchedulerConfig& c) {
  bool other = false;
  for (const std::string& a : c.actions) {
    if (!DecidesPendingJobs(a)) {
      other = true;
    } else if (other) {
      return false;
    }
  }
  return true;
}

// A pending job's preemption delay ended in (from, to]: it may now enter the disruptive actions.
bool PreemptionDelayEnded(const Session& s, UnixSeconds from, UnixSeconds to) {
  if (to == from) return false;
  for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
    const std::optional<UnixSeconds> end = s.snap().jobs[j].PreemptionDelayEnd();
    if (end && s.PendingPods(j) > 0 && from < *end && *end <= to) return true;
  }
  return false;
}

// No pod of the job is placed or nominated, none asks for anything another pod's placement could
// satisfy (pod affinity, volumes, claims), and all are alike. (That they all wait is checked by
// VerdictMemo::ShapeOf, which keeps this answer for the session.)
bool PlainPods(const Snapshot& snap, const SnapJob& job) {
  const SnapPod* first = nullptr;
  for (PodId p : job.pods) {
    const SnapPod& pod = snap.pods[p];
    if (pod.node != kNone || pod.nominated != kNone || pod.requires_pod_affinity ||
        pod.uses_host_ports || pod.uses_claims || pod.legacy_mig || pod.background ||
        !pod.obj->resource_claims.empty()) {
      return false;
    }
    if (first && !(first->request == pod.request && first->sub_group == pod.sub_group)) {
      return false;
    }
    if (!first) first = &pod;
  }
  return first != nullptr;
}

// A pod asking for GPU memory is checked against its queue's capacity on each node (the
// proportion plugin's per-node check): its placement reads its queue.
bool PlacementReadsQueue(const Snapshot& snap, const SnapJob& job) {
  return std::any_of(job.pods.begin(), job.pods.end(),
                     [&](PodId p) { return snap.pods[p].share.kind == GpuShareKind::kMemory; });
}

bool SamePodSpec(const SnapPod& a, const SnapPod& b) {
  const PodObject& x = *a.obj;
  const PodObject& y = *b.obj;
  return a.request == b.request && a.share.kind == b.share.kind &&
         a.share.portion_milli == b.share.portion_milli &&
         a.share.memory_mib == b.share.memory_mib && a.share.devices == b.share.devices &&
         a.memory_request_milli_gpu == b.memory_request_milli_gpu &&
         a.memory_capacity_milli_gpu == b.memory_capacity_milli_gpu && a.sub_group == b.sub_group &&
         a.task_priority == b.task_priority && a.task_priority_invalid == b.task_priority_invalid &&
         a.role_rank == b.role_rank && a.kai_scheduled == b.kai_scheduled &&
         a.kai_utility == b.kai_utility && x.scheduler_name == y.scheduler_name &&
         x.priority_class_name == y.priority_class_name && x.priority == y.priority &&
         x.node_selector == y.node_selector &&
         x.required_node_affinity == y.required_node_affinity && x.tolerations == y.tolerations &&
         x.preferred_pod_affinity == y.preferred_pod_affinity &&
         x.preferred_pod_anti_affinity == y.preferred_pod_anti_affinity &&
         x.gpu_sharing == y.gpu_sharing && x.sub_group == y.sub_group &&
         x.reservation == y.reservation && x.extended_requests == y.extended_requests &&
         x.numa == y.numa;
}

// Whether the jobs' queues count: a placement (PlaceJob) does not read the queue of a job whose
// pods are plain (Shareable), so a failed placement holds for every queue alike.
enum class Queues : uint8_t { kSame, kAny };

bool SameGroupSpec(const PodGroupObject& a, const PodGroupObject& b, Queues queues) {
  return (queues == Queues::kAny || a.queue == b.queue) &&
         a.priority_class_name == b.priority_class_name && a.preemptibility == b.preemptibility &&
         a.min_member == b.min_member && a.min_sub_group == b.min_sub_group &&
         a.sub_groups == b.sub_groups && a.topology_constraint == b.topology_constraint &&
         a.preemption_delay_seconds == b.preemption_delay_seconds &&
         a.staleness_grace_seconds == b.staleness_grace_seconds;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// A job that may share verdicts with others of its shape, as far as its spec goes.
bool Shareable(const Snapshot& snap, JobId job) {
  const SnapJob& j = snap.jobs[job];
  return j.queue != kNone && j.invalid_sub_group_pods.empty() && PlainPods(snap, j);
}

uint64_t ShapeHash(const Snapshot& snap, JobId job, Queues queues) {
  const SnapJob& j = snap.jobs[job];
  const SnapPod& pod = snap.pods[j.pods.front()];
  const QueueId queue = queues == Queues::kSame ? j.queue : kNone;
  uint64_t h = Mix(static_cast<uint64_t>(queue), static_cast<uint64_t>(j.priority));
  h = Mix(h, j.pods.size());
  h = Mix(h, static_cast<uint64_t>(j.min_member));
  for (int64_t v : {pod.request.milli_cpu, pod.request.memory, pod.request.milli_gpu}) {
    h = Mix(h, static_cast<uint64_t>(v));
  }
  return Mix(h, pod.obj->node_selector.size());
}

bool SameShape(const Snapshot& snap, JobId a, JobId b, Queues queues) {
  const SnapJob& x = snap.jobs[a];
  const SnapJob& y = snap.jobs[b];
  if ((queues == Queues::kSame && x.queue != y.queue) || x.priority != y.priority ||
      x.preemptible != y.preemptible || x.semi_preemptible != y.semi_preemptible ||
      x.min_member != y.min_member || x.has_sub_groups != y.has_sub_groups ||
      x.pods.size() != y.pods.size() || x.sub_groups.size() != y.sub_groups.size() ||
      !SameGroupSpec(*x.obj, *y.obj, queues)) {
    return false;
  }
  for (size_t i = 0; i < x.pods.size(); ++i) {
    if (!SamePodSpec(snap.pods[x.pods[i]], snap.pods[y.pods[i]])) return false;
  }
  return true;
}

}  // namespace

void VerdictMemo::Open(const Session& s, CycleVerdicts* previous, bool world_unchanged,
                       bool record) {
  enabled_ = s.config().keep_verdicts;
  searches_ = !TimeBoundSearch(s.config());
  next_ = {};
  if (!enabled_) return;
  const Snapshot& snap = s.snap();
  jobs_ = snap.jobs.size();
  if (!record) return;
  next_.recorded = true;
  next_.now = snap.now;
  next_.config = ConfigText(s.config());
  if (previous && previous->recorded && previous->quiet && world_unchanged &&
      previous->config == next_.config && SameStart(s, *previous)) {
    previous_ = previous;
    keep_allocate_ = true;
    keep_disruptive_ = searches_ && !MinRuntimeEnded(s, previous->now, snap.now);
    replay_ = keep_disruptive_ && JobActionsFirst(s.config()) &&
              !PreemptionDelayEnded(s, previous->now, snap.now);
    // The session found what the last one found: that record serves again.
    next_.pods = std::move(previous->pods);
    next_.node_idle = std::move(previous->node_idle);
    next_.node_releasing = std::move(previous->node_releasing);
    next_.fair_shares = std::move(previous->fair_shares);
    return;
  }
  next_.pods = PodStates(snap);
  for (const SnapNode& n : snap.nodes) {
    next_.node_idle.push_back(n.idle);
    next_.node_releasing.push_back(n.releasing);
  }
  for (const SnapQueue& q : snap.queues) next_.fair_shares.push_back(q.fair_share);
}

bool VerdictMemo::Replays(const Session& s, std::string_view action) const {
  return replay_ && DecidesPendingJobs(action) && s.CommitCount() == 0;
}

void VerdictMemo::Replay(Session& s) {
  if (!replayed_) {
    replayed_ = true;
    for (JobId j = 0; j < static_cast<JobId>(previous_->jobs.size()); ++j) {
      const CycleVerdicts::Job& rec = previous_->jobs[j];
      if (rec.reasons) s.ShareJobReasons(j, rec.reasons);
    }
  }
  ActionMetrics* m = Metrics(s);
  if (!m) return;
  for (const auto& [action, n] : previous_->verdicts_per_action) {
    if (action == action_) m->jobs_kept += n;
  }
}

void VerdictMemo::StartAction(std::string_view action) {
  action_ = action;
  disruptive_ = Disruptive(action);
  classes_.clear();
  placements_.clear();
  given_.clear();
  auto& names = next_.action_names;
  auto it = std::find(names.begin(), names.end(), action_);
  action_index_ = static_cast<uint8_t>(it - names.begin());
  if (it == names.end()) names.push_back(action_);
}

ActionMetrics* VerdictMemo::Metrics(Session& s) const { return s.metrics().current(); }

void VerdictMemo::GiveReasons(Session& s, JobId job,
                              const std::shared_ptr<const ActionVerdict>& verdict, Reasons how) {
  std::shared_ptr<const std::vector<Reason>> held;
  if (how == Reasons::kAppend) held = s.SharedJobReasons(job);
  const std::vector<Reason>& added = verdict->reasons;
  if (added.empty()) {
    if (how == Reasons::kReplace) s.SetJobReasons(job, {});
    return;
  }
  Given& given = given_[{held.get(), verdict.get()}];
  if (!given.after) {
    std::vector<Reason> after = held ? *held : std::vector<Reason>{};
    after.insert(after.end(), added.begin(), added.end());
    given = {held, std::make_shared<const std::vector<Reason>>(std::move(after)), verdict};
  }
  s.ShareJobReasons(job, given.after);
}

JobId VerdictMemo::ShapeOf(const Session& s, JobId job) { return Find(s, job, shapes_); }

JobId VerdictMemo::PlacementShapeOf(const Session& s, JobId job) {
  return Find(s, job, placement_shapes_);
}

JobId VerdictMemo::Find(const Session& s, JobId job, ShapeIndex& index) {
  const Snapshot& snap = s.snap();
  // What changes during the session: the job's pods all waiting.
  if (!s.AllPodsPending(job)) return kNone;
  if (index.of.empty()) index.of.assign(snap.jobs.size(), -2);
  JobId& shape = index.of[job];
  if (shape != -2) return shape;
  shape = kNone;
  if (!Shareable(snap, job)) return shape;
  if (!index.with_queue && PlacementReadsQueue(snap, snap.jobs[job])) return shape;
  const Queues queues = index.with_queue ? Queues::kSame : Queues::kAny;
  std::vector<JobId>& seen = index.seen[ShapeHash(snap, job, queues)];
  for (JobId other : seen) {
    if (SameShape(snap, other, job, queues)) return shape = other;
  }
  seen.push_back(job);
  return shape = job;
}

const ActionVerdict* VerdictMemo::TakePlacement(Session& s, JobId job) {
  if (!enabled_ || action_.empty() || disruptive_ || placements_.empty()) return nullptr;
  const JobId shape = Find(s, job, placement_shapes_);
  if (shape == kNone) return nullptr;
  auto it = placements_.find(shape);
  if (it == placements_.end() || it->second.commits != s.CommitCount()) return nullptr;
  Give(s, job, it->second.verdict, Reasons::kReplace, /*kept=*/false);
  if (const JobId own = ShapeOf(s, job); own != kNone) {
    classes_[own] = ClassEntry{s.CommitCount(), it->second.verdict};
  }
  return it->second.verdict.get();
}

void VerdictMemo::PlacementFailed(Session& s, JobId job, ActionVerdict verdict) {
  std::shared_ptr<const ActionVerdict> held = Keep(s, job, std::move(verdict));
  if (!held || disruptive_) return;
  if (const JobId shape = Find(s, job, placement_shapes_); shape != kNone) {
    placements_[shape] = ClassEntry{s.CommitCount(), std::move(held)};
  }
}

const std::shared_ptr<const ActionVerdict>* VerdictMemo::Kept(const Session& s, JobId job,
                                                              int64_t limit,
                                                              std::string_view name) const {
  if (!(disruptive_ ? keep_disruptive_ : keep_allocate_) || s.CommitCount() != 0) return nullptr;
  if (static_cast<size_t>(job) >= previous_->jobs.size()) return nullptr;
  const CycleVerdicts::Job& rec = previous_->jobs[job];
  if (rec.uid.empty() || rec.uid != s.snap().jobs[job].uid) return nullptr;
  for (const auto& [index, verdict] : rec.actions) {
    if (index >= previous_->action_names.size() || previous_->action_names[index] != action_) {
      continue;
    }
    return verdict->HoldsUnder(limit, name) ? &verdict : nullptr;
  }
  return nullptr;
}

const std::shared_ptr<const ActionVerdict>* VerdictMemo::Shared(const Session& s, JobId job,
                                                                JobId shape, int64_t limit,
                                                                std::string_view name) const {
  auto it = classes_.find(shape);
  if (it == classes_.end() || it->second.commits != s.CommitCount()) return nullptr;
  const ActionVerdict& v = *it->second.verdict;
  if (!v.shareable || !v.HoldsUnder(limit, name)) return nullptr;
  const std::vector<SnapJob>& jobs = s.snap().jobs;
  if (v.after != kNone && !jobs[v.after].CreatedBefore(jobs[job])) return nullptr;
  if (v.before != kNone && !jobs[job].CreatedBefore(jobs[v.before])) return nullptr;
  return &it->second.verdict;
}

const ActionVerdict* VerdictMemo::Take(Session& s, JobId job, Reasons how, int64_t limit,
                                       std::string_view name) {
  // Only between StartAction calls: a verdict belongs to the action that reached it.
  if (!enabled_ || action_.empty() || (disruptive_ && !searches_)) return nullptr;
  const std::shared_ptr<const ActionVerdict>* v = Kept(s, job, limit, name);
  const bool kept = v != nullptr;
  if (!v && !classes_.empty()) {
    if (const JobId shape = ShapeOf(s, job); shape != kNone) v = Shared(s, job, shape, limit, name);
  }
  if (!v) return nullptr;
  Give(s, job, *v, how, kept);
  return v->get();
}

void VerdictMemo::Give(Session& s, JobId job, const std::shared_ptr<const ActionVerdict>& verdict,
                       Reasons how, bool kept) {
  if (ActionMetrics* m = Metrics(s)) ++(kept ? m->jobs_kept : m->jobs_shared);
  Remember(job, verdict);
  GiveReasons(s, job, verdict, how);
}

void VerdictMemo::Tried(Session& s) {
  if (ActionMetrics* m = Metrics(s)) ++m->jobs_tried;
}

void VerdictMemo::Decided(Session& s, JobId job, ActionVerdict verdict) {
  Keep(s, job, std::move(verdict));
}

std::shared_ptr<const ActionVerdict> VerdictMemo::Keep(Session& s, JobId job,
                                                       ActionVerdict verdict) {
  if (!enabled_ || action_.empty()) return nullptr;
  auto held = std::make_shared<const ActionVerdict>(std::move(verdict));
  Remember(job, held);
  if (disruptive_ && !searches_) return held;
  if (const JobId shape = ShapeOf(s, job); shape != kNone) {
    classes_[shape] = ClassEntry{s.CommitCount(), held};
  }
  return held;
}

void VerdictMemo::Remember(JobId job, const std::shared_ptr<const ActionVerdict>& verdict) {
  if (!next_.recorded) return;                       // no record asked for
  if (next_.jobs.empty()) next_.jobs.resize(jobs_);  // on first use: a replayed cycle needs none
  next_.jobs[job].actions.emplace_back(action_index_, verdict);
}

bool VerdictMemo::KeepsAll(const Session& s, const std::vector<JobId>& jobs, int64_t job_limit,
                           std::string_view job_bound, int64_t action_limit) const {
  if (!enabled_ || !(disruptive_ ? keep_disruptive_ : keep_allocate_) || s.CommitCount() != 0) {
    return false;
  }
  if (disruptive_ && action_limit >= 0 && job_limit < 0) return false;
  int64_t spent = 0;
  for (JobId j : jobs) {
    const std::shared_ptr<const ActionVerdict>* v = Kept(s, j, job_limit, job_bound);
    if (!v) return false;
    spent += (*v)->work;
  }
  return !disruptive_ || action_limit < 0 || spent + job_limit <= action_limit;
}

CycleVerdicts VerdictMemo::Finish(const Session& s) {
  if (!enabled_ || !next_.recorded) return {};
  const Snapshot& snap = s.snap();
  const SessionCounters& c = s.counters();
  next_.quiet = c.binds == 0 && c.evictions == 0 && c.pipelines == 0;
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()) && next_.quiet; ++j) {
    const SnapJob& job = snap.jobs[j];
    if (job.last_start != job.obj->last_start || job.stale_since != job.obj->stale_since) {
      next_.quiet = false;
    }
  }
  if (replayed_) {
    // The cycle repeated the last one: its verdicts, reasons and counts are the last cycle's.
    next_.jobs = std::move(previous_->jobs);
    next_.verdicts_per_action = std::move(previous_->verdicts_per_action);
    next_.action_names = std::move(previous_->action_names);
    return std::move(next_);
  }
  std::map<std::string, int64_t> per_action;
  next_.jobs.resize(snap.jobs.size());
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    CycleVerdicts::Job& rec = next_.jobs[j];
    if (rec.actions.empty() && !s.SharedJobReasons(j)) continue;
    rec.uid = std::string(snap.jobs[j].uid);
    rec.reasons = s.SharedJobReasons(j);
    for (const auto& entry : rec.actions) ++per_action[next_.action_names[entry.first]];
  }
  next_.verdicts_per_action.assign(per_action.begin(), per_action.end());
  return std::move(next_);
}

}  // namespace kai
