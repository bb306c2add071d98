#include "kai/framework/statement.h"

#include <unordered_set>

namespace kai {

Statement::~Statement() { Discard(); }

void Statement::Record(Kind kind, PodId pod, PodStatus status, NodeId node,
                       const std::vector<std::string>* groups) {
  const SnapPod& p = session_.snap().pods[pod];
  ops_.push_back(Op{kind, pod, p.status, p.node, groups != nullptr,
                    groups ? p.gpu_groups : std::vector<std::string>{}, SaveGpuStates(pod, node)});
  session_.MovePod(pod, status, node, groups);
}

std::vector<Statement::NodeGpuState> Statement::SaveGpuStates(PodId pod, NodeId target) const {
  std::vector<NodeGpuState> out;
  const SnapPod& p = session_.snap().pods[pod];
  if (!p.share.IsShared()) return out;
  for (NodeId n : {p.node, target}) {
    if (n == kNone || (!out.empty() && out.front().node == n)) continue;
    const SnapNode& node = session_.snap().nodes[n];
    out.push_back({n, node.idle, node.releasing, node.used, node.gpu_groups});
  }
  return out;
}

void Statement::RestoreGpuStates(const std::vector<NodeGpuState>& states) {
  if (!states.empty()) session_.RoomMayHaveGrown();
  for (const NodeGpuState& st : states) {
    SnapNode& node = session_.snap().nodes[st.node];
    node.idle = st.idle;
    node.releasing = st.releasing;
    node.used = st.used;
    node.gpu_groups = st.groups;
    RefreshGroupRoom(node);
    session_.NodeChanged(st.node);
  }
}

void Statement::Allocate(PodId pod, NodeId node, const std::vector<std::string>* groups) {
  Record(Kind::kAllocate, pod, PodStatus::kAllocated, node, groups);
}

void Statement::Pipeline(PodId pod, NodeId node, const std::vector<std::string>* groups) {
  const SnapPod& p = session_.snap().pods[pod];
  // Re-placing a virtually evicted pod on its own node un-evicts it (KAI's statement.go), unless
  // a shared-GPU pod moves to other GPUs of the node.
  const bool other_gpus = groups && p.share.IsShared() && *groups != p.gpu_groups;
  if (p.status == PodStatus::kReleasing && p.node == node && !other_gpus) {
    for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
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
    static const std::vector<std::string> kNoGroups;
    Record(Kind::kEvict, pod, PodStatus::kPending, kNone, &kNoGroups);
    return;
  }
  Record(Kind::kEvict, pod, PodStatus::kReleasing, p.node);
  p.virtually_evicted = true;
}

void Statement::Restart(PodId pod) {
  const NodeId node = session_.snap().pods[pod].node;
  Evict(pod);
  const std::vector<std::string> groups = session_.snap().pods[pod].gpu_groups;
  Record(Kind::kPipeline, pod, PodStatus::kPipelined, node, &groups);
}

void Statement::Rollback(size_t checkpoint) {
  while (ops_.size() > checkpoint) {
    const Op op = std::move(ops_.back());
    ops_.pop_back();
    session_.MovePod(op.pod, op.prev_status, op.prev_node,
                     op.set_groups ? &op.prev_groups : nullptr);
    RestoreGpuStates(op.gpu_states);
    session_.snap().pods[op.pod].virtually_evicted = VirtuallyEvicted(op.pod);
  }
}

bool Statement::VirtuallyEvicted(PodId pod) const {
  const SnapPod& p = session_.snap().pods[pod];
  if (p.status != PodStatus::kReleasing && p.status != PodStatus::kPipelined) return false;
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    if (it->pod == pod) return it->kind == Kind::kEvict || it->prev_status == PodStatus::kReleasing;
  }
  return false;
}

void Statement::Commit() {
  SessionCounters& c = session_.counters();
  // A pod restarted in place was evicted and pipelined twice: each pod counts once.
  std::unordered_set<PodId> evicted, pipelined;
  for (const Op& op : ops_) {
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
        if (p.status == PodStatus::kPipelined && pipelined.insert(op.pod).second) ++c.pipelines;
        break;
      case Kind::kEvict:
        // A pod re-placed elsewhere (Pipelined) is still deleted and recreated by its owner.
        if ((p.status == PodStatus::kReleasing || p.status == PodStatus::kPipelined) &&
            evicted.insert(op.pod).second) {
          ++c.evictions;
        }
        break;
    }
  }
  ops_.clear();
}

const std::vector<PodId> Statement::AllocatedPods() const {
  std::vector<PodId> out;
  for (const Op& op : ops_) {
    if (op.kind == Kind::kAllocate) out.push_back(op.pod);
  }
  return out;
}

bool Statement::HasPipelined(JobId job) const {
  for (const Op& op : ops_) {
    const SnapPod& p = session_.snap().pods[op.pod];
    if (op.kind == Kind::kPipeline && p.job == job && p.status == PodStatus::kPipelined)
      return true;
  }
  return false;
}

}  // namespace kai
