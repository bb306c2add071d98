#include "kai/daemons/scheduler/decisions.h"

#include <cstdio>
#include <functional>
#include <map>

#include "kai/core/framework/subgroups.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/util/time.h"

namespace kai::scheduler {
namespace {

ObjectRef RefOf(const SnapPod& p) {
  return {std::string(p.ns), std::string(p.name), std::string(p.uid)};
}

ObjectRef RefOf(const SnapJob& j) {
  return {std::string(j.ns), std::string(j.name), std::string(j.uid)};
}

bool HoldsANode(PodStatus s) {
  return s == PodStatus::kRunning || s == PodStatus::kBound || s == PodStatus::kBinding ||
         s == PodStatus::kAllocated;
}

bool Evicted(PodStatus before, PodStatus after) {
  return HoldsANode(before) && (after == PodStatus::kReleasing || after == PodStatus::kPending ||
                                after == PodStatus::kPipelined);
}

bool AsksForMig(const Resources& r) {
  for (const auto& [id, amount] : r.scalars) {
    if (amount > 0 && ResourceName(id).starts_with("nvidia.com/mig-")) return true;
  }
  return false;
}

std::string Portion(int64_t milli) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%02lld", static_cast<long long>(milli / 1000),
                static_cast<long long>((milli % 1000) / 10));
  return buf;
}

// KAI's BindRequest GPU fields (S/cache/cache.go, node_info.go setAcceptedResources): a MIG
// pod receives MigInstance; a shared pod Fraction, its devices and the portion of one device on
// its node; any other pod Regular, its whole GPUs and portion 1 (0 without GPUs).
void FillGpu(const SnapPod& p, BindDecision& b) {
  if (AsksForMig(p.request)) {
    b.received_resource_type = "MigInstance";
    b.gpu_portion = "0.00";
  } else if (p.share.IsShared()) {
    b.received_resource_type = "Fraction";
    b.gpu_count = static_cast<int>(p.share.devices);
    const int64_t per_device =
        p.share.devices > 0 ? p.accepted_milli_gpu / p.share.devices : p.accepted_milli_gpu;
    b.gpu_portion = Portion(per_device);
  } else {
    b.received_resource_type = "Regular";
    b.gpu_count = static_cast<int>(p.request.milli_gpu / kMilliPerUnit);
    b.gpu_portion = b.gpu_count > 0 ? "1.00" : "0.00";
  }
}

// A pod's DRA claims: their devices, and receivedGPU without the GPUs they give (KAI's
// receivedGPU counts device-plugin GPUs only).
void FillClaims(const DraView& dra, const Snapshot& snap, PodId id, BindDecision& b) {
  const SnapPod& pod = snap.pods[id];
  b.claims = ClaimResults(dra, snap, id);
  b.extended = ExtendedResult(dra, snap, id);
  const DraPod* dp = dra.PodOf(*pod.obj);
  if (!dp || pod.share.IsShared() || b.received_resource_type != "Regular") return;
  b.gpu_count -= static_cast<int>(dp->charged_milli_gpu / kMilliPerUnit);
  b.gpu_portion = b.gpu_count > 0 ? "1.00" : "0.00";
}

void TimerAnnotation(std::string_view key, const std::optional<UnixSeconds>& before,
                     const std::optional<UnixSeconds>& after, PodGroupDecision& d) {
  if (before == after) return;
  d.annotations.emplace_back(std::string(key), after ? FormatRfc3339(*after) : "");
}

// Where the job's PodGroup is in the world (size() when it is not one of the world's).
size_t WorldIndex(const SnapJob& job, const ClusterState& world) {
  const auto& v = world.pod_groups;
  std::less<const PodGroupObject*> before;
  if (v.empty() || before(job.obj, v.data()) || !before(job.obj, v.data() + v.size())) {
    return v.size();
  }
  return static_cast<size_t>(job.obj - v.data());
}

int CountIn(const Snapshot& snap, std::span<const PodId> pods, bool (*counts)(PodStatus)) {
  int n = 0;
  for (PodId p : pods) n += counts(snap.pods[p].status) ? 1 : 0;
  return n;
}

