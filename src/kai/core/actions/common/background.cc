#include "kai/core/actions/common/background.h"

#include <algorithm>
#include <memory>
#include <string>

#include "kai/core/actions/common/placement.h"
#include "kai/core/framework/statement.h"
#include "kai/core/snapshot/fit.h"

namespace kai::actions {
namespace {

// Running: a background pod still binding keeps its place (the bind is already under way). One
// that holds NUMA zones keeps it too: zones are devices, not handed back yet.
bool CanSetAside(const Snapshot& snap, PodId p) {
  const SnapPod& pod = snap.pods[p];
  if (pod.node == kNone || pod.status != PodStatus::kRunning) return false;
  return snap.numa.pods.empty() || snap.numa.pods[p].charges.empty();
}

// What the session decided on the node that a background pod's place went to: the first pod
// placed there in this session (pipelined onto the freed resources first, then allocated).
PodId TakerOn(const Session& s, NodeId node) {
  const Snapshot& snap = s.snap();
  PodId allocated = kNone;
  for (PodId p : snap.nodes[node].pods) {
    const SnapPod& pod = snap.pods[p];
    if (pod.background || pod.job == kNone) continue;
    if (pod.status == PodStatus::kPipelined) return p;
    if (allocated == kNone &&
        (pod.status == PodStatus::kAllocated || pod.status == PodStatus::kBinding)) {
      allocated = p;
    }
  }
  return allocated;
}

void MarkDisplaced(Session& s, PodId pod) {
  const Snapshot& snap = s.snap();
  const NodeId node = snap.pods[pod].node;
  const PodId taker = TakerOn(s, node);
  std::string rule = "its resources on node " + std::string(snap.nodes[node].name) + " went to ";
  if (taker == kNone) {
    rule += "this cycle's placements";
  } else {
    const SnapPod& t = snap.pods[taker];
    rule += "pod " + std::string(t.ns) + "/" + std::string(t.name);
  }
  EvictionVerdict v;
  v.kind = EvictionKind::kDisplaced;
  v.action = std::string(kBackgroundAction);
  v.preemptor = taker == kNone ? kNone : snap.pods[taker].job;
  v.rule = std::make_shared<const std::string>(std::move(rule));
  s.SetEviction(pod, std::move(v));
  ++s.counters().evictions;
}

// Whether the pod, set aside on its node, can hold its place again: its resources are still
// free there (idle plus being freed, its own included: what was placed there in the session has
// been taken out of them) and the predicates allow it next to what came.
bool CanReturn(const Session& s, PodId pod) {
  const SnapPod& p = s.snap().pods[pod];
  if (!FitsIdleOrReleasing(p, s.snap().nodes[p.node])) return false;
  return s.CheckPredicates(pod, p.node).Fits();
}

std::vector<NodeId> NodesByName(const Snapshot& snap) {
  std::vector<NodeId> nodes(snap.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<NodeId>(i);
  std::sort(nodes.begin(), nodes.end(),
            [&](NodeId a, NodeId b) { return snap.node_name_rank[a] < snap.node_name_rank[b]; });
  return nodes;
}

bool FitsIdleThere(const Session& s, PodId pod, NodeId node) {
  const SnapNode& n = s.snap().nodes[node];
  return n.unusable_reason.empty() && FitsIdle(s.snap().pods[pod], n) &&
         s.CheckPredicates(pod, node).Fits();
}

}  // namespace

std::vector<PodId> SetAsideBackgroundPods(Session& s) {
  std::vector<PodId> set_aside;
  for (PodId p : s.snap().background_pods) {
    if (CanSetAside(s.snap(), p)) set_aside.push_back(p);
  }
  for (PodId p : set_aside) s.MovePod(p, PodStatus::kReleasing, s.snap().pods[p].node);
  return set_aside;
}

void SettleBackgroundPods(Session& s, const std::vector<PodId>& set_aside) {
  for (PodId p : set_aside) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.status != PodStatus::kReleasing) continue;
    if (CanReturn(s, p)) {
      s.MovePod(p, PodStatus::kRunning, pod.node);
    } else {
      MarkDisplaced(s, p);
    }
  }
}

void PlaceBackgroundPods(Session& s) {
  std::vector<NodeId> nodes;
  for (PodId p : s.snap().background_pods) {
    const SnapPod& pod = s.snap().pods[p];
    if (!pod.kai_scheduled || pod.status != PodStatus::kPending) continue;
    if (nodes.empty()) nodes = NodesByName(s.snap());
    auto fits = [&](NodeId n) { return FitsIdleThere(s, p, n); };
    auto node = std::find_if(nodes.begin(), nodes.end(), fits);
    if (node == nodes.end()) continue;
    Statement stmt(s);
    stmt.Allocate(p, *node);
    stmt.Commit();
  }
}

}  // namespace kai::actions
