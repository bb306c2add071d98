#include "kai/framework/statement.h"

namespace kai {

Statement::~Statement() { Discard(); }

void Statement::Record(Kind kind, PodId pod, PodStatus status, NodeId node) {
  const SnapPod& p = session_.snap().pods[pod];
  ops_.push_back(Op{kind, pod, p.status, p.node});
  session_.MovePod(pod, status, node);
}

void Statement::Allocate(PodId pod, NodeId node) {
  Record(Kind::kAllocate, pod, PodStatus::kAllocated, node);
}

void Statement::Pipeline(PodId pod, NodeId node) {
  const SnapPod& p = session_.snap().pods[pod];
  // Re-placing a virtually evicted pod on its own node un-evicts it (KAI's statement.go).
  if (p.status == PodStatus::kReleasing && p.node == node) {
    for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
      if (it->pod == pod && it->kind == Kind::kEvict) {
        Record(Kind::kPipeline, pod, it->prev_status, node);
        return;
      }
    }
  }
  Record(Kind::kPipeline, pod, PodStatus::kPipelined, node);
}

void Statement::Evict(PodId pod) {
  const SnapPod& p = session_.snap().pods[pod];
  Record(Kind::kEvict, pod, PodStatus::kReleasing, p.node);
}

void Statement::Rollback(size_t checkpoint) {
  while (ops_.size() > checkpoint) {
    const Op op = ops_.back();
    ops_.pop_back();
    session_.MovePod(op.pod, op.prev_status, op.prev_node);
  }
}

void Statement::Commit() {
  SessionCounters& c = session_.counters();
  for (const Op& op : ops_) {
    SnapPod& p = session_.snap().pods[op.pod];
    switch (op.kind) {
      case Kind::kAllocate:
        if (p.status == PodStatus::kAllocated) {
          p.status = PodStatus::kBinding;  // same node accounting as Allocated
          ++c.binds;
        }
        break;
      case Kind::kPipeline:
        if (p.status == PodStatus::kPipelined) ++c.pipelines;
        break;
      case Kind::kEvict:
        if (p.status == PodStatus::kReleasing) ++c.evictions;
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
    if (op.kind == Kind::kPipeline && p.job == job && p.status == PodStatus::kPipelined) return true;
  }
  return false;
}

}  // namespace kai
