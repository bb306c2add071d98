#include "kai/core/whatif/engine.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>

#include "kai/core/sim/simulator.h"
#include "kai/core/usage/history.h"
#include "kai/core/whatif/job_objects.h"

namespace kai::whatif {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

bool IsRunning(const PodObject& p) { return p.phase == "Running" && !p.node_name.empty(); }

int64_t PodGpu(const PodObject& p) {
  return p.request.milli_gpu + p.gpu_sharing.fraction_milli * p.gpu_sharing.num_devices;
}

int64_t CeilTo(int64_t x, int64_t step) { return (x + step - 1) / step * step; }

struct PodTrack {
  int job = -1;    // index into the trace, -1: a pod of the cluster as loaded
  int queue = -1;  // -1: in no known queue
  int64_t gpu = 0, cpu = 0, memory = 0;
  bool running = false;
};

void SetAmounts(PodTrack& t, const PodObject& p) {
  t.gpu = PodGpu(p);
  t.cpu = p.request.milli_cpu;
  t.memory = p.request.memory;
}

constexpr size_t kDropped = SIZE_MAX;

struct JobTrack {
  size_t group = 0;          // index into world.pod_groups (kDropped: done and compacted away)
  std::vector<size_t> pods;  // indices into world.pods
  int queue = -1;
  int running_pods = 0;
  int64_t run_start = -1;   // the current run's start; -1: not running
  uint64_t generation = 0;  // a completion scheduled for an older run is void
  bool arrived = false, done = false;
};

struct Completion {
  int64_t at = 0;
  size_t job = 0;
  uint64_t generation = 0;
  bool operator>(const Completion& o) const {
    return std::tie(at, job, generation) > std::tie(o.at, o.job, o.generation);
  }
};

class Loop {
 public:
  Loop(ClusterState world, const SchedulerConfig& config, const std::vector<TraceJob>& jobs,
       const WhatIfOptions& o)
      : world_(std::move(world)), config_(config), trace_(jobs), o_(o) {}

  Result<RunResult> Run();

 private:
  int QueueOf(std::string_view name) const {
    auto it = queue_index_.find(name);
    return it == queue_index_.end() ? -1 : it->second;
  }
  Status Prepare();
  Status DecodeJobs();
  void TrackClusterPods();
  int64_t NextCycle() const;
  void Integrate(int64_t t);
  void AddAllocation(int queue, const PodTrack& pod, int sign);
  void UpdatePod(size_t p);
  void Transition(size_t j, int64_t t);
  void Arrive(size_t j, int64_t t);
  void Complete(const Completion& c, int64_t t);
  int64_t ApplyEvents(int64_t t);
  Status Cycle(int64_t t);
  void CountEvictions(const sim::CycleReport& rep);
  void RecordUsage(int64_t t);
  void RefreshUsage(int64_t t);
  void MaybeCompact();
  void Report(int64_t t);
  RunResult Finish();

