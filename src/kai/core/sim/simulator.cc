#include "kai/core/sim/simulator.h"

#include <map>

#include "kai/core/sim/output.h"
#include "kai/core/snapshot/compare.h"

#include "kai/core/actions/common/background.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai::sim {
namespace {

std::vector<Reason> PendingReasons(const Session& s, const SnapPod& pod) {
  if (!pod.kai_scheduled) return {};
  if (pod.job == kNone && !pod.obj->pod_group.empty()) {
    const std::string name =
        pod.obj->sub_group.empty() ? std::string(keys::kDefaultSubGroup) : pod.obj->sub_group.str();
    return {NodesReason{.detail = "Pod references subgroup \"" + name +
                                  "\", which does not exist in PodGroup " + std::string(pod.ns) +
                                  "/" + pod.obj->pod_group}};
  }
  if (pod.job == kNone) {
    return {NodesReason{.detail = "not part of a PodGroup (no pod-group-name annotation)"}};
  }
  return s.JobReasons(pod.job);
}

PodReport ReportPod(const Session& s, PodId id) {
  const SnapPod& pod = s.snap().pods[id];
  PodReport r;
  r.ns = pod.ns;
  r.name = pod.name;
  if (pod.job != kNone) {
    const SnapJob& job = s.snap().jobs[pod.job];
    r.pod_group = job.name;
    r.queue = job.obj->queue;
  } else {
    r.pod_group = pod.obj->pod_group;
  }
  r.status = PodStatusName(pod.status);
  if (pod.node != kNone) r.node = s.snap().nodes[pod.node].name;
  r.gpu_groups = pod.gpu_groups;
  for (const NumaZoneAmount& z : NumaRecordOf(s.snap(), id)) r.numa_zones.push_back(z.zone);
  if (pod.status == PodStatus::kPending) r.reasons = PendingReasons(s, pod);
  r.eviction = s.EvictionReason(id);
  r.eviction_verdict = s.Eviction(id);
  if (const JobId pre = r.eviction_verdict.preemptor; pre != kNone) {
    const SnapJob& job = s.snap().jobs[pre];
    r.preemptor = std::string(job.ns) + "/" + std::string(job.name);
  }
  return r;
}

}  // namespace

namespace {

void CountJobs(const Session& s, CycleReport& rep) {
  for (const ActionMetrics& a : s.metrics().actions) {
    rep.jobs_tried += a.jobs_tried;
    rep.jobs_kept += a.jobs_kept;
    rep.jobs_shared += a.jobs_shared;
  }
}

void ReportQueues(const Session& s, CycleReport& rep) {
  for (const SnapQueue& q : s.snap().queues) {
    QueueReport qr{std::string(q.name),
                   q.parent == kNone ? "" : std::string(s.snap().queues[q.parent].name),
                   q.allocated,
                   q.fair_share,
                   q.requested,
                   q.gpu,
                   q.cpu,
                   q.memory,
                   q.priority};
    rep.queues.push_back(std::move(qr));
  }
}

// The cycle's counters, the queues and only the pods in `pods` (indices of the world's pods,
// which are the snapshot's).
CycleReport ReportChangedPods(const Session& s, int cycle, const std::vector<size_t>& pods) {
  CycleReport rep;
  rep.cycle = cycle;
  rep.counts = s.counters();
  CountJobs(s, rep);
  for (size_t p : pods) {
    if (p < s.snap().pods.size()) rep.pods.push_back(ReportPod(s, static_cast<PodId>(p)));
  }
  ReportQueues(s, rep);
  return rep;
}

}  // namespace

CycleReport ReportCycle(const Session& s, int cycle) {
  CycleReport rep;
  rep.cycle = cycle;
  rep.counts = s.counters();
  CountJobs(s, rep);
  for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
    rep.pods.push_back(ReportPod(s, p));
  }
  for (const SnapNode& n : s.snap().nodes) {
    rep.nodes.push_back(NodeReport{std::string(n.name), n.idle.milli_gpu, n.releasing.milli_gpu,
                                   BreakdownReleasing(s.snap(), n)});
  }
  ReportQueues(s, rep);
  return rep;
}

