#include "kai/core/snapshot/cache.h"

#include <algorithm>
#include <unordered_map>

#include "kai/core/snapshot/derive.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/semi_preemptible.h"

namespace kai {
namespace snapshot_detail {

// What the cache remembers about the state it derived the snapshot from, to find what moved.
struct CacheIndex {
  const ClusterState* state = nullptr;
  const void* nodes_data = nullptr;
  const void* pods_data = nullptr;
  const void* pod_groups_data = nullptr;
  const void* queues_data = nullptr;
  const void* priority_classes_data = nullptr;
  const void* topologies_data = nullptr;
  size_t queues = 0, priority_classes = 0, topologies = 0;
  UnixSeconds now = 0;
  NsNameMap<JobId> job_by_key;
  std::unordered_map<PodId, JobId> invalid_in;  // pods left out of a job (unknown SubGroup)
  std::vector<PodId> binding;                   // pods derived Binding (a live BindRequest)

  void Remember(const ClusterState& s, UnixSeconds t) {
    state = &s;
    nodes_data = s.nodes.data();
    pods_data = s.pods.data();
    pod_groups_data = s.pod_groups.data();
    queues_data = s.queues.data();
    priority_classes_data = s.priority_classes.data();
    topologies_data = s.topologies.data();
    queues = s.queues.size();
    priority_classes = s.priority_classes.size();
    topologies = s.topologies.size();
    now = t;
  }
};

namespace {

// A set of dense ids, each once, in insertion order until sorted.
class IdSet {
 public:
  explicit IdSet(size_t n) : in_(n, 0) {}
  void Add(int32_t id) {
    if (id == kNone) return;
    if (static_cast<size_t>(id) >= in_.size()) in_.resize(static_cast<size_t>(id) + 1, 0);
    if (in_[id]) return;
    in_[id] = 1;
    ids_.push_back(id);
  }
  bool Has(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < in_.size() && in_[id]; }
  const std::vector<int32_t>& ids() const { return ids_; }
  void Sort() { std::sort(ids_.begin(), ids_.end()); }