  ClusterState world_;
  const SchedulerConfig& config_;
  const std::vector<TraceJob>& trace_;
  const WhatIfOptions& o_;
  sim::CycleCache cache_;
  std::vector<JobObjects> pending_objects_;  // decoded before the run, moved in on arrival
  std::vector<size_t> arrival_order_;
  size_t next_arrival_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::vector<JobTrack> jobs_;
  std::vector<PodTrack> pods_;
  std::vector<size_t> touched_;  // jobs whose running pods changed
  std::map<std::string, int, std::less<>> queue_index_;
  std::map<std::string, int, std::less<>> queue_of_group_;  // "ns/name" -> queue
  std::vector<int> parent_;
  std::vector<int64_t> alloc_, fair_;
  std::vector<Resources>
      held_;  // per queue, what its running pods hold (the usage history's input)
  int64_t cluster_alloc_ = 0;
  int64_t period_ = 1, last_cycle_ = std::numeric_limits<int64_t>::min() / 2, last_t_ = 0;
  bool dirty_ = true;
  int64_t dirty_since_ = 0;
  int64_t waiting_jobs_ = 0, completed_pods_ = 0;
  std::optional<usage::UsageHistory> history_;
  std::map<std::string, usage::QueueUsage> usage_map_;
  int64_t last_fetch_ = std::numeric_limits<int64_t>::min() / 2;
  Resources capacity_;
  RunResult r_;
  int64_t iterations_ = 0;
};

Status Loop::Prepare() {
  r_.until_seconds = o_.until_seconds;
  r_.bucket_seconds = std::max<int64_t>(1, CeilTo(o_.until_seconds, o_.buckets) / o_.buckets);
  const size_t nb =
      static_cast<size_t>(CeilTo(o_.until_seconds, r_.bucket_seconds) / r_.bucket_seconds);
  r_.cluster_allocated.assign(nb, 0);
  if (o_.period_seconds > 0) {
    period_ = o_.period_seconds;
  } else if (config_.schedule_period_millis) {
    period_ = std::max<int64_t>(1, CeilTo(*config_.schedule_period_millis, 1000) / 1000);
  }
  for (const QueueObject& q : world_.queues) {
    queue_index_.emplace(q.meta.name, static_cast<int>(r_.queues.size()));
    r_.queues.push_back(QueueTotals{.name = q.meta.name, .parent = q.parent});
    r_.queues.back().allocated.assign(nb, 0);
    r_.queues.back().fair_share.assign(nb, 0);
  }
  for (const QueueTotals& q : r_.queues) {
    auto it = queue_index_.find(q.parent);
    parent_.push_back(it == queue_index_.end() ? -1 : it->second);
  }
  alloc_.assign(r_.queues.size(), 0);
  fair_.assign(r_.queues.size(), 0);
  held_.assign(r_.queues.size(), Resources{});
  for (const NodeObject& n : world_.nodes) {
    // A node with no status.capacity (a hand-written manifest) counts its allocatable.
    const Resources& c = n.capacity.IsZero() ? n.allocatable : n.capacity;
    capacity_.milli_cpu += c.milli_cpu;
    capacity_.memory += c.memory;
    capacity_.milli_gpu += c.milli_gpu;
    r_.capacity_milli_gpu += n.allocatable.milli_gpu;
  }
  if (o_.usage) history_.emplace(usage::HistoryLimits{kNever / 4, 256});
  for (const PodGroupObject& g : world_.pod_groups) {
    queue_of_group_[std::string(g.meta.ns) + "/" + g.meta.name] = QueueOf(g.queue);
  }
  TrackClusterPods();
  return DecodeJobs();
}

Status Loop::DecodeJobs() {
  size_t pods = world_.pods.size();
  jobs_.resize(trace_.size());
  for (size_t j = 0; j < trace_.size(); ++j) {
    const TraceJob& t = trace_[j];
    jobs_[j].queue = QueueOf(t.queue);
    if (jobs_[j].queue < 0) {
      return Error{(t.line > 0 ? "trace line " + std::to_string(t.line) : "job " + t.name) +
                   ": queue \"" + t.queue + "\" is not in the cluster"};
    }
    auto objects = MakeJobObjects(t, o_.start + t.submit);
    if (!objects.ok()) return objects.error();
    pods += objects->pods.size();
    pending_objects_.push_back(std::move(objects.value()));
  }
  arrival_order_.resize(trace_.size());
  std::iota(arrival_order_.begin(), arrival_order_.end(), size_t{0});
  std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
                   [&](size_t a, size_t b) { return trace_[a].submit < trace_[b].submit; });
  // The cache rebuilds when the PodGroup vector moves; room for every job keeps it in place.
  world_.pod_groups.reserve(world_.pod_groups.size() + trace_.size());
  world_.pods.reserve(pods);
  return Ok();
}

