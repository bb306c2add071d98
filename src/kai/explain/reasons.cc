#include "kai/explain/reasons.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "kai/resource/quantity.h"

namespace kai {

std::string FitCodeName(FitCode code) {
  switch (code) {
    case FitCode::kFits:
      return "Fits";
    case FitCode::kInsufficientResources:
      return "InsufficientResources";
    case FitCode::kNodeUnusable:
      return "NodeUnusable";
    case FitCode::kNodeSelectorMismatch:
      return "NodeSelectorMismatch";
    case FitCode::kNodeAffinityMismatch:
      return "NodeAffinityMismatch";
    case FitCode::kTaintNotTolerated:
      return "TaintNotTolerated";
    case FitCode::kTooManyPods:
      return "TooManyPods";
    case FitCode::kPodAffinity:
      return "PodAffinityMismatch";
    case FitCode::kGpuSharingUnsupported:
      return "GpuSharingUnsupported";
    case FitCode::kNumaUnaligned:
      return "NumaUnaligned";
    case FitCode::kOverQueueLimit:
      return "OverQueueLimit";
    case FitCode::kNonPreemptibleOverQuota:
      return "NonPreemptibleOverQuota";
  }
  return "Unknown";
}

std::string FormatResourceAmount(const std::string& resource, int64_t amount) {
  if (resource == "cpu" || resource == "nvidia.com/gpu") return FormatMilli(amount);
  if (resource == "memory") return FormatBytes(amount);
  return std::to_string(amount);
}

std::string Reason::KindName() const {
  switch (kind) {
    case ReasonKind::kGang:
      return "Gang";
    case ReasonKind::kNodes:
      return FitCodeName(code);
    case ReasonKind::kOverLimit:
      return "OverLimit";
    case ReasonKind::kNonPreemptibleOverQuota:
      return "NonPreemptibleOverQuota";
    case ReasonKind::kQueueMissing:
      return "QueueDoesNotExist";
    case ReasonKind::kNotReady:
      return "NotReady";
    case ReasonKind::kNoNodes:
      return "NoNodes";
    case ReasonKind::kPreemptionDelay:
      return "PreemptionDelayNotElapsed";
    case ReasonKind::kNoVictims:
      return "NoVictims";
    case ReasonKind::kTopology:
      return "Topology";
  }
  return "Unknown";
}

namespace {

std::string NodeCount(int n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// "no node has 4 gpu in one NUMA zone (best: 2 on node-7)".
std::string NumaMessage(const Reason& r) {
  if (r.resource.empty()) {
    return "no NUMA zone mask the Topology Manager admits on " + NodeCount(r.nodes);
  }
  return "no node has " + FormatResourceAmount(r.resource, r.requested) + " " + r.resource +
         " in one NUMA zone (best: " + FormatResourceAmount(r.resource, r.available) + " on " +
         r.domain + ")";
}

std::string NodesMessage(const Reason& r) {
  switch (r.code) {
    case FitCode::kInsufficientResources:
      return "insufficient " + r.resource + " on " + NodeCount(r.nodes) + ", short by " +
             FormatResourceAmount(r.resource, r.short_by);
    case FitCode::kNodeUnusable:
      return NodeCount(r.nodes) + " not usable (" + r.detail + ")";
    case FitCode::kNodeSelectorMismatch:
      return "node selector mismatch on " + NodeCount(r.nodes);
    case FitCode::kNodeAffinityMismatch:
      return "required node affinity mismatch on " + NodeCount(r.nodes);
    case FitCode::kTaintNotTolerated:
      return "untolerated taint " + r.detail + " on " + NodeCount(r.nodes);
    case FitCode::kTooManyPods:
      return "pod limit reached on " + NodeCount(r.nodes);
    case FitCode::kPodAffinity:
      return "pod affinity/anti-affinity not satisfied on " + NodeCount(r.nodes) + " (" + r.detail +
             ")";
    case FitCode::kGpuSharingUnsupported:
      return "GPU request type not served by " + NodeCount(r.nodes) + " (" + r.detail + ")";
    case FitCode::kOverQueueLimit:
      return "queue limit reached on " + NodeCount(r.nodes) + " (" + r.detail + ")";
    case FitCode::kNonPreemptibleOverQuota:
      return "non-preemptible quota reached on " + NodeCount(r.nodes) + " (" + r.detail + ")";
    case FitCode::kNumaUnaligned:
      return NumaMessage(r);
    case FitCode::kFits:
      // A reason about the pod rather than nodes (no PodGroup, a missing SubGroup).
      if (!r.detail.empty()) return r.detail;
      break;
  }
  return "fits on " + NodeCount(r.nodes);
}

std::string Amount(const Reason& r, int64_t amount) {
  return FormatResourceAmount(r.resource, amount) + " " + r.resource;
}

std::string ScopeFree(const Reason& r) {
  return Amount(r, r.scope_free) + " free in " + (r.scope == "cluster" ? "the cluster" : r.scope);
}

// "16 nvidia.com/gpu free in k8s.io/block b1, no k8s.io/rack can hold the 8 pods (best: rack1, room
// for 6)".
std::string TopologyMessage(const Reason& r) {
  const std::string head = "topology " + r.topology +
                           (r.sub_group.empty() ? "" : " (subgroup " + r.sub_group + ")") + ": ";
  if (r.level.empty() && r.scope.empty()) return head + r.detail;
  if (r.level.empty()) {
    return head + "not enough resources in " + r.scope + ": " + Amount(r, r.requested) +
           " requested, " + ScopeFree(r);
  }
  std::string no_domain =
      r.required > 0
          ? "no " + r.level + " can hold the " + std::to_string(r.required) +
                " pods (best: " + r.domain + ", room for " + std::to_string(r.placed) + ")"
          : "no " + r.level + " has " + Amount(r, r.requested) + " free (best: " + r.domain + ", " +
                FormatResourceAmount(r.resource, r.available) + ")";
  if (r.domain.empty()) no_domain = "no " + r.level + " holds a pod of the group";
  return head + ScopeFree(r) + ", " + no_domain;
}

}  // namespace

std::string Reason::Message() const {
  switch (kind) {
    case ReasonKind::kGang:
      return (detail.empty() ? "gang" : "sub-group " + detail) + " needs " +
             std::to_string(required) + " pods; resources found for " + std::to_string(placed);
    case ReasonKind::kNodes:
      return NodesMessage(*this);
    case ReasonKind::kOverLimit:
      return "queue " + queue + " over limit: " + resource + " " +
             FormatResourceAmount(resource, requested) + " requested, limit leaves " +
             FormatResourceAmount(resource, available);
    case ReasonKind::kNonPreemptibleOverQuota:
      return (detail.empty() ? "non-preemptible job" : detail) + " over quota of queue " + queue +
             ": " + resource + " " + FormatResourceAmount(resource, requested) +
             " requested, quota leaves " + FormatResourceAmount(resource, available);
    case ReasonKind::kQueueMissing:
      return "queue " + queue + " does not exist";
    case ReasonKind::kNotReady:
      return "gang not ready: " + std::to_string(placed) + " live pods, minMember " +
             std::to_string(required);
    case ReasonKind::kNoNodes:
      return "no nodes in the cluster";
    case ReasonKind::kPreemptionDelay:
      return "preemption delay has not elapsed: may not evict other workloads yet";
    case ReasonKind::kNoVictims:
      return detail;
    case ReasonKind::kTopology:
      return TopologyMessage(*this);
  }
  return detail;
}

bool IsStaticMismatch(FitCode code) {
  switch (code) {
    case FitCode::kNodeSelectorMismatch:
    case FitCode::kNodeAffinityMismatch:
    case FitCode::kTaintNotTolerated:
    case FitCode::kGpuSharingUnsupported:
      return true;
    default:
      return false;
  }
}

namespace {

// The node offering the most in one zone (the first such verdict on ties: node order).
void NoteNumaBest(Reason& r, const NodeVerdict& v, bool first) {
  if (!first && v.shortage.have <= r.available) return;
  r.requested = v.shortage.need;
  r.available = v.shortage.have;
  r.domain = v.detail;
}

}  // namespace

std::vector<Reason> SummariseVerdicts(const std::vector<NodeVerdict>& verdicts) {
  std::map<std::tuple<int, std::string, std::string>, Reason> groups;
  for (const NodeVerdict& v : verdicts) {
    if (v.Fits()) continue;
    const bool numa = v.code == FitCode::kNumaUnaligned;
    const bool shortage = v.code == FitCode::kInsufficientResources || (numa && v.shortage.need);
    const std::string resource = shortage ? v.shortage.Name() : "";
    const std::string detail = shortage || numa ? "" : v.detail;
    auto key = std::make_tuple(static_cast<int>(v.code), resource, detail);
    auto [it, inserted] = groups.try_emplace(key);
    Reason& r = it->second;
    const int64_t short_by = v.shortage.need - v.shortage.have;
    if (inserted) {
      r.kind = ReasonKind::kNodes;
      r.code = v.code;
      r.resource = resource;
      r.detail = detail;
      r.short_by = short_by;
    } else {
      r.short_by = std::min(r.short_by, short_by);
    }
    if (numa) NoteNumaBest(r, v, inserted);
    ++r.nodes;
    if (v.never) ++r.never_nodes;
  }
  std::vector<Reason> out;
  for (auto& [k, r] : groups) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(),
                   [](const Reason& a, const Reason& b) { return a.nodes > b.nodes; });
  return out;
}

std::string JoinReasons(const std::vector<Reason>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r.Message();
  return out;
}

}  // namespace kai