bool IsGated(PodStatus s) { return s == PodStatus::kGated; }
bool IsWaiting(PodStatus s) { return s == PodStatus::kPending || s == PodStatus::kGated; }

// KAI's NotReady message: each PodSet with fewer pods (alive, not gated) than its minimum.
std::string NotReadyMessage(const Snapshot& snap, const SnapJob& job) {
  std::string msg = "Job is not ready for scheduling.";
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    if (!sg.pod_set) continue;
    const auto pods = job.PodsOf(static_cast<SubGroupIndex>(i));
    const int alive = CountIn(snap, pods, IsAlive), gated = CountIn(snap, pods, IsGated);
    if (alive - gated >= sg.min_member) continue;
    const std::string counts =
        ", currently " + std::to_string(alive) + " exist, " + std::to_string(gated) + " are gated";
    msg += job.HasSubGroups() ? " Waiting for " + std::to_string(sg.min_member) +
                                    " pods for SubGroup " + std::string(sg.name) + counts + "."
                              : " Waiting for " + std::to_string(sg.min_member) + " pods" + counts;
  }
  return msg;
}

// KAI's StaleJob message: the active pods against the minimum, and each short SubGroup.
std::string StaleMessage(const Snapshot& snap, const SnapJob& job) {
  int active = 0, min_member = 0;
  std::string short_sets;
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    if (!sg.pod_set) continue;
    const int n = CountIn(snap, job.PodsOf(static_cast<SubGroupIndex>(i)), IsActiveUsed);
    active += n;
    min_member += sg.min_member;
    if (job.HasSubGroups() && n < sg.min_member) {
      short_sets += ", subGroup " + std::string(sg.name) + " minMember is " +
                    std::to_string(sg.min_member) + " and " + std::to_string(n) +
                    " pods are active";
    }
  }
  return "Job is stale. " + std::to_string(active) + " pods are active, minMember is " +
         std::to_string(min_member) + short_sets;
}

// The job has pending or gated pods but too few of them exist to schedule it (KAI
// IsReadyForScheduling): it waits, with a NotReady event instead of Unschedulable ones.
bool WaitsForPods(const Snapshot& snap, const SnapJob& job) {
  return CountIn(snap, job.pods, IsWaiting) > 0 && !IsReadyForScheduling(snap, job);
}

// WaitsForPods of every job, once per cycle.
std::vector<bool> JobsWaitingForPods(const Snapshot& snap) {
  std::vector<bool> out(snap.jobs.size());
  for (size_t j = 0; j < snap.jobs.size(); ++j) out[j] = WaitsForPods(snap, snap.jobs[j]);
  return out;
}

void AddPodGroupDecisions(const Session& s, const ClusterState& world,
                          const std::vector<bool>& waiting, Decisions& out) {
  const Snapshot& snap = s.snap();
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    const SnapJob& job = snap.jobs[j];
    PodGroupDecision d;
    d.pod_group = RefOf(job);
    d.world_index = WorldIndex(job, world);
    d.last_start = job.last_start;
    d.stale_since = job.stale_since;
    TimerAnnotation(keys::kLastStartTimestamp, job.obj->last_start, job.last_start, d);
    TimerAnnotation(keys::kStaleTimestamp, job.obj->stale_since, job.stale_since, d);
    if (job.stale_since) d.stale = StaleMessage(snap, job);
    if (waiting[j]) {
      d.not_ready = NotReadyMessage(snap, job);
    } else if (s.PendingPods(j) > 0) {
      const std::string msg = JoinReasons(s.JobReasons(j));
      if (!msg.empty()) {
        d.unschedulable = msg;
        d.reasons = s.JobReasons(j);
      }
    } else {
      d.clear_conditions = job.obj->has_scheduling_conditions;
    }
    if (!d.annotations.empty() || d.unschedulable || d.clear_conditions || d.not_ready || d.stale) {
      out.pod_groups.push_back(std::move(d));
    }
  }
}