 private:
  std::vector<uint8_t> in_;
  std::vector<int32_t> ids_;
};

// `list` (ascending) without the pods of `dirty`, plus `extra` (ascending); ascending again.
void MergeSorted(std::vector<PodId>& list, const IdSet& dirty, const std::vector<PodId>& extra) {
  std::erase_if(list, [&](PodId p) { return dirty.Has(p); });
  if (extra.empty()) return;
  const auto old_size = static_cast<std::ptrdiff_t>(list.size());
  list.insert(list.end(), extra.begin(), extra.end());
  std::inplace_merge(list.begin(), list.begin() + old_size, list.end());
}

// A node's accounting from its pods again, in id order, as BuildSnapshot adds them.
void ReaccountNode(Snapshot& s, SnapNode& node) {
  SnapNode fresh = DeriveNode(*node.obj);
  fresh.pods = std::move(node.pods);
  node = std::move(fresh);
  for (PodId p : node.pods) AddPodToNode(node, s.pods[p], s.pods[p].status);
}

// A job's PodSet lists, counts and floors again from its pods' (derived) standing.
void RecountJob(Snapshot& s, SnapJob& job) {
  job.active_allocated = 0;
  for (SnapSubGroup& sg : job.sub_groups) {
    sg.active_allocated = 0;
    if (job.has_sub_groups) sg.set_pods.clear();
  }
  for (PodId p : job.pods) {
    const SnapPod& pod = s.pods[p];
    SnapSubGroup& set = job.sub_groups[pod.sub_group];
    if (job.has_sub_groups) set.set_pods.push_back(p);
    if (IsActiveAllocated(pod.status)) {
      ++job.active_allocated;
      ++set.active_allocated;
    }
  }
  ReseedFloors(s, job);
}

// What sessions and the proportion plugin write into queues; a fresh snapshot has none of it.
void ResetQueues(Snapshot& s) {
  for (SnapQueue& q : s.queues) {
    q.fair_share = q.allocated = q.allocated_non_preemptible = q.requested = Resources{};
    q.usage = {};
  }
  s.fair_share_capacity = Resources{};
}

void AppendJobs(const ClusterState& state, Snapshot& s, CacheIndex& ix) {
  for (size_t j = s.jobs.size(); j < state.pod_groups.size(); ++j) {
    const PodGroupObject& pg = state.pod_groups[j];
    ix.job_by_key[{pg.meta.ns, pg.meta.name}] = static_cast<JobId>(j);
    s.jobs.push_back(DeriveJob(state, s, pg));
  }
}

// Pods a BindRequest change may concern: those derived Binding, those a live request names.
void AddBindingPods(const ClusterState& state, const CacheIndex& ix,
                    const NsNameMap<BindInfo>& binds, IdSet& dirty) {
  for (PodId p : ix.binding) dirty.Add(p);
  if (binds.empty()) return;
  for (PodId p = 0; p < static_cast<PodId>(state.pods.size()); ++p) {
    const PodObject& obj = state.pods[p];
    if (binds.count({obj.meta.ns, obj.meta.name})) dirty.Add(p);
  }
}

// Pods whose jobs may exist now (PodGroups appended), or whose status depends on the clock (a
// deleted pod turns StuckInReleasing).
void AddWaitingPods(const Snapshot& s, bool jobs_appended, bool clock_moved, IdSet& dirty) {
  if (!jobs_appended && !clock_moved) return;
  for (PodId p = 0; p < static_cast<PodId>(s.pods.size()); ++p) {
    const PodObject& obj = *s.pods[p].obj;
    if (jobs_appended && s.pods[p].job == kNone && !obj.pod_group.empty()) dirty.Add(p);
    if (clock_moved && obj.meta.deletion) dirty.Add(p);
  }
}

// Re-derives the dirty pods (ascending ids; appended ones last), noting the nodes and jobs they
// leave or join.
// Keeps the snapshot's background pods sorted by id as a pod joins or leaves them.
void ToggleBackground(std::vector<PodId>& pods, PodId p, bool background) {
  auto at = std::lower_bound(pods.begin(), pods.end(), p);
  if (background) {
    pods.insert(at, p);
  } else {
    pods.erase(at);
  }
}

void DerivePods(const ClusterState& state, Snapshot& s, CacheIndex& ix, const IdSet& dirty,
                const PodContext& ctx, IdSet& dirty_nodes, IdSet& dirty_jobs) {
  const size_t old_pods = s.pods.size();
  std::erase_if(ix.binding, [&](PodId p) { return dirty.Has(p); });
  for (PodId p : dirty.ids()) {
    if (static_cast<size_t>(p) < old_pods) {
      dirty_nodes.Add(s.pods[p].node);
      dirty_jobs.Add(s.pods[p].job);
      if (auto it = ix.invalid_in.find(p); it != ix.invalid_in.end()) {
        dirty_jobs.Add(it->second);
        ix.invalid_in.erase(it);
      }
    }
    SnapPod sp = DerivePod(s, state.pods[p], ctx);
    const Membership m = MembershipOf(s, ix.job_by_key, sp);
    sp.job = m.job;
    sp.sub_group = m.sub_group;
    if (m.invalid_in != kNone) ix.invalid_in[p] = m.invalid_in;
    dirty_jobs.Add(m.job);
    dirty_jobs.Add(m.invalid_in);
    if (IsActiveUsed(sp.status)) dirty_nodes.Add(sp.node);
    if (sp.status == PodStatus::kBinding) ix.binding.push_back(p);
    const bool was_background = static_cast<size_t>(p) < old_pods && s.pods[p].background;
    if (sp.background != was_background) ToggleBackground(s.background_pods, p, sp.background);
    if (static_cast<size_t>(p) < old_pods) {
      s.pods[p] = std::move(sp);
    } else {
      s.pods.push_back(std::move(sp));
    }
  }
}

void ReattachJobs(Snapshot& s, const CacheIndex& ix, const IdSet& dirty, const IdSet& dirty_jobs) {
  std::unordered_map<JobId, std::vector<PodId>> joined, invalid;
  for (PodId p : dirty.ids()) {
    if (s.pods[p].job != kNone) joined[s.pods[p].job].push_back(p);
    if (auto it = ix.invalid_in.find(p); it != ix.invalid_in.end())
      invalid[it->second].push_back(p);
  }
  for (JobId j : dirty_jobs.ids()) {
    SnapJob& job = s.jobs[j];
    MergeSorted(job.pods, dirty, joined[j]);
    MergeSorted(job.invalid_sub_group_pods, dirty, invalid[j]);
    RecountJob(s, job);
  }
}

void ReattachNodes(Snapshot& s, const IdSet& dirty, const IdSet& dirty_nodes) {
  std::unordered_map<NodeId, std::vector<PodId>> placed;
  for (PodId p : dirty.ids()) {
    const SnapPod& sp = s.pods[p];
    if (sp.node != kNone && IsActiveUsed(sp.status)) placed[sp.node].push_back(p);
  }
  for (NodeId n : dirty_nodes.ids()) {
    SnapNode& node = s.nodes[n];
    MergeSorted(node.pods, dirty, placed[n]);
    ReaccountNode(s, node);
  }
}

}  // namespace
}  // namespace snapshot_detail

using namespace snapshot_detail;

SnapshotCache::SnapshotCache() : index_(std::make_unique<CacheIndex>()) {}
SnapshotCache::~SnapshotCache() = default;

Snapshot& SnapshotCache::Update(const ClusterState& state, UnixSeconds now,
                                const ClusterChanges& changes) {
  if (NeedsRebuild(state, changes)) {
    Rebuild(state, now);
  } else {
    Incremental(state, now, changes);
    BuildNuma(state, *snap_);  // O(pods on NUMA nodes); nothing without topologies
  }
  pending_pods_.clear();
  pending_nodes_.clear();
  index_->Remember(state, now);
  return *snap_;
}

Snapshot SnapshotCache::Lend() {
  lent_ = true;
  return std::move(*snap_);
}

void SnapshotCache::Return(Snapshot snap, std::span<const PodId> pods,
                           std::span<const NodeId> nodes) {
  snap_ = std::move(snap);
  lent_ = false;
  pending_pods_.insert(pending_pods_.end(), pods.begin(), pods.end());
  pending_nodes_.insert(pending_nodes_.end(), nodes.begin(), nodes.end());
}

bool SnapshotCache::NeedsRebuild(const ClusterState& state, const ClusterChanges& changes) const {
  const CacheIndex& ix = *index_;
  if (!snap_ || lent_ || changes.rebuild || ix.state != &state) return true;
  if (!state.dra.empty()) return true;  // the DRA view (snapshot/dra.h) is built whole
  const Snapshot& s = *snap_;
  return state.nodes.size() != s.nodes.size() || state.nodes.data() != ix.nodes_data ||
         state.pods.size() < s.pods.size() || state.pod_groups.size() < s.jobs.size() ||
         state.pod_groups.data() != ix.pod_groups_data || state.queues.size() != ix.queues ||
         state.queues.data() != ix.queues_data ||
         state.priority_classes.size() != ix.priority_classes ||
         state.priority_classes.data() != ix.priority_classes_data ||
         state.topologies.size() != ix.topologies || state.topologies.data() != ix.topologies_data;
}

void SnapshotCache::Rebuild(const ClusterState& state, UnixSeconds now) {
  snap_ = BuildSnapshot(state, now);
  lent_ = false;
  ++stats_.full_builds;
  CacheIndex& ix = *index_;
  ix.job_by_key.clear();
  ix.job_by_key.reserve(state.pod_groups.size());
  for (size_t j = 0; j < state.pod_groups.size(); ++j) {
    const PodGroupObject& pg = state.pod_groups[j];
    ix.job_by_key[{pg.meta.ns, pg.meta.name}] = static_cast<JobId>(j);
  }
  ix.invalid_in.clear();
  for (JobId j = 0; j < static_cast<JobId>(snap_->jobs.size()); ++j) {
    for (PodId p : snap_->jobs[j].invalid_sub_group_pods) ix.invalid_in[p] = j;
  }
  ix.binding.clear();
  for (PodId p = 0; p < static_cast<PodId>(snap_->pods.size()); ++p) {
    if (snap_->pods[p].status == PodStatus::kBinding) ix.binding.push_back(p);
  }
}

void SnapshotCache::Incremental(const ClusterState& state, UnixSeconds now,
                                const ClusterChanges& changes) {
  Snapshot& s = *snap_;
  CacheIndex& ix = *index_;
  ++stats_.incremental_updates;
  if (state.pods.data() != ix.pods_data) {
    for (size_t i = 0; i < s.pods.size(); ++i) PointAt(s.pods[i], state.pods[i]);
  }
  const size_t old_jobs = s.jobs.size();
  AppendJobs(state, s, ix);
  const auto binds = LiveBindRequests(state);

  IdSet dirty(state.pods.size());
  for (PodId p : pending_pods_) dirty.Add(p);
  for (size_t p : changes.pods) dirty.Add(static_cast<PodId>(p));
  for (size_t p = s.pods.size(); p < state.pods.size(); ++p) dirty.Add(static_cast<PodId>(p));
  AddWaitingPods(s, s.jobs.size() > old_jobs, now != ix.now, dirty);
  if (changes.bind_requests) AddBindingPods(state, ix, binds, dirty);
  dirty.Sort();

  IdSet dirty_nodes(s.nodes.size()), dirty_jobs(s.jobs.size());
  for (NodeId n : pending_nodes_) dirty_nodes.Add(n);
  s.now = now;
  const PodContext ctx{&binds, GpuMemoryRange(s), now, state.scheduler_name};
  DerivePods(state, s, ix, dirty, ctx, dirty_nodes, dirty_jobs);
  ReattachJobs(s, ix, dirty, dirty_jobs);
  ReattachNodes(s, dirty, dirty_nodes);
  for (JobId j = 0; j < static_cast<JobId>(s.jobs.size()); ++j) {
    // Sessions write these (allocate, stale gang eviction); the world keeps the truth.
    s.jobs[j].last_start = state.pod_groups[j].last_start;
    s.jobs[j].stale_since = state.pod_groups[j].stale_since;
  }
  ResetQueues(s);
  stats_.pods_rederived += static_cast<int64_t>(dirty.ids().size());
  stats_.nodes_rederived += static_cast<int64_t>(dirty_nodes.ids().size());
  stats_.jobs_rederived += static_cast<int64_t>(dirty_jobs.ids().size());
}

}  // namespace kai
