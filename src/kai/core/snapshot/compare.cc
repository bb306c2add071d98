#include "kai/core/snapshot/compare.h"

#include <sstream>

namespace kai {
namespace {

template <class T>
std::string Show(const T& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
std::string Show(const Resources& r) { return ToString(r); }
std::string Show(std::string_view v) { return "\"" + std::string(v) + "\""; }
std::string Show(const std::string& v) { return Show(std::string_view(v)); }
std::string Show(bool v) { return v ? "true" : "false"; }
std::string Show(PodStatus s) { return std::string(PodStatusName(s)); }
template <class T>
std::string Show(const std::optional<T>& v) {
  return v ? Show(*v) : "unset";
}
template <class T>
std::string Show(const T* p) {
  return p ? "object@" + std::to_string(reinterpret_cast<uintptr_t>(p)) : "null";
}
template <class T>
std::string Show(const std::vector<T>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + Show(v[i]);
  return out + "]";
}
template <class T, size_t N>
std::string Show(const std::array<T, N>& v) {
  return Show(std::vector<T>(v.begin(), v.end()));
}
template <class T>
std::string Show(const std::vector<T*>& v) {
  return "[" + std::to_string(v.size()) + " pointers]";
}
std::string Show(MigStrategy m) { return std::to_string(static_cast<int>(m)); }
std::string Show(GpuShareKind k) { return std::to_string(static_cast<int>(k)); }
std::string Show(const QueueQuota& q) {
  return std::to_string(q.quota) + "/" + std::to_string(q.limit) + "/" +
         std::to_string(q.weight_milli);
}
bool operator==(const QueueQuota& a, const QueueQuota& b) {
  return a.quota == b.quota && a.limit == b.limit && a.weight_milli == b.weight_milli;
}

// Collects differences, each as "<object>: <field> <want> != <got>".
class Diff {
 public:
  explicit Diff(int limit) : limit_(limit) {}
  template <class T>
  void Field(const std::string& object, const char* field, const T& want, const T& got) {
    if (want == got || full()) return;
    out_ += object + ": " + field + " " + Show(want) + " != " + Show(got) + "\n";
    ++count_;
  }
  bool full() const { return count_ >= limit_; }
  std::string Take() { return std::move(out_); }

 private:
  int limit_;
  int count_ = 0;
  std::string out_;
};

#define KAI_FIELD(d, obj, w, g, f) d.Field(obj, #f, w.f, g.f)

void CompareGroups(Diff& d, const std::string& obj, const std::vector<GpuGroup>& want,
                   const std::vector<GpuGroup>& got) {
  d.Field(obj, "gpu_groups.size", want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    const std::string o = obj + " group " + want[i].name;
    KAI_FIELD(d, o, want[i], got[i], name);
    KAI_FIELD(d, o, want[i], got[i], used);
    KAI_FIELD(d, o, want[i], got[i], releasing);
    KAI_FIELD(d, o, want[i], got[i], allocated);
    KAI_FIELD(d, o, want[i], got[i], has_allocated);
    KAI_FIELD(d, o, want[i], got[i], marked_releasing);
  }
}

void CompareNode(Diff& d, const SnapNode& w, const SnapNode& g, size_t i) {
  const std::string o = "node " + std::string(w.name) + " (" + std::to_string(i) + ")";
  KAI_FIELD(d, o, w, g, obj);
  KAI_FIELD(d, o, w, g, name);
  KAI_FIELD(d, o, w, g, allocatable);
  KAI_FIELD(d, o, w, g, idle);
  KAI_FIELD(d, o, w, g, releasing);
  KAI_FIELD(d, o, w, g, used);
  KAI_FIELD(d, o, w, g, gpu_memory_mib);
  KAI_FIELD(d, o, w, g, gpu_memory_synced);
  KAI_FIELD(d, o, w, g, gpu_devices);
  KAI_FIELD(d, o, w, g, mig_enabled);
  KAI_FIELD(d, o, w, g, mig_strategy);
  KAI_FIELD(d, o, w, g, legacy_mig_pods);
  CompareGroups(d, o, w.gpu_groups, g.gpu_groups);
  KAI_FIELD(d, o, w, g, max_group_room);
  KAI_FIELD(d, o, w, g, unusable_reason);
  KAI_FIELD(d, o, w, g, pods);
}

void ComparePod(Diff& d, const SnapPod& w, const SnapPod& g, size_t i) {
  const std::string o =
      "pod " + std::string(w.ns) + "/" + std::string(w.name) + " (" + std::to_string(i) + ")";
  KAI_FIELD(d, o, w, g, obj);
  KAI_FIELD(d, o, w, g, ns);
  KAI_FIELD(d, o, w, g, name);
  KAI_FIELD(d, o, w, g, uid);
  KAI_FIELD(d, o, w, g, job);
  KAI_FIELD(d, o, w, g, node);
  KAI_FIELD(d, o, w, g, nominated);
  KAI_FIELD(d, o, w, g, selects_nodes);
  KAI_FIELD(d, o, w, g, requires_pod_affinity);
  KAI_FIELD(d, o, w, g, prefers_pod_affinity);
  KAI_FIELD(d, o, w, g, uses_host_ports);
  KAI_FIELD(d, o, w, g, uses_claims);
  KAI_FIELD(d, o, w, g, status);
  KAI_FIELD(d, o, w, g, request);
  KAI_FIELD(d, o, w, g, task_priority);
  KAI_FIELD(d, o, w, g, task_priority_invalid);
  KAI_FIELD(d, o, w, g, role_rank);
  KAI_FIELD(d, o, w, g, creation);
  KAI_FIELD(d, o, w, g, gpu_groups);
  KAI_FIELD(d, o, w, g, share.kind);
  KAI_FIELD(d, o, w, g, share.portion_milli);
  KAI_FIELD(d, o, w, g, share.memory_mib);
  KAI_FIELD(d, o, w, g, share.devices);
  KAI_FIELD(d, o, w, g, legacy_mig);
  KAI_FIELD(d, o, w, g, accepted_milli_gpu);
  KAI_FIELD(d, o, w, g, memory_request_milli_gpu);
  KAI_FIELD(d, o, w, g, memory_capacity_milli_gpu);
  KAI_FIELD(d, o, w, g, kai_scheduled);
  KAI_FIELD(d, o, w, g, virtually_evicted);
  KAI_FIELD(d, o, w, g, kai_utility);
  KAI_FIELD(d, o, w, g, background);
  KAI_FIELD(d, o, w, g, sub_group);
  KAI_FIELD(d, o, w, g, in_floor);
}

void CompareSubGroup(Diff& d, const std::string& job, const SnapSubGroup& w, const SnapSubGroup& g,
                     size_t i) {
  const std::string o = job + " subgroup " + std::to_string(i);
  KAI_FIELD(d, o, w, g, name);
  KAI_FIELD(d, o, w, g, parent);
  KAI_FIELD(d, o, w, g, first_member);
  KAI_FIELD(d, o, w, g, member_count);
  KAI_FIELD(d, o, w, g, pod_set);
  KAI_FIELD(d, o, w, g, min_member);
  KAI_FIELD(d, o, w, g, min_sub_group);
  KAI_FIELD(d, o, w, g, topology);
  KAI_FIELD(d, o, w, g, set_pods);
  KAI_FIELD(d, o, w, g, active_allocated);
  KAI_FIELD(d, o, w, g, floor_pods);
}

void CompareJob(Diff& d, const SnapJob& w, const SnapJob& g, size_t i) {
  const std::string o =
      "job " + std::string(w.ns) + "/" + std::string(w.name) + " (" + std::to_string(i) + ")";
  KAI_FIELD(d, o, w, g, obj);
  KAI_FIELD(d, o, w, g, ns);
  KAI_FIELD(d, o, w, g, name);
  KAI_FIELD(d, o, w, g, uid);
  KAI_FIELD(d, o, w, g, queue);
  KAI_FIELD(d, o, w, g, priority);
  KAI_FIELD(d, o, w, g, preemptible);
  KAI_FIELD(d, o, w, g, semi_preemptible);
  KAI_FIELD(d, o, w, g, min_member);
  KAI_FIELD(d, o, w, g, creation);
  KAI_FIELD(d, o, w, g, pods);
  KAI_FIELD(d, o, w, g, invalid_sub_group_pods);
  KAI_FIELD(d, o, w, g, last_start);
  KAI_FIELD(d, o, w, g, stale_since);
  KAI_FIELD(d, o, w, g, active_allocated);
  KAI_FIELD(d, o, w, g, has_sub_groups);
  d.Field(o, "sub_groups.size", w.sub_groups.size(), g.sub_groups.size());
  for (size_t k = 0; k < w.sub_groups.size() && k < g.sub_groups.size(); ++k) {
    CompareSubGroup(d, o, w.sub_groups[k], g.sub_groups[k], k);
  }
}

void CompareQueue(Diff& d, const SnapQueue& w, const SnapQueue& g, size_t i) {
  const std::string o = "queue " + std::string(w.name) + " (" + std::to_string(i) + ")";
  KAI_FIELD(d, o, w, g, obj);
  KAI_FIELD(d, o, w, g, name);
  KAI_FIELD(d, o, w, g, parent);
  KAI_FIELD(d, o, w, g, children);
  KAI_FIELD(d, o, w, g, priority);
  KAI_FIELD(d, o, w, g, gpu);
  KAI_FIELD(d, o, w, g, cpu);
  KAI_FIELD(d, o, w, g, memory);
  KAI_FIELD(d, o, w, g, creation);
  KAI_FIELD(d, o, w, g, fair_share);
  KAI_FIELD(d, o, w, g, allocated);
  KAI_FIELD(d, o, w, g, allocated_non_preemptible);
  KAI_FIELD(d, o, w, g, requested);
  KAI_FIELD(d, o, w, g, usage);
}

template <class T, class F>
void CompareAll(Diff& d, const char* what, const std::vector<T>& want, const std::vector<T>& got,
                F compare) {
  d.Field("snapshot", what, want.size(), got.size());
  for (size_t i = 0; i < want.size() && i < got.size() && !d.full(); ++i) {
    compare(d, want[i], got[i], i);
  }
}

template <class K, class V>
void CompareMap(Diff& d, const char* what, const std::unordered_map<K, V>& want,
                const std::unordered_map<K, V>& got) {
  d.Field("snapshot", what, want.size(), got.size());
  for (const auto& [k, v] : want) {
    auto it = got.find(k);
    d.Field(std::string("snapshot ") + what, std::string(k).c_str(), v,
            it == got.end() ? V{-1} : it->second);
  }
}

// The fields of every struct compared above, named in declaration order. A structured binding
// must name exactly its struct's fields, so a field added to one of these structs stops this
// file from compiling ("only N names provided for structured binding") until it is named here
// AND compared above: the incremental snapshot's check (--verify-snapshot-cache) never skips a
// field silently.
[[maybe_unused]] void EveryFieldIsCompared(const Snapshot& s, const SnapNode& n, const GpuGroup& gg,
                                           const SnapPod& p, const GpuShare& gs, const SnapJob& j,
                                           const SnapSubGroup& sg, const SnapQueue& q,
                                           const QueueQuota& qq) {
  // numa: not compared; the cache rebuilds it in full at every update (snapshot/numa.h BuildNuma).
  [[maybe_unused]] const auto& [now, nodes, pods, jobs, queues, root_queues, node_by_name,
                                queue_by_name, node_name_rank, background_pods, topologies,
                                dra,  // not compared: SnapshotCache rebuilds whole with DRA
                                // not compared: built whole; a storage object's change rebuilds
                                storage, numa, fair_share_capacity] = s;
  [[maybe_unused]] const auto& [n_obj, n_name, n_allocatable, n_idle, n_releasing, n_used,
                                n_gpu_memory_mib, n_gpu_memory_synced, n_gpu_devices, n_mig_enabled,
                                n_mig_strategy, n_legacy_mig_pods, n_gpu_groups, n_max_group_room,
                                n_unusable_reason, n_pods] = n;
  [[maybe_unused]] const auto& [gg_name, gg_used, gg_releasing, gg_allocated, gg_has_allocated,
                                gg_marked_releasing] = gg;
  [[maybe_unused]] const auto& [p_obj, p_ns, p_name, p_uid, p_job, p_node, p_nominated,
                                p_selects_nodes, p_requires_pod_affinity, p_prefers_pod_affinity,
                                p_uses_host_ports, p_uses_claims, p_status, p_request,
                                p_task_priority, p_task_priority_invalid, p_role_rank, p_creation,
                                p_gpu_groups, p_share, p_legacy_mig, p_accepted_milli_gpu,
                                p_memory_request_milli_gpu, p_memory_capacity_milli_gpu,
                                p_kai_scheduled, p_virtually_evicted, p_kai_utility, p_background,
                                p_sub_group, p_in_floor] = p;
  [[maybe_unused]] const auto& [gs_kind, gs_portion_milli, gs_memory_mib, gs_devices] = gs;
  [[maybe_unused]] const auto& [j_obj, j_ns, j_name, j_uid, j_queue, j_priority, j_preemptible,
                                j_semi_preemptible, j_min_member, j_creation, j_pods, j_sub_groups,
                                j_invalid_sub_group_pods, j_last_start, j_stale_since,
                                j_active_allocated, j_has_sub_groups] = j;
  [[maybe_unused]] const auto& [sg_name, sg_parent, sg_first_member, sg_member_count, sg_pod_set,
                                sg_min_member, sg_min_sub_group, sg_topology, sg_set_pods,
                                sg_active_allocated, sg_floor_pods] = sg;
  [[maybe_unused]] const auto& [q_obj, q_name, q_parent, q_children, q_priority, q_gpu, q_cpu,
                                q_memory, q_creation, q_fair_share, q_allocated,
                                q_allocated_non_preemptible, q_requested, q_usage] = q;
  [[maybe_unused]] const auto& [qq_quota, qq_limit, qq_weight_milli] = qq;
}

}  // namespace

std::string SnapshotDifference(const Snapshot& want, const Snapshot& got, int limit) {
  Diff d(limit);
  d.Field("snapshot", "now", want.now, got.now);
  CompareAll(d, "nodes", want.nodes, got.nodes, CompareNode);
  CompareAll(d, "pods", want.pods, got.pods, ComparePod);
  CompareAll(d, "jobs", want.jobs, got.jobs, CompareJob);
  CompareAll(d, "queues", want.queues, got.queues, CompareQueue);
  d.Field("snapshot", "root_queues", want.root_queues, got.root_queues);
  CompareMap(d, "node_by_name", want.node_by_name, got.node_by_name);
  CompareMap(d, "queue_by_name", want.queue_by_name, got.queue_by_name);
  d.Field("snapshot", "node_name_rank", want.node_name_rank, got.node_name_rank);
  d.Field("snapshot", "background_pods", want.background_pods, got.background_pods);
  d.Field("snapshot", "topologies", want.topologies, got.topologies);
  d.Field("snapshot", "fair_share_capacity", want.fair_share_capacity, got.fair_share_capacity);
  return d.Take();
}

}  // namespace kai