// KAI's cleanStaleBindRequest: a request for a node that is gone, or a failed one (kai's
// scheduler sets no backoff limit, so a failure is final), is deleted.
void AddStaleBindRequests(const Snapshot& snap, const ClusterState& world, Decisions& out) {
  std::map<std::string_view, bool> nodes;
  for (const SnapNode& n : snap.nodes) nodes[n.name] = true;
  for (const BindRequestObject& b : world.bind_requests) {
    const bool node_gone = !nodes.count(b.selected_node);
    const bool failed_final =
        b.phase == "Failed" && (!b.backoff_limit || b.failed_attempts >= *b.backoff_limit);
    if (node_gone || failed_final) out.stale_bind_requests.push_back({b.meta.ns, b.meta.name, ""});
  }
}

}  // namespace

std::vector<PodStatus> InitialStatuses(const Snapshot& snap) {
  std::vector<PodStatus> out;
  out.reserve(snap.pods.size());
  for (const SnapPod& p : snap.pods) out.push_back(p.status);
  return out;
}

Decisions ExtractDecisions(const Session& s, const std::vector<PodStatus>& initial,
                           const ClusterState& world) {
  Decisions out;
  const Snapshot& snap = s.snap();
  std::map<JobId, int> gang;        // pods evicted per job
  std::vector<JobId> evicted_jobs;  // by eviction
  const std::vector<bool> waiting = JobsWaitingForPods(snap);
  for (PodId p = 0; p < static_cast<PodId>(snap.pods.size()); ++p) {
    const SnapPod& pod = snap.pods[p];
    const PodStatus before = initial[p];
    if (before == PodStatus::kPending && pod.status == PodStatus::kBinding) {
      BindDecision b;
      b.pod = RefOf(pod);
      b.node = std::string(snap.nodes[pod.node].name);
      b.gpu_groups = pod.gpu_groups;
      FillGpu(pod, b);
      if (snap.dra) FillClaims(*snap.dra, snap, p, b);
      b.numa_zones = NumaRecordOf(snap, p);
      out.binds.push_back(std::move(b));
    } else if (Evicted(before, pod.status)) {
      EvictDecision e;
      e.pod = RefOf(pod);
      if (pod.job != kNone) {
        e.pod_group = RefOf(snap.jobs[pod.job]);
        ++gang[pod.job];
      }
      evicted_jobs.push_back(pod.job);
      const EvictionVerdict& v = s.Eviction(p);
      e.message = s.EvictionReason(p);
      if (v.queues) {  // as KAI's reclaim events: the victim's queue, then the reclaimer's
        e.message += "\n" + DescribeQueueUse(v.queues->victim) + "\n" +
                     DescribeQueueUse(v.queues->reclaimer);
      }
      e.action = v.action;
      if (v.preemptor != kNone) e.preemptor = RefOf(snap.jobs[v.preemptor]);
      out.evictions.push_back(std::move(e));
    } else if (pod.status == PodStatus::kPipelined && pod.obj->node_name.empty()) {
      out.nominations.push_back({RefOf(pod), std::string(snap.nodes[pod.node].name)});
      out.pipelined.push_back({RefOf(pod), std::string(snap.nodes[pod.node].name)});
    } else if (pod.status == PodStatus::kPending && pod.kai_scheduled) {
      if (!pod.obj->nominated_node.empty()) out.nominations.push_back({RefOf(pod), ""});
      if (pod.job == kNone || waiting[pod.job]) continue;
      PendingPodDecision d;
      d.pod = RefOf(pod);
      d.pod_group = RefOf(snap.jobs[pod.job]);
      d.message = JoinReasons(s.JobReasons(pod.job));
      out.pending.push_back(std::move(d));
    }
  }
  for (size_t i = 0; i < out.evictions.size(); ++i) {
    auto it = gang.find(evicted_jobs[i]);
    if (it != gang.end()) out.evictions[i].gang_size = it->second;
  }
  AddPodGroupDecisions(s, world, waiting, out);
  AddStaleBindRequests(snap, world, out);
  return out;
}

}  // namespace kai::scheduler