void Loop::TrackClusterPods() {
  for (const PodObject& p : world_.pods) {
    PodTrack t;
    auto it = queue_of_group_.find(std::string(p.meta.ns) + "/" + p.pod_group);
    t.queue = it != queue_of_group_.end() ? it->second : -1;
    if (t.queue < 0) {
      auto l = p.meta.labels.find("kai.scheduler/queue");
      if (l != p.meta.labels.end()) t.queue = QueueOf(l->second);
    }
    SetAmounts(t, p);
    pods_.push_back(t);
  }
  for (size_t p = 0; p < world_.pods.size(); ++p) UpdatePod(p);
}

void Loop::AddAllocation(int queue, const PodTrack& pod, int sign) {
  cluster_alloc_ += sign * pod.gpu;
  for (int q = queue; q >= 0; q = parent_[q]) {
    alloc_[q] += sign * pod.gpu;
    r_.queues[q].peak_allocated_milli_gpu =
        std::max(r_.queues[q].peak_allocated_milli_gpu, alloc_[q]);
    held_[q].milli_gpu += sign * pod.gpu;
    held_[q].milli_cpu += sign * pod.cpu;
    held_[q].memory += sign * pod.memory;
  }
}

void Loop::UpdatePod(size_t p) {
  PodTrack& t = pods_[p];
  const bool now = IsRunning(world_.pods[p]);
  if (now == t.running) return;
  t.running = now;
  AddAllocation(t.queue, t, now ? 1 : -1);
  if (t.job < 0) return;
  jobs_[t.job].running_pods += now ? 1 : -1;
  touched_.push_back(static_cast<size_t>(t.job));
}

// Held amounts over [last_t_, t), into the buckets and the totals.
void Loop::Integrate(int64_t t) {
  t = std::min(t, o_.until_seconds);
  while (last_t_ < t) {
    const size_t b = static_cast<size_t>(last_t_ / r_.bucket_seconds);
    const int64_t end = std::min<int64_t>(t, static_cast<int64_t>(b + 1) * r_.bucket_seconds);
    const int64_t dt = end - last_t_;
    r_.cluster_allocated[b] += cluster_alloc_ * dt;
    for (size_t q = 0; q < r_.queues.size(); ++q) {
      QueueTotals& qt = r_.queues[q];
      qt.allocated[b] += alloc_[q] * dt;
      qt.fair_share[b] += fair_[q] * dt;
      qt.used_milli_gpu_seconds += alloc_[q] * dt;
      qt.fair_milli_gpu_seconds += fair_[q] * dt;
    }
    last_t_ = end;
  }
}

void Loop::Transition(size_t j, int64_t t) {
  JobTrack& job = jobs_[j];
  const TraceJob& spec = trace_[j];
  if (job.done) return;
  const bool enough = job.running_pods >= spec.min_member;
  if (job.run_start < 0 && enough) {
    job.run_start = t;
    --waiting_jobs_;
    JobOutcome& out = r_.jobs[j];
    if (out.first_start < 0) out.first_start = t;
    completions_.push(Completion{t + spec.duration, j, job.generation});
  } else if (job.run_start >= 0 && !enough) {
    // Evicted below its gang: back to pending; its next run needs the whole duration again.
    job.run_start = -1;
    ++job.generation;
    ++waiting_jobs_;
    ++r_.jobs[j].restarts;
  }
}

void Loop::Arrive(size_t j, int64_t t) {
  JobTrack& job = jobs_[j];
  JobObjects& objects = pending_objects_[j];
  job.arrived = true;
  job.group = world_.pod_groups.size();
  world_.pod_groups.push_back(std::move(objects.group));
  for (PodObject& pod : objects.pods) {
    job.pods.push_back(world_.pods.size());
    PodTrack t{.job = static_cast<int>(j), .queue = job.queue};
    SetAmounts(t, pod);
    pods_.push_back(t);
    world_.pods.push_back(std::move(pod));
  }
  objects = JobObjects{};
  queue_of_group_[trace_[j].ns + "/" + trace_[j].name] = job.queue;
  ++waiting_jobs_;
  (void)t;
}