namespace {

void StartRunning(PodObject& pod, const std::string& node, const std::vector<std::string>& groups) {
  pod.phase = "Running";
  pod.node_name = node;
  pod.gpu_groups = groups;
  pod.nominated_node.clear();
}

// A new pod has no NUMA placement yet; a bound one keeps the predicted one (what KAI's binder
// annotates it with).
void SetNumaRecord(PodObject& pod, NumaPlacementRecord record) {
  if (pod.numa.empty()) return;
  pod.numa.Mutable()[0].observed.clear();
  pod.numa.Mutable()[0].predicted = std::move(record);
}

void Recreate(PodObject& pod) {
  SetNumaRecord(pod, {});
  pod.phase = "Pending";
  pod.node_name.clear();
  pod.meta.deletion.reset();
  pod.gpu_groups.clear();
  pod.nominated_node.clear();
}

// Moves the world on after a cycle (FORMAT.md §4); returns what changed in it.
ClusterChanges Advance(ClusterState& world, const Session& s, const SimulateOptions& options) {
  const Snapshot& snap = s.snap();
  ClusterChanges changes;
  for (size_t i = 0; i < world.pods.size(); ++i) {
    PodObject& pod = world.pods[i];
    const SnapPod& sp = snap.pods[i];
    // Most pods stay as they are (Running, Pending unnominated): their node's name is not read.
    auto node_name = [&] {
      return sp.node == kNone ? std::string() : std::string(snap.nodes[sp.node].name);
    };
    switch (sp.status) {
      case PodStatus::kBinding:
        StartRunning(pod, node_name(), sp.gpu_groups);
        SetNumaRecord(pod, NumaRecordOf(snap, static_cast<PodId>(i)));
        break;
      case PodStatus::kReleasing:
        if (options.no_recreate.count(pod.pod_group)) {
          if (!pod.meta.deletion) pod.meta.deletion = options.now;
        } else {
          Recreate(pod);
        }
        break;
      case PodStatus::kPending:
        // A running pod that ends the cycle Pending was moved and then evicted: recreate it. A
        // pending pod that was nominated and not pipelined again loses its nomination. A pending
        // pod that stays as it was is no change.
        if (pod.node_name.empty() && pod.nominated_node.empty()) continue;
        if (!pod.node_name.empty()) Recreate(pod);
        pod.nominated_node.clear();
        break;
      case PodStatus::kPipelined:
        // A pod that was moved (evicted, then pipelined elsewhere) is recreated by its owner: a
        // new pod, with no nomination. A pending pod pipelined onto resources being freed stays
        // Pending, nominated to that node (status.nominatedNodeName), so that next cycle's
        // allocate serves it before the jobs that could retake the room (docs/deviations.md).
        if (pod.node_name.empty()) {
          pod.nominated_node = node_name();
        } else {
          Recreate(pod);
        }
        break;
      default:
        continue;
    }
    changes.pods.push_back(i);
  }
  changes.bind_requests = !world.bind_requests.empty();
  world.bind_requests.clear();  // every Binding pod is Running now
  for (size_t j = 0; j < world.pod_groups.size(); ++j) {
    world.pod_groups[j].last_start = snap.jobs[j].last_start;
    world.pod_groups[j].stale_since = snap.jobs[j].stale_since;
  }
  return changes;
}

}  // namespace

namespace {

// A queue's usage from the store; a parent with no record of its own uses the sum of its
// children's (all usages are normalised to the same cluster capacity, so they add up).
usage::QueueUsage QueueUsageOf(Snapshot& snap, QueueId id,
                               const std::map<std::string, usage::QueueUsage>& usage) {
  SnapQueue& q = snap.queues[id];
  if (auto it = usage.find(std::string(q.name)); it != usage.end()) {
    q.usage = it->second;
  } else {
    q.usage = {};
    for (QueueId c : q.children) {
      const auto u = QueueUsageOf(snap, c, usage);
      for (size_t i = 0; i < u.size(); ++i) q.usage[i] += u[i];
    }
  }
  return q.usage;
}

}  // namespace

