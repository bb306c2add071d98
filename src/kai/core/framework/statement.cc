#include "kai/core/framework/statement.h"
#include "kai/core/snapshot/gpu_accounting.h"

#include <algorithm>

namespace kai {

namespace {

// A field added to GpuGroup must be saved and restored here too.
static_assert(sizeof(GpuGroup) == sizeof(std::string) + 4 * sizeof(int64_t));

// Spare logs kept per thread (a session runs on one thread), and how large a spare may be: the
// logs of a huge statement are freed rather than kept.
constexpr size_t kMaxSpareLogs = 8;
constexpr size_t kMaxSpareOps = 4096;

}  // namespace

std::unique_ptr<Statement::Logs> Statement::TakeSpareLogs() {
  auto& spare = SpareLogs();
  if (spare.empty()) return std::make_unique<Logs>();
  std::unique_ptr<Logs> logs = std::move(spare.back());
  spare.pop_back();
  return logs;
}

void Statement::GiveBackLogs(std::unique_ptr<Logs> logs) {
  auto& spare = SpareLogs();
  const bool huge = logs->ops.capacity() > kMaxSpareOps || logs->groups.capacity() > kMaxSpareOps;
  if (huge || spare.size() >= kMaxSpareLogs) return;
  logs->ops.clear();
  logs->gpu.clear();
  logs->groups.clear();
  logs->evicted.clear();
  logs->pipelined.clear();
  spare.push_back(std::move(logs));
}

std::vector<std::unique_ptr<Statement::Logs>>& Statement::SpareLogs() {
  static thread_local std::vector<std::unique_ptr<Logs>> spare;
  return spare;
}

Statement::Statement(Session& session) : session_(session), logs_(TakeSpareLogs()) {}

Statement::~Statement() {
  if (!logs_->ops.empty()) Discard();
  GiveBackLogs(std::move(logs_));
}

void Statement::Record(Kind kind, PodId pod, PodStatus status, NodeId node,
                       std::vector<std::string>* groups) {
  const SnapPod& p = session_.snap().pods[pod];
  const size_t first_gpu_state = logs_->gpu.size();
  SaveGpuStates(pod, node);
  Op& op = logs_->ops.emplace_back(
      Op{kind, pod, p.status, p.node, groups != nullptr, {}, first_gpu_state, {}});
  if (groups) op.prev_groups = std::move(*groups);
  if (!session_.snap().numa.pods.empty()) op.prev_numa = session_.snap().numa.pods[pod];
  // MovePod exchanges the groups: the op ends up with the pod's previous ones.
  session_.MovePod(pod, status, node, groups ? &op.prev_groups : nullptr);
}

// MovePod changes GPU accounting only on the pod's node and on the target.
void Statement::SaveGpuStates(PodId pod, NodeId target) {
  const SnapPod& p = session_.snap().pods[pod];
  if (!p.share.IsShared()) return;
  if (p.node != kNone) SaveNodeGpuState(p.node);
  if (target != kNone && target != p.node) SaveNodeGpuState(target);
}

void Statement::SaveNodeGpuState(NodeId n) {
  const SnapNode& node = session_.snap().nodes[n];
  std::vector<GroupCounters>& groups = logs_->groups;
  // Braced (aggregate) initialisation: clang 14, which builds the fuzzers, has no parenthesised
  // aggregate initialisation, so emplace_back(fields...) does not compile there.
  logs_->gpu.push_back(
      NodeGpuState{n, node.idle, node.releasing, node.used, node.gpu_groups.size(), groups.size()});
  groups.reserve(groups.size() + node.gpu_groups.size());  // one allocation at most
  for (const GpuGroup& g : node.gpu_groups) {
    groups.push_back(
        GroupCounters{g.used, g.releasing, g.allocated, g.has_allocated, g.marked_releasing});
  }
}

void Statement::RestoreGpuStates(size_t first_gpu_state) {
  if (first_gpu_state == logs_->gpu.size()) return;
  session_.RoomMayHaveGrown();
  for (size_t i = first_gpu_state; i < logs_->gpu.size(); ++i) {
    const NodeGpuState& st = logs_->gpu[i];
    const size_t end_group =
        i + 1 < logs_->gpu.size() ? logs_->gpu[i + 1].first_group : logs_->groups.size();
    SnapNode& node = session_.snap().nodes[st.node];
    node.idle = st.idle;
    node.releasing = st.releasing;
    node.used = st.used;
    node.gpu_groups.erase(node.gpu_groups.begin() + static_cast<std::ptrdiff_t>(st.group_count),
                          node.gpu_groups.end());
    for (size_t i = st.first_group; i < end_group; ++i) {
      const GroupCounters& saved = logs_->groups[i];
      GpuGroup& g = node.gpu_groups[i - st.first_group];
      g.used = saved.used;
      g.releasing = saved.releasing;
      g.allocated = saved.allocated;
      g.has_allocated = saved.has_allocated;
      g.marked_releasing = saved.marked_releasing;
    }
    RefreshGroupRoom(node);
    session_.NodeChanged(st.node);
  }
  const auto first_group = static_cast<std::ptrdiff_t>(logs_->gpu[first_gpu_state].first_group);
  logs_->groups.erase(logs_->groups.begin() + first_group, logs_->groups.end());
  logs_->gpu.erase(logs_->gpu.begin() + static_cast<std::ptrdiff_t>(first_gpu_state),
                   logs_->gpu.end());
}

void Statement::Allocate(PodId pod, NodeId node) {
  Record(Kind::kAllocate, pod, PodStatus::kAllocated, node);
}

void Statement::Allocate(PodId pod, NodeId node, std::vector<std::string> groups) {
  Record(Kind::kAllocate, pod, PodStatus::kAllocated, node, &groups);
}

void Statement::Pipeline(PodId pod, NodeId node) { PipelineOn(pod, node, nullptr); }

void Statement::Pipeline(PodId pod, NodeId node, std::vector<std::string> groups) {
  PipelineOn(pod, node, &groups);
}

void Statement::PipelineOn(PodId pod, NodeId node, std::vector<std::string>* groups) {
  const SnapPod& p = session_.snap().pods[pod];
  // Re-placing a virtually evicted pod on its own node un-evicts it (KAI's statement.go), unless
  // a shared-GPU pod moves to other GPUs of the node.
  const bool other_gpus = groups && p.share.IsShared() && *groups != p.gpu_groups;
  if (p.status == PodStatus::kReleasing && p.node == node && !other_gpus) {
    for (auto it = logs_->ops.rbegin(); it != logs_->ops.rend(); ++it) {
      if (it->pod == pod && it->kind == Kind::kEvict) {
        Record(Kind::kPipeline, pod, it->prev_status, node);
        session_.snap().pods[pod].virtually_evicted = false;
        return;
      }
    }
  }
  Record(Kind::kPipeline, pod, PodStatus::kPipelined, node, groups);
}

void Statement::Evict(PodId pod) {
  SnapPod& p = session_.snap().pods[pod];
  if (p.status == PodStatus::kPipelined) {
    // A pipelined pod holds no resources yet: evicting it only drops its reservation (and the
    // GPUs chosen for it).
    std::vector<std::string> no_groups;
    Record(Kind::kEvict, pod, PodStatus::kPending, kNone, &no_groups);
    return;
  }
  Record(Kind::kEvict, pod, PodStatus::kReleasing, p.node);
  p.virtually_evicted = true;
}

void Statement::Restart(PodId pod) {
  const NodeId node = session_.snap().pods[pod].node;
  Evict(pod);
  std::vector<std::string> groups = session_.snap().pods[pod].gpu_groups;
  Record(Kind::kPipeline, pod, PodStatus::kPipelined, node, &groups);
}

void Statement::Rollback(size_t checkpoint) {
  while (logs_->ops.size() > checkpoint) {
    Op op = std::move(logs_->ops.back());
    logs_->ops.pop_back();
    NumaRestore(session_.snap(), op.pod, std::move(op.prev_numa));
    session_.MovePod(op.pod, op.prev_status, op.prev_node,
                     op.set_groups ? &op.prev_groups : nullptr);
    RestoreGpuStates(op.first_gpu_state);
    session_.snap().pods[op.pod].virtually_evicted = VirtuallyEvicted(op.pod);
  }
}

bool Statement::VirtuallyEvicted(PodId pod) const {
  const SnapPod& p = session_.snap().pods[pod];
  if (p.status != PodStatus::kReleasing && p.status != PodStatus::kPipelined) return false;
  for (auto it = logs_->ops.rbegin(); it != logs_->ops.rend(); ++it) {
    if (it->pod == pod) return it->kind == Kind::kEvict || it->prev_status == PodStatus::kReleasing;
  }
  return false;
}

void Statement::Commit() {
  if (!logs_->ops.empty()) session_.NoteCommit();
  SessionCounters& c = session_.counters();
  // A pod restarted in place was evicted and pipelined twice: each pod counts once.
  std::vector<PodId>& evicted = logs_->evicted;
  std::vector<PodId>& pipelined = logs_->pipelined;
  evicted.clear();
  pipelined.clear();
  for (const Op& op : logs_->ops) {
    SnapPod& p = session_.snap().pods[op.pod];
    p.virtually_evicted = false;
    if (p.job != kNone) session_.JobChanged(p.job);
    switch (op.kind) {
      case Kind::kAllocate:
        if (p.status == PodStatus::kAllocated) {
          p.status = PodStatus::kBinding;  // same node accounting as Allocated
          ++c.binds;
        }
        break;
      case Kind::kPipeline:
        if (p.status == PodStatus::kPipelined) pipelined.push_back(op.pod);
        break;
      case Kind::kEvict:
        // A pod re-placed elsewhere (Pipelined) is still deleted and recreated by its owner.
        if (p.status == PodStatus::kReleasing || p.status == PodStatus::kPipelined) {
          evicted.push_back(op.pod);
        }
        break;
    }
  }
  c.pipelines += CountDistinct(pipelined);
  c.evictions += CountDistinct(evicted);
  logs_->ops.clear();
  logs_->gpu.clear();
  logs_->groups.clear();
}

int Statement::CountDistinctOfMany(std::vector<PodId>& pods) {
  std::sort(pods.begin(), pods.end());
  return static_cast<int>(std::unique(pods.begin(), pods.end()) - pods.begin());
}

const std::vector<PodId> Statement::AllocatedPods() const {
  std::vector<PodId> out;
  for (const Op& op : logs_->ops) {
    if (op.kind == Kind::kAllocate) out.push_back(op.pod);
  }
  return out;
}

bool Statement::HasPipelined(JobId job) const {
  for (const Op& op : logs_->ops) {
    const SnapPod& p = session_.snap().pods[op.pod];
    if (op.kind == Kind::kPipeline && p.job == job && p.status == PodStatus::kPipelined)
      return true;
  }
  return false;
}

}  // namespace kai