void Loop::Complete(const Completion& c, int64_t t) {
  JobTrack& job = jobs_[c.job];
  if (job.done || c.generation != job.generation) return;
  job.done = true;
  r_.jobs[c.job].completed = t;
  for (size_t p : job.pods) {
    world_.pods[p].phase = "Succeeded";
    UpdatePod(p);
    cache_.changes.pods.push_back(p);
  }
  completed_pods_ += static_cast<int64_t>(job.pods.size());
}

// Applies every arrival and completion at `t`; returns how many.
int64_t Loop::ApplyEvents(int64_t t) {
  int64_t n = 0;
  while (next_arrival_ < arrival_order_.size() &&
         trace_[arrival_order_[next_arrival_]].submit <= t) {
    Arrive(arrival_order_[next_arrival_++], t);
    ++n;
  }
  while (!completions_.empty() && completions_.top().at <= t) {
    const Completion c = completions_.top();
    completions_.pop();
    Complete(c, t);
    ++n;
  }
  touched_.clear();  // a completed job's pods leave no job to start
  return n;
}

int64_t Loop::NextCycle() const {
  if (dirty_) return CeilTo(std::max(dirty_since_, last_cycle_ + period_), period_);
  if (waiting_jobs_ > 0)
    return CeilTo(last_cycle_ + std::max(o_.recheck_seconds, period_), period_);
  return kNever;
}

void Loop::CountEvictions(const sim::CycleReport& rep) {
  for (const sim::PodReport& p : rep.pods) {
    if (p.eviction.empty()) continue;
    const int victim = QueueOf(p.queue);
    if (victim >= 0) ++r_.queues[victim].evictions_suffered;
    auto it = queue_of_group_.find(p.preemptor);
    if (it != queue_of_group_.end() && it->second >= 0) ++r_.queues[it->second].evictions_caused;
  }
}

void Loop::RefreshUsage(int64_t t) {
  if (!history_ || t - last_fetch_ < o_.usage->fetch_interval_seconds) return;
  RecordUsage(t);  // extends what is held to now
  usage_map_ = history_->Usage(o_.start + t, o_.usage->params);
  last_fetch_ = t;
}

// A sample of what every queue holds from `t` on (kai scheduler records one per cycle; here one
// follows every change, so that the history is exact between cycles too).
void Loop::RecordUsage(int64_t t) {
  if (!history_) return;
  std::map<std::string, Resources> held;
  for (size_t q = 0; q < r_.queues.size(); ++q) held[r_.queues[q].name] = held_[q];
  history_->Record(o_.start + t, held, capacity_, o_.usage->params.window_seconds);
}

Status Loop::Cycle(int64_t t) {
  RefreshUsage(t);
  sim::SimulateOptions so;
  so.now = o_.start + t;
  so.report_changed_pods_only = true;
  so.monotonic_millis = o_.monotonic_millis;
  so.verify_kept_verdicts = o_.verify_kept_verdicts;
  if (history_) so.queue_usage = &usage_map_;
  auto rep = sim::RunCycle(world_, config_, so, static_cast<int>(++r_.cycles), &cache_);
  if (!rep.ok()) return rep.error();
  last_cycle_ = t;
  for (const sim::QueueReport& q : rep->queues) {
    if (const int i = QueueOf(q.name); i >= 0) fair_[i] = q.fair_share.milli_gpu;
  }
  CountEvictions(*rep);
  const int64_t before = cluster_alloc_;
  bool evicted = false;
  for (const sim::PodReport& p : rep->pods) evicted = evicted || !p.eviction.empty();
  for (size_t p : cache_.changes.pods) UpdatePod(p);
  const bool started_or_stopped = !touched_.empty() || before != cluster_alloc_;
  for (size_t j : touched_) Transition(j, t);
  touched_.clear();
  RecordUsage(t);
  dirty_ = evicted || started_or_stopped;
  dirty_since_ = t + 1;
  return Ok();
}