void ApplyQueueUsage(Snapshot& snap, const std::map<std::string, usage::QueueUsage>& usage) {
  for (QueueId root : snap.root_queues) QueueUsageOf(snap, root, usage);
}

namespace {

void ApplyUsage(Snapshot& snap, const SimulateOptions& options) {
  if (options.queue_usage) {
    ApplyQueueUsage(snap, *options.queue_usage);
    return;
  }
  if (!options.usage || options.usage->empty()) return;
  ApplyQueueUsage(snap, options.usage->Usage(options.now, options.usage->params()));
}

// The cycle's snapshot from the cache, checked against a full build when asked.
Result<Snapshot> CachedSnapshot(const ClusterState& world, const SimulateOptions& options,
                                CycleCache& cycles, int cycle) {
  Snapshot& snap = cycles.cache.Update(world, options.now, cycles.changes);
  ApplyUsage(snap, options);
  if (options.verify_snapshot_cache) {
    const std::string diff = SnapshotDifference(BuildSimSnapshot(world, options), snap);
    if (!diff.empty()) {
      return Error{"cycle " + std::to_string(cycle) +
                   ": the incremental snapshot differs from a full build:\n" + diff};
    }
  }
  return cycles.cache.Lend();
}

}  // namespace

Snapshot BuildSimSnapshot(const ClusterState& world, const SimulateOptions& options) {
  Snapshot snap = BuildSnapshot(world, options.now);
  ApplyUsage(snap, options);
  return snap;
}

Status RunActions(Session& session, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const ActionInfo* info = FindAction(name);
    if (!info) return Error{"unknown action \"" + name + "\""};
    session.StartAction(name);
    if (session.memo().Replays(session, name)) {
      session.memo().Replay(session);
      continue;
    }
    info->make()->Execute(session);
  }
  session.FinishAction();
  return Ok();
}

Result<std::unique_ptr<Session>> RunSession(Snapshot snap, const SchedulerConfig& config,
                                            const Session::MonotonicClock& clock,
                                            const Session::MonotonicClock& metrics_clock,
                                            VerdictCarry carry) {
  auto session = std::make_unique<Session>(std::move(snap), config);
  if (clock) session->SetMonotonicClock(clock);
  if (metrics_clock) session->SetMetricsClock(metrics_clock);
  const std::vector<PodId> background = actions::SetAsideBackgroundPods(*session);
  if (auto opened = session->OpenPlugins(); !opened.ok()) return opened.error();
  session->memo().Open(*session, carry.previous, carry.world_unchanged, carry.next != nullptr);
  if (auto ran = RunActions(*session, config.actions); !ran.ok()) return ran.error();
  actions::SettleBackgroundPods(*session, background);
  actions::PlaceBackgroundPods(*session);
  if (carry.next) *carry.next = session->memo().Finish(*session);
  session->Close();
  return session;
}

namespace {

std::string PodName(const SnapPod& p) { return std::string(p.ns) + "/" + std::string(p.name); }

std::string NodeName(const Snapshot& snap, NodeId n) {
  return n == kNone ? "(none)" : std::string(snap.nodes[n].name);
}

}  // namespace

