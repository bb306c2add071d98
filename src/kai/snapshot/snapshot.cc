#include "kai/snapshot/snapshot.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

#include "kai/k8s/keys.h"

namespace kai {
namespace {

struct BindInfo {
  std::string_view node;
  const BindRequestObject* obj;
};

// Objects are looked up by (namespace, name) without building key strings.
using NsName = std::pair<std::string_view, std::string_view>;
struct NsNameHash {
  size_t operator()(const NsName& k) const {
    const size_t a = std::hash<std::string_view>()(k.first);
    return a ^
           (std::hash<std::string_view>()(k.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};
template <class V>
using NsNameMap = std::unordered_map<NsName, V, NsNameHash>;

NsNameMap<BindInfo> LiveBindRequests(const ClusterState& state) {
  NsNameMap<BindInfo> out;
  for (const auto& b : state.bind_requests) {
    if (b.phase == "Failed") continue;  // KAI: a failed request with no backoff limit is final
    out[{b.meta.ns, b.pod_name}] = BindInfo{b.selected_node, &b};
  }
  return out;
}

PodStatus DerivePodStatus(const PodObject& p, bool has_bind_request, UnixSeconds now) {
  if (p.phase == "Succeeded") return PodStatus::kSucceeded;
  if (p.phase == "Failed") return PodStatus::kFailed;
  if (p.meta.deletion) {
    if (p.phase == "Running" && now - *p.meta.deletion >= keys::kStuckInReleasingSeconds) {
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
  if (auto it = p.meta.labels.find(keys::kTaskPriorityLabel); it != p.meta.labels.end()) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec == std::errc() && ptr == it->second.data() + it->second.size()) {
      sp.task_priority = v;
    } else {
      sp.task_priority_invalid = true;
    }
  }
  auto role = p.meta.labels.find(keys::kKubeflowJobRole);
  if (role != p.meta.labels.end() && (role->second == "master" || role->second == "launcher")) {
    sp.role_rank = 0;
  } else if (auto ray = p.meta.labels.find(keys::kRayNodeType);
             ray != p.meta.labels.end() && ray->second == "head") {
    sp.role_rank = 1;
  }
}

void BuildNodes(const ClusterState& state, Snapshot& snap) {
  snap.nodes.reserve(state.nodes.size());
  for (const auto& n : state.nodes) {
    SnapNode sn;
    sn.obj = &n;
    sn.name = n.meta.name;
    sn.allocatable = n.allocatable;
    sn.idle = n.allocatable;
    if (auto it = n.meta.labels.find(keys::kNodeGpuMemory); it != n.meta.labels.end()) {
      int64_t mib = 0;
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), mib);
      if (mib > 0) sn.gpu_memory_mib = mib / 100 * 100;
    }
    if (!n.ready) {
      sn.unusable_reason = "NotReady";
    } else if (n.unschedulable) {
      sn.unusable_reason = "Unschedulable";
    } else if (!n.bad_conditions.empty()) {
      sn.unusable_reason = n.bad_conditions.front();
    }
    snap.node_by_name[sn.name] = static_cast<NodeId>(snap.nodes.size());
    snap.nodes.push_back(std::move(sn));
  }
}

void BuildQueues(const ClusterState& state, Snapshot& snap) {
  for (const auto& q : state.queues) {
    SnapQueue sq;
    sq.obj = &q;
    sq.name = q.meta.name;
    sq.priority = q.priority.value_or(keys::kDefaultQueuePriority);
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
  return global ? global->value : keys::kDefaultJobPriority;
}

void BuildJobs(const ClusterState& state, Snapshot& snap, NsNameMap<JobId>& job_by_key) {
  snap.jobs.reserve(state.pod_groups.size());
  job_by_key.reserve(state.pod_groups.size());
  for (const auto& pg : state.pod_groups) {
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
    } else {
      j.preemptible = j.priority < keys::kNonPreemptiblePriority;
    }
    j.min_member = pg.min_member.value_or(1);
    j.creation = pg.meta.creation.value_or(0);
    j.last_start = pg.last_start;
    j.stale_since = pg.stale_since;
    job_by_key[{pg.meta.ns, pg.meta.name}] = static_cast<JobId>(snap.jobs.size());
    snap.jobs.push_back(std::move(j));
  }
}

void BuildPods(const ClusterState& state, Snapshot& snap, const NsNameMap<JobId>& job_by_key) {
  const auto binds = LiveBindRequests(state);
  snap.pods.reserve(state.pods.size());
  for (const auto& p : state.pods) {
    auto bind = binds.empty() ? binds.end() : binds.find({p.meta.ns, p.meta.name});
    SnapPod sp;
    sp.obj = &p;
    sp.ns = p.meta.ns;
    sp.name = p.meta.name;
    sp.uid = p.meta.uid;
    sp.request = p.request;
    sp.creation = p.meta.creation.value_or(0);
    sp.gpu_groups = p.gpu_groups;
    sp.kai_scheduled = p.scheduler_name == keys::kSchedulerName;
    if (auto app = p.meta.labels.find("app"); app != p.meta.labels.end()) {
      sp.kai_utility = app->second == keys::kReservationAppLabel;
    }
    sp.status = DerivePodStatus(p, bind != binds.end(), snap.now);
    std::string_view node_name = p.node_name;
    if (sp.status == PodStatus::kBinding) {
      node_name = bind->second.node;
      if (!bind->second.obj->selected_gpu_groups.empty()) {
        sp.gpu_groups = bind->second.obj->selected_gpu_groups;
      }
    }
    if (auto it = snap.node_by_name.find(node_name); it != snap.node_by_name.end()) {
      sp.node = it->second;
    }
    FillTaskOrderKeys(p, sp);
    const auto pid = static_cast<PodId>(snap.pods.size());
    if (!p.pod_group.empty() && sp.kai_scheduled) {
      if (auto j = job_by_key.find({p.meta.ns, p.pod_group}); j != job_by_key.end()) {
        sp.job = j->second;
        snap.jobs[j->second].pods.push_back(pid);
        if (IsActiveAllocated(sp.status)) ++snap.jobs[j->second].active_allocated;
      }
    }
    if (sp.node != kNone && IsActiveUsed(sp.status)) {
      AddPodToNode(snap.nodes[sp.node], sp.request, sp.status);
      snap.nodes[sp.node].pods.push_back(pid);
    }
    snap.pods.push_back(std::move(sp));
  }
}

// Resources a node does not offer are not tracked on it (KAI zeroes them).
Resources Tracked(const SnapNode& node, const Resources& request) {
  Resources r = request;
  if (node.allocatable.milli_cpu == 0) r.milli_cpu = 0;
  if (node.allocatable.memory == 0) r.memory = 0;
  if (node.allocatable.milli_gpu == 0) r.milli_gpu = 0;
  if (node.allocatable.pods == 0) r.pods = 0;
  if (!r.scalars.empty()) {
    std::erase_if(r.scalars, [&](const auto& e) { return node.allocatable.Scalar(e.first) == 0; });
  }
  return r;
}

}  // namespace

std::string_view PodStatusName(PodStatus s) {
  static constexpr std::string_view kNames[] = {
      "Pending", "Gated",     "Allocated",        "Pipelined", "Binding", "Bound",
      "Running", "Releasing", "StuckInReleasing", "Succeeded", "Failed"};
  return kNames[static_cast<int>(s)];
}

bool IsAllocated(PodStatus s) {
  return s == PodStatus::kAllocated || s == PodStatus::kBinding || s == PodStatus::kBound ||
         s == PodStatus::kRunning;
}

bool IsActiveAllocated(PodStatus s) { return IsAllocated(s) || s == PodStatus::kPipelined; }

bool IsActiveUsed(PodStatus s) {
  return IsActiveAllocated(s) || s == PodStatus::kReleasing || s == PodStatus::kStuckInReleasing;
}

bool IsAlive(PodStatus s) {
  return IsActiveAllocated(s) || s == PodStatus::kPending || s == PodStatus::kGated;
}

const QueueQuota& SnapQueue::Quota(CoreResource r) const {
  switch (r) {
    case CoreResource::kCpu:
      return cpu;
    case CoreResource::kMemory:
      return memory;
    default:
      return gpu;
  }
}

Resources Snapshot::TotalCapacity() const {
  Resources total;
  for (const auto& n : nodes) {
    if (n.unusable_reason.empty()) total += n.allocatable;
  }
  return total;
}

void AddPodToNode(SnapNode& node, const Resources& request, PodStatus status) {
  const Resources r = Tracked(node, request);
  node.used += r;
  if (status == PodStatus::kReleasing) {
    node.releasing += r;
    node.idle -= r;
  } else if (status == PodStatus::kPipelined) {
    node.releasing -= r;
  } else {
    node.idle -= r;
  }
}

void RemovePodFromNode(SnapNode& node, const Resources& request, PodStatus status) {
  const Resources r = Tracked(node, request);
  node.used -= r;
  if (status == PodStatus::kReleasing) {
    node.releasing -= r;
    node.idle += r;
  } else if (status == PodStatus::kPipelined) {
    node.releasing += r;
  } else {
    node.idle += r;
  }
}

bool IsCpuOnly(const SnapPod& pod) {
  if (pod.request.milli_gpu > 0 || pod.obj->gpu_sharing.IsShared()) return false;
  for (const auto& [id, amount] : pod.request.scalars) {
    if (ResourceName(id).starts_with(keys::kMigResourcePrefix)) return false;
  }
  return true;
}

bool IsGpuNode(const SnapNode& node) {
  if (node.allocatable.milli_gpu > 0) return true;
  for (const auto& [id, amount] : node.allocatable.scalars) {
    if (ResourceName(id).starts_with(keys::kMigResourcePrefix)) return true;
  }
  return false;
}

Snapshot BuildSnapshot(const ClusterState& state, UnixSeconds now) {
  Snapshot snap;
  snap.now = now;
  BuildNodes(state, snap);
  BuildQueues(state, snap);
  NsNameMap<JobId> job_by_key;
  BuildJobs(state, snap, job_by_key);
  BuildPods(state, snap, job_by_key);
  std::vector<int32_t> order(snap.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return snap.nodes[a].name < snap.nodes[b].name; });
  snap.node_name_rank.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) snap.node_name_rank[order[i]] = static_cast<int32_t>(i);
  for (const TopologyObject& t : state.topologies) snap.topologies.push_back(&t);
  return snap;
}

}  // namespace kai
