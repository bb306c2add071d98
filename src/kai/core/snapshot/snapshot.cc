#include "kai/core/snapshot/snapshot.h"

#include "kai/core/snapshot/storage.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "kai/core/snapshot/derive.h"
#include "kai/core/snapshot/dra.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai {
namespace snapshot_detail {

size_t NsNameHash::operator()(const NsName& k) const {
  const size_t a = std::hash<std::string_view>()(k.first);
  return a ^
         (std::hash<std::string_view>()(k.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
}

NsNameMap<BindInfo> LiveBindRequests(const ClusterState& state) {
  NsNameMap<BindInfo> out;
  for (const auto& b : state.bind_requests) {
    if (b.phase == "Failed") continue;  // KAI: a failed request with no backoff limit is final
    out[{b.meta.ns, b.pod_name}] = BindInfo{b.selected_node, &b};
  }
  return out;
}

}  // namespace snapshot_detail

namespace {

using namespace snapshot_detail;

PodStatus DerivePodStatus(const PodObject& p, bool has_bind_request, UnixSeconds now) {
  if (p.phase == "Succeeded") return PodStatus::kSucceeded;
  if (p.phase == "Failed") return PodStatus::kFailed;
  if (p.meta.deletion) {
    if (p.phase == "Running" && now - *p.meta.deletion >= kStuckInReleasingSeconds) {
      return PodStatus::kStuckInReleasing;
    }
    return PodStatus::kReleasing;
  }
  if (p.phase == "Running") return PodStatus::kRunning;
  if (!p.node_name.empty()) return PodStatus::kBound;
  if (has_bind_request) return PodStatus::kBinding;
  if (p.scheduling_gated) return PodStatus::kGated;
  return PodStatus::kPending;
}

void FillTaskOrderKeys(const PodObject& p, SnapPod& sp) {
  sp.task_priority = p.task_priority;
  sp.task_priority_invalid = p.task_priority_invalid;
  sp.role_rank = p.role_rank;
}

// GPU memory, device count and MIG mode of a node (read from its labels when it was decoded).
void FillGpuInfo(const NodeObject& n, SnapNode& sn) {
  if (n.gpu_memory_mib) {
    sn.gpu_memory_mib = *n.gpu_memory_mib;
    sn.gpu_memory_synced = true;
  }
  sn.gpu_devices = n.gpu_count.value_or(n.allocatable.milli_gpu / kMilliPerUnit);
  if (n.mig_enabled) {
    sn.mig_enabled = *n.mig_enabled;
  } else {
    for (const auto& [id, amount] : n.allocatable.scalars) {
      if (amount > 0 && ResourceName(id).starts_with(kMigResourcePrefix)) sn.mig_enabled = true;
    }
  }
  if (sn.mig_enabled) sn.mig_strategy = n.mig_strategy;
}

GpuShare ShareOf(const PodObject& p) {
  GpuShare share;
  const GpuSharingRequest& g = p.gpu_sharing;
  if (g.fraction_milli > 0) {
    share.kind = GpuShareKind::kFraction;  // a fraction wins over gpu-memory (KAI)
    share.portion_milli = g.fraction_milli;
  } else if (g.memory_mib > 0) {
    share.kind = GpuShareKind::kMemory;
    share.memory_mib = g.memory_mib;
  }
  if (share.IsShared()) share.devices = g.num_devices;
  return share;
}

// A MIG request written as an annotation (KAI's legacy MIG pods): counted on its node, never
// scheduled.
void ApplyLegacyMig(const PodObject& p, SnapPod& sp) {
  for (const auto& [resource, count] : p.legacy_mig) {
    sp.legacy_mig = true;
    sp.request.SetScalar(InternResource(resource), count);
  }
}

void BuildNodes(const ClusterState& state, Snapshot& snap) {
  snap.nodes.reserve(state.nodes.size());
  for (const auto& n : state.nodes) {
    snap.node_by_name[n.meta.name] = static_cast<NodeId>(snap.nodes.size());
    snap.nodes.push_back(DeriveNode(n));
  }
}

void BuildQueues(const ClusterState& state, Snapshot& snap) {
  for (const auto& q : state.queues) {
    SnapQueue sq;
    sq.obj = &q;
    sq.name = q.meta.name;
    sq.priority = q.priority.value_or(kDefaultQueuePriority);
    sq.gpu = {q.gpu.quota, q.gpu.limit, q.gpu.weight_milli};
    sq.cpu = {q.cpu.quota, q.cpu.limit, q.cpu.weight_milli};
    sq.memory = {q.memory.quota, q.memory.limit, q.memory.weight_milli};
    sq.creation = q.meta.creation.value_or(0);
    snap.queue_by_name[sq.name] = static_cast<QueueId>(snap.queues.size());
    snap.queues.push_back(std::move(sq));
  }
  for (QueueId id = 0; id < static_cast<QueueId>(snap.queues.size()); ++id) {
    SnapQueue& q = snap.queues[id];
    auto it =
        q.obj->parent.empty() ? snap.queue_by_name.end() : snap.queue_by_name.find(q.obj->parent);
    if (it == snap.queue_by_name.end()) {
      snap.root_queues.push_back(id);
    } else {
      q.parent = it->second;
      snap.queues[it->second].children.push_back(id);
    }
  }
}

int JobPriority(const ClusterState& state, const PodGroupObject& pg) {
  const PriorityClassObject* global = nullptr;
  for (const auto& pc : state.priority_classes) {
    if (pc.meta.name == pg.priority_class_name) return pc.value;
    if (pc.global_default) global = &pc;
  }
  return global ? global->value : kDefaultJobPriority;
}

SnapSubGroup FromSpec(const SubGroupSpec& spec, SubGroupIndex parent) {
  SnapSubGroup sg;
  sg.name = spec.name;
  sg.parent = parent;
  sg.min_sub_group = spec.min_sub_group;
  sg.min_member = std::max(0, spec.min_member.value_or(0));
  sg.topology = spec.topology_constraint ? &*spec.topology_constraint : nullptr;
  return sg;
}

// KAI's subgroup_info/factory.go: entries with children are SubGroupSets (their minMember is
// ignored), the others PodSets. Laid out breadth first from the root, so that each set's members
// are contiguous. Validation rejected unknown parents and cycles; such entries would not be
// reached from the root and are left out.
void BuildSubGroupTree(const PodGroupObject& pg, SnapJob& j) {
  SnapSubGroup root;
  root.min_sub_group = pg.min_sub_group;
  root.topology = pg.topology_constraint ? &*pg.topology_constraint : nullptr;
  root.first_member = 1;
  j.has_sub_groups = !pg.sub_groups.empty();
  if (!j.has_sub_groups) {
    j.sub_groups.reserve(2);
    root.member_count = 1;
    j.sub_groups.push_back(std::move(root));
    SnapSubGroup flat;
    flat.name = kDefaultSubGroup;
    flat.parent = kRootSubGroup;
    flat.pod_set = true;
    flat.min_member = pg.min_member.value_or(1);
    j.sub_groups.push_back(std::move(flat));
    return;
  }
  // kids[0]: the root's entries; kids[i + 1]: those of spec entry i.
  const size_t n = pg.sub_groups.size();
  std::unordered_map<std::string_view, size_t> key_of;
  for (size_t i = 0; i < n; ++i) key_of.emplace(pg.sub_groups[i].name, i + 1);
  std::vector<std::vector<size_t>> kids(n + 1);
  for (size_t i = 0; i < n; ++i) {
    const std::string& parent = pg.sub_groups[i].parent;
    auto it = parent.empty() ? key_of.end() : key_of.find(parent);
    if (!parent.empty() && it == key_of.end()) continue;
    kids[parent.empty() ? 0 : it->second].push_back(i);
  }
  j.sub_groups.reserve(n + 1);
  j.sub_groups.push_back(std::move(root));
  std::vector<size_t> key_at = {0};  // kids index of each laid-out SubGroup
  for (size_t at = 0; at < j.sub_groups.size() && j.sub_groups.size() <= n + 1; ++at) {
    const std::vector<size_t>& members = kids[key_at[at]];
    j.sub_groups[at].first_member = static_cast<SubGroupIndex>(j.sub_groups.size());
    j.sub_groups[at].member_count = static_cast<int32_t>(members.size());
    for (size_t spec : members) {
      j.sub_groups.push_back(FromSpec(pg.sub_groups[spec], static_cast<SubGroupIndex>(at)));
      key_at.push_back(spec + 1);
    }
  }
  for (size_t i = 1; i < j.sub_groups.size(); ++i) {
    SnapSubGroup& sg = j.sub_groups[i];
    sg.pod_set = sg.member_count == 0;
    if (!sg.pod_set) sg.min_member = 0;
  }
}

// The PodSet a pod joins, or kNone when its PodGroup has no PodSet of that name.
SubGroupIndex PodSetOf(const PodObject& p, const SnapJob& job) {
  const std::string_view name = p.sub_group.empty() ? kDefaultSubGroup : p.sub_group.view();
  for (size_t i = 1; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& sg = job.sub_groups[i];
    if (sg.pod_set && sg.name == name) return static_cast<SubGroupIndex>(i);
  }
  return kNone;
}

void BuildJobs(const ClusterState& state, Snapshot& snap, NsNameMap<JobId>& job_by_key) {
  snap.jobs.reserve(state.pod_groups.size());
  job_by_key.reserve(state.pod_groups.size());
  for (const auto& pg : state.pod_groups) {
    job_by_key[{pg.meta.ns, pg.meta.name}] = static_cast<JobId>(snap.jobs.size());
    snap.jobs.push_back(DeriveJob(state, snap, pg));
  }
}

// devices x memory / device memory, in milli-GPU rounded up.
int64_t MemoryAsMilliGpu(const GpuShare& share, int64_t device_mib) {
  const int64_t total = share.memory_mib * share.devices * kMilliPerUnit;
  return (total + device_mib - 1) / device_mib;
}

}  // namespace

namespace snapshot_detail {

SnapNode DeriveNode(const NodeObject& n) {
  SnapNode sn;
  sn.obj = &n;
  sn.name = n.meta.name;
  sn.allocatable = n.allocatable;
  sn.idle = n.allocatable;
  FillGpuInfo(n, sn);
  if (!n.ready) {
    sn.unusable_reason = "NotReady";
  } else if (n.unschedulable) {
    sn.unusable_reason = "Unschedulable";
  } else if (!n.bad_conditions.empty()) {
    sn.unusable_reason = n.bad_conditions.front();
  }
  return sn;
}

SnapJob DeriveJob(const ClusterState& state, const Snapshot& snap, const PodGroupObject& pg) {
  SnapJob j;
  j.obj = &pg;
  j.ns = pg.meta.ns;
  j.name = pg.meta.name;
  j.uid = pg.meta.uid;
  auto q = snap.queue_by_name.find(pg.queue);
  j.queue = q == snap.queue_by_name.end() ? kNone : q->second;
  j.priority = JobPriority(state, pg);
  if (pg.preemptibility == "preemptible") {
    j.preemptible = true;
  } else if (pg.preemptibility == "non-preemptible") {
    j.preemptible = false;
  } else if (pg.preemptibility == "semi-preemptible") {
    j.preemptible = false;
    j.semi_preemptible = true;
  } else {
    j.preemptible = j.priority < kNonPreemptiblePriority;
  }
  j.min_member = pg.min_member.value_or(1);
  j.creation = pg.meta.creation.value_or(0);
  j.last_start = pg.last_start;
  j.stale_since = pg.stale_since;
  BuildSubGroupTree(pg, j);
  return j;
}

// Smallest and largest per-device GPU memory among nodes that report more than KAI's 100 MiB
// placeholder; both 100 when none does (KAI's test harness; a real cluster reports real sizes).
std::pair<int64_t, int64_t> GpuMemoryRange(const Snapshot& snap) {
  constexpr int64_t kPlaceholder = 100;
  int64_t lo = 0, hi = 0;
  for (const SnapNode& n : snap.nodes) {
    if (n.gpu_memory_mib <= kPlaceholder) continue;
    lo = lo == 0 ? n.gpu_memory_mib : std::min(lo, n.gpu_memory_mib);
    hi = std::max(hi, n.gpu_memory_mib);
  }
  return lo == 0 ? std::pair{kPlaceholder, kPlaceholder} : std::pair{lo, hi};
}

void PointAt(SnapPod& sp, const PodObject& p) {
  sp.obj = &p;
  sp.ns = p.meta.ns;
  sp.name = p.meta.name;
  sp.uid = p.meta.uid;
}

namespace {

// A pod labelled background whose place the session can give away and take back as plain
// resources: not a reservation pod, no shared GPU, MIG annotation or DRA claim (those places are
// devices, which kai does not yet hand back; docs/deviations.md). NUMA zones: see
// actions/common/background.cc.
bool IsBackground(const PodObject& p, const SnapPod& sp) {
  return p.background && !sp.kai_utility && !sp.share.IsShared() && !sp.legacy_mig &&
         p.resource_claims.empty();
}

}  // namespace

SnapPod DerivePod(const Snapshot& snap, const PodObject& p, const PodContext& ctx) {
  const auto& binds = *ctx.binds;
  auto bind = binds.empty() ? binds.end() : binds.find({p.meta.ns, p.meta.name});
  SnapPod sp;
  PointAt(sp, p);
  sp.request = p.request;
  sp.creation = p.meta.creation.value_or(0);
  sp.gpu_groups = p.gpu_groups;
  sp.share = ShareOf(p);
  if (sp.share.kind == GpuShareKind::kMemory) {
    sp.memory_request_milli_gpu = MemoryAsMilliGpu(sp.share, ctx.memory_range.first);
    sp.memory_capacity_milli_gpu = MemoryAsMilliGpu(sp.share, ctx.memory_range.second);
  }
  ApplyLegacyMig(p, sp);
  if (snap.dra) {
    if (const DraPod* dp = snap.dra->PodOf(p)) sp.request.milli_gpu += dp->charged_milli_gpu;
  }
  sp.accepted_milli_gpu = RequestedMilliGpu(sp);
  sp.kai_scheduled = p.scheduler_name == ctx.scheduler_name;
  sp.kai_utility = p.reservation;
  sp.background = IsBackground(p, sp);
  sp.status = DerivePodStatus(p, bind != binds.end(), ctx.now);
  std::string_view node_name = p.node_name;
  if (sp.status == PodStatus::kBinding) {
    node_name = bind->second.node;
    if (!bind->second.obj->selected_gpu_groups.empty()) {
      sp.gpu_groups = bind->second.obj->selected_gpu_groups;
    }
  }
  auto node_named = [&](std::string_view name) {
    auto it = snap.node_by_name.find(name);
    return it == snap.node_by_name.end() ? kNone : it->second;
  };
  sp.node = node_named(node_name);
  sp.nominated = node_named(p.nominated_node);
  sp.selects_nodes = !p.node_selector.empty() || !p.required_node_affinity.empty();
  sp.uses_host_ports = !p.host_ports.empty();
  sp.uses_claims = !p.volume_claims.empty();
  sp.requires_pod_affinity =
      !p.required_pod_affinity.empty() || !p.required_pod_anti_affinity.empty();
  sp.prefers_pod_affinity =
      !p.preferred_pod_affinity.empty() || !p.preferred_pod_anti_affinity.empty();
  FillTaskOrderKeys(p, sp);
  return sp;
}

Membership MembershipOf(const Snapshot& snap, const NsNameMap<JobId>& job_by_key,
                        const SnapPod& pod) {
  const PodObject& p = *pod.obj;
  Membership m;
  if (p.pod_group.empty() || !pod.kai_scheduled || pod.background) return m;
  auto j = job_by_key.find({p.meta.ns, p.pod_group});
  if (j == job_by_key.end()) return m;
  const SubGroupIndex set = PodSetOf(p, snap.jobs[j->second]);
  if (set == kNone) {
    m.invalid_in = j->second;
  } else {
    m.job = j->second;
    m.sub_group = set;
  }
  return m;
}

}  // namespace snapshot_detail

namespace {

void BuildPods(const ClusterState& state, Snapshot& snap, const NsNameMap<JobId>& job_by_key) {
  const auto binds = LiveBindRequests(state);
  const PodContext ctx{&binds, GpuMemoryRange(snap), snap.now, state.scheduler_name};
  snap.pods.reserve(state.pods.size());
  for (const auto& p : state.pods) {
    SnapPod sp = DerivePod(snap, p, ctx);
    const auto pid = static_cast<PodId>(snap.pods.size());
    const Membership m = MembershipOf(snap, job_by_key, sp);
    if (m.invalid_in != kNone) snap.jobs[m.invalid_in].invalid_sub_group_pods.push_back(pid);
    if (m.job != kNone) {
      sp.job = m.job;
      sp.sub_group = m.sub_group;
      SnapJob& job = snap.jobs[m.job];
      SnapSubGroup& set = job.sub_groups[sp.sub_group];
      job.pods.push_back(pid);
      if (job.has_sub_groups) set.set_pods.push_back(pid);
      if (IsActiveAllocated(sp.status)) {
        ++job.active_allocated;
        ++set.active_allocated;
      }
    }
    if (sp.node != kNone && IsActiveUsed(sp.status)) {
      AddPodToNode(snap.nodes[sp.node], sp, sp.status);
      snap.nodes[sp.node].pods.push_back(pid);
    }
    if (sp.background) snap.background_pods.push_back(pid);
    snap.pods.push_back(std::move(sp));
  }
}

}  // namespace

std::string_view PodStatusName(PodStatus s) {
  static constexpr std::string_view kNames[] = {
      "Pending", "Gated",     "Allocated",        "Pipelined", "Binding", "Bound",
      "Running", "Releasing", "StuckInReleasing", "Succeeded", "Failed"};
  return kNames[static_cast<int>(s)];
}

std::optional<UnixSeconds> SnapJob::PreemptionDelayEnd() const {
  if (!obj->preemption_delay_seconds) return std::nullopt;
  UnixSeconds since = creation;
  if (obj->last_eviction) since = std::max(since, *obj->last_eviction);
  return since + *obj->preemption_delay_seconds;
}

int SnapJob::MinAvailable() const {
  int sum = 0;
  for (const SnapSubGroup& sg : sub_groups) sum += sg.pod_set ? sg.min_member : 0;
  return sum;
}

Resources Snapshot::TotalCapacity() const {
  Resources total;
  for (const auto& n : nodes) {
    if (n.unusable_reason.empty()) total += n.allocatable;
  }
  return total;
}

Snapshot BuildSnapshot(const ClusterState& state, UnixSeconds now) {
  Snapshot snap;
  snap.now = now;
  BuildNodes(state, snap);
  if (!state.dra.empty()) {
    snap.dra = BuildDraView(state, snap);
    AddDraGpusToNodes(*snap.dra, snap);
  }
  if (!state.storage.empty()) snap.storage = BuildStorageView(state.storage);
  BuildQueues(state, snap);
  NsNameMap<JobId> job_by_key;
  BuildJobs(state, snap, job_by_key);
  BuildPods(state, snap, job_by_key);
  SeedSemiPreemptibleFloors(snap);
  std::vector<int32_t> order(snap.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return snap.nodes[a].name < snap.nodes[b].name; });
  snap.node_name_rank.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) snap.node_name_rank[order[i]] = static_cast<int32_t>(i);
  for (const TopologyObject& t : state.topologies) snap.topologies.push_back(&t);
  BuildNuma(state, snap);
  return snap;
}

}  // namespace kai