std::string DecisionDifference(const Session& want, const Session& got) {
  const Snapshot& a = want.snap();
  const Snapshot& b = got.snap();
  if (a.pods.size() != b.pods.size() || a.jobs.size() != b.jobs.size()) {
    return "the sessions hold different pods or jobs";
  }
  for (PodId p = 0; p < static_cast<PodId>(a.pods.size()); ++p) {
    const SnapPod& x = a.pods[p];
    const SnapPod& y = b.pods[p];
    if (x.status != y.status || x.node != y.node || x.gpu_groups != y.gpu_groups) {
      return "pod " + PodName(x) + ": " + std::string(PodStatusName(x.status)) + " on " +
             NodeName(a, x.node) + " in the full evaluation, " +
             std::string(PodStatusName(y.status)) + " on " + NodeName(b, y.node) + " here";
    }
    if (const std::string e = want.EvictionReason(p); e != got.EvictionReason(p)) {
      return "pod " + PodName(x) + ": evicted \"" + e + "\" in the full evaluation, \"" +
             got.EvictionReason(p) + "\" here";
    }
  }
  for (JobId j = 0; j < static_cast<JobId>(a.jobs.size()); ++j) {
    const std::string name = std::string(a.jobs[j].ns) + "/" + std::string(a.jobs[j].name);
    const std::string x = ReasonsJson(want.JobReasons(j));
    const std::string y = ReasonsJson(got.JobReasons(j));
    if (x != y) {
      return "job " + name + ": reasons \"" + x + "\" in the full evaluation, \"" + y + "\" here";
    }
    if (a.jobs[j].last_start != b.jobs[j].last_start ||
        a.jobs[j].stale_since != b.jobs[j].stale_since) {
      return "job " + name + ": its timers differ";
    }
  }
  return "";
}

Result<CycleReport> RunCycle(ClusterState& world, const SchedulerConfig& config,
                             const SimulateOptions& options, int cycle, CycleCache* cycles) {
  Snapshot snap;
  VerdictCarry carry;
  CycleVerdicts next;
  if (cycles) {
    const ClusterChanges& c = cycles->changes;
    carry = {.previous = &cycles->verdicts,
             .world_unchanged = c.pods.empty() && !c.bind_requests && !c.rebuild,
             .next = cycles->record_verdicts ? &next : nullptr};
    auto cached = CachedSnapshot(world, options, *cycles, cycle);
    if (!cached.ok()) return cached.error();
    snap = std::move(cached.value());
  } else {
    snap = BuildSimSnapshot(world, options);
  }
  std::unique_ptr<Session> reference;
  if (options.verify_kept_verdicts) {
    SchedulerConfig full = config;
    full.keep_verdicts = false;
    auto ran = RunSession(BuildSimSnapshot(world, options), full, options.monotonic_millis);
    if (!ran.ok()) return ran.error();
    reference = std::move(ran.value());
  }
  auto run = RunSession(std::move(snap), config, options.monotonic_millis, {}, carry);
  if (!run.ok()) {
    if (cycles) cycles->changes.rebuild = true;  // the snapshot stayed with the session
    return run.error();
  }
  Session& session = **run;
  if (reference) {
    if (const std::string diff = DecisionDifference(*reference, session); !diff.empty()) {
      if (cycles) cycles->changes.rebuild = true;
      return Error{"cycle " + std::to_string(cycle) +
                   ": kept or shared verdicts decided otherwise than the full evaluation: " + diff};
    }
  }
  CycleReport report;
  if (!options.report_changed_pods_only) report = ReportCycle(session, cycle);
  ClusterChanges changes = Advance(world, session, options);
  if (options.report_changed_pods_only) report = ReportChangedPods(session, cycle, changes.pods);
  if (cycles) {
    cycles->cache.Return(session.TakeSnapshot(), session.MovedPods(), session.NodeChanges());
    cycles->changes = std::move(changes);
    cycles->verdicts = std::move(next);
  }
  return report;
}

Result<std::vector<CycleReport>> Simulate(ClusterState world, const SchedulerConfig& config,
                                          const SimulateOptions& options) {
  std::vector<CycleReport> out;
  CycleCache cycles;
  for (int c = 1; c <= options.cycles; ++c) {
    cycles.record_verdicts = c < options.cycles;
    auto r = RunCycle(world, config, options, c, &cycles);
    if (!r.ok()) return r.error();
    out.push_back(std::move(r.value()));
  }
  return out;
}

}  // namespace kai::sim