// Drops finished jobs' pods and PodGroups from the world once they outnumber the live ones, so
// that a week of jobs does not slow every cycle (the snapshot is then built in full once).
void Loop::MaybeCompact() {
  const int64_t live = static_cast<int64_t>(world_.pods.size()) - completed_pods_;
  if (completed_pods_ < 4096 || completed_pods_ < live) return;
  std::vector<size_t> pod_map(world_.pods.size(), SIZE_MAX),
      group_map(world_.pod_groups.size(), SIZE_MAX);
  std::vector<bool> drop_group(world_.pod_groups.size(), false);
  for (const JobTrack& j : jobs_) {
    if (j.done && j.group != kDropped) drop_group[j.group] = true;
  }
  ClusterState& w = world_;
  std::vector<PodObject> pods;
  std::vector<PodTrack> tracks;
  pods.reserve(w.pods.capacity());
  for (size_t p = 0; p < w.pods.size(); ++p) {
    if (pods_[p].job >= 0 && jobs_[pods_[p].job].done) continue;
    pod_map[p] = pods.size();
    pods.push_back(std::move(w.pods[p]));
    tracks.push_back(pods_[p]);
  }
  std::vector<PodGroupObject> groups;
  groups.reserve(w.pod_groups.capacity());
  for (size_t g = 0; g < w.pod_groups.size(); ++g) {
    if (drop_group[g]) continue;
    group_map[g] = groups.size();
    groups.push_back(std::move(w.pod_groups[g]));
  }
  for (JobTrack& j : jobs_) {
    if (!j.arrived || j.group == kDropped) continue;
    if (j.done) {
      j.group = kDropped;
      j.pods.clear();
      continue;
    }
    j.group = group_map[j.group];
    for (size_t& p : j.pods) p = pod_map[p];
  }
  w.pods = std::move(pods);
  w.pod_groups = std::move(groups);
  pods_ = std::move(tracks);
  completed_pods_ = 0;
  cache_.changes = ClusterChanges{};
  cache_.changes.rebuild = true;
}

void Loop::Report(int64_t t) {
  if (!o_.progress || (++iterations_ & 255) != 0) return;
  o_.progress(Progress{t, o_.until_seconds, r_.events, r_.cycles});
}

Result<RunResult> Loop::Run() {
  if (auto s = Prepare(); !s.ok()) return s.error();
  for (size_t j = 0; j < trace_.size(); ++j) {
    const TraceJob& t = trace_[j];
    r_.jobs.push_back(JobOutcome{.ns = t.ns,
                                 .name = t.name,
                                 .queue = t.queue,
                                 .submit = t.submit,
                                 .gpu_milli_per_pod = t.gpu_milli,
                                 .pods = t.pods});
  }
  for (;;) {
    const int64_t arrival = next_arrival_ < arrival_order_.size()
                                ? trace_[arrival_order_[next_arrival_]].submit
                                : kNever;
    const int64_t completion = completions_.empty() ? kNever : completions_.top().at;
    const int64_t event = std::min(arrival, completion);
    const int64_t cycle = NextCycle();
    const int64_t t = std::min(event, cycle);
    if (t > o_.until_seconds || t == kNever) break;
    Integrate(t);
    if (event <= cycle) {
      r_.events += ApplyEvents(t);
      RecordUsage(t);
      if (!dirty_) dirty_since_ = t;
      dirty_ = true;
    } else {
      MaybeCompact();
      if (auto s = Cycle(t); !s.ok()) return s.error();
    }
    Report(t);
  }
  Integrate(o_.until_seconds);
  if (o_.progress) o_.progress(Progress{o_.until_seconds, o_.until_seconds, r_.events, r_.cycles});
  return std::move(r_);
}

}  // namespace

Result<RunResult> RunWhatIf(ClusterState cluster, const SchedulerConfig& config,
                            const std::vector<TraceJob>& jobs, const WhatIfOptions& options) {
  Loop loop(std::move(cluster), config, jobs, options);
  return loop.Run();
}

}  // namespace kai::whatif
