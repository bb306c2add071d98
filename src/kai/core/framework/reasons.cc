#include "kai/core/framework/reasons.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

#include "kai/core/resource/quantity.h"

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
    case FitCode::kDraClaim:
      return "ResourceClaim";
    case FitCode::kHostPortConflict:
      return "HostPortConflict";
    case FitCode::kVolumeBinding:
      return "VolumeBinding";
    case FitCode::kVolumeLimit:
      return "VolumeLimit";
  }
  return "Unknown";
}

std::string FormatResourceAmount(const std::string& resource, int64_t amount) {
  if (resource == "cpu" || resource == "nvidia.com/gpu") return FormatMilli(amount);
  if (resource == "memory") return FormatBytes(amount);
  return std::to_string(amount);
}

std::string Reason::KindName() const {
  switch (kind()) {
    case ReasonKind::kGang:
      return "Gang";
    case ReasonKind::kNodes:
      return FitCodeName(As<NodesReason>()->code);
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
      // A search a bound stopped proved nothing: its own name, for conditions and events.
      return As<DisruptionReason>()->outcome == DisruptionOutcome::kGaveUp ? "SearchBudgetExhausted"
                                                                           : "NoVictims";
    case ReasonKind::kTopology:
      return "Topology";
  }
  return "Unknown";
}

const QueueCapReason* Reason::QueueCap() const {
  if (const auto* r = As<OverLimitReason>()) return r;
  return As<NonPreemptibleOverQuotaReason>();
}

namespace {

std::string NodeCount(int n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// "no node has 4 gpu in one NUMA zone (best: 2 on node-7)".
std::string NumaMessage(const NodesReason& r) {
  if (r.resource.empty()) {
    return "no NUMA zone mask the Topology Manager admits on " + NodeCount(r.nodes);
  }
  return "no node has " + FormatResourceAmount(r.resource, r.requested) + " " + r.resource +
         " in one NUMA zone (best: " + FormatResourceAmount(r.resource, r.available) + " on " +
         r.best_node + ")";
}

std::string Render(const NodesReason& r) {
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
    case FitCode::kDraClaim:
      return r.detail + " on " + NodeCount(r.nodes);
    case FitCode::kNumaUnaligned:
      return NumaMessage(r);
    case FitCode::kHostPortConflict:
      return "host port " + r.detail + " in use on " + NodeCount(r.nodes);
    case FitCode::kVolumeBinding:
      return r.detail + " on " + NodeCount(r.nodes);
    case FitCode::kVolumeLimit:
      return "volume attach limit reached on " + NodeCount(r.nodes) + " (" + r.detail + ")";
    case FitCode::kFits:
      if (!r.detail.empty()) return r.detail;
      break;
  }
  return "fits on " + NodeCount(r.nodes);
}

std::string Render(const GangReason& r) {
  return (r.sub_group.empty() ? "gang" : "sub-group " + r.sub_group) + " needs " +
         std::to_string(r.required) + " pods; resources found for " + std::to_string(r.placed);
}

// "<resource> <requested> requested, <cap> leaves <available>".
std::string CapAmounts(const QueueCapReason& r, const char* cap) {
  return r.resource + " " + FormatResourceAmount(r.resource, r.requested) + " requested, " + cap +
         " leaves " + FormatResourceAmount(r.resource, r.available);
}

std::string Render(const OverLimitReason& r) {
  return "queue " + r.queue + " over limit: " + CapAmounts(r, "limit");
}

std::string Render(const NonPreemptibleOverQuotaReason& r) {
  return (r.subject.empty() ? "non-preemptible job" : r.subject) + " over quota of queue " +
         r.queue + ": " + CapAmounts(r, "quota");
}

std::string Render(const QueueMissingReason& r) { return "queue " + r.queue + " does not exist"; }

std::string Render(const NotReadyReason& r) {
  return "gang not ready: " + std::to_string(r.live) + " live pods, minMember " +
         std::to_string(r.min_member);
}

std::string Render(const NoNodesReason&) { return "no nodes in the cluster"; }

std::string Render(const PreemptionDelayReason&) {
  return "preemption delay has not elapsed: may not evict other workloads yet";
}

// "4 candidate victim jobs hold 8 GPUs; 12 scenarios simulated, 3 pruned".
std::string SearchSummary(const DisruptionReason& r) {
  return std::to_string(r.candidate_jobs) + " candidate victim jobs hold " +
         FormatMilli(r.candidate_milli_gpu) + " GPUs; " + std::to_string(r.scenarios_tried) +
         " scenarios simulated, " + std::to_string(r.scenarios_pruned) + " pruned";
}

std::string Render(const DisruptionReason& r) {
  switch (r.outcome) {
    case DisruptionOutcome::kNotEligible:
      return r.action + " not attempted: " + r.rule;
    case DisruptionOutcome::kNoCandidates:
      return r.action + ": no workload qualifies as a victim (" + r.rule + ")";
    case DisruptionOutcome::kGaveUp:
      return r.action + " gave up: " + SearchSummary(r) + " (" + std::to_string(r.search_work) +
             " work units), the limit (" + r.bound + ") reached before any fit";
    case DisruptionOutcome::kNoFit:
      return r.action + " impossible: " + SearchSummary(r) + ", none fit the job";
  }
  return r.action;
}

std::string Amount(const TopologyReason& r, int64_t amount) {
  return FormatResourceAmount(r.resource, amount) + " " + r.resource;
}

std::string ScopeFree(const TopologyReason& r) {
  return Amount(r, r.scope_free) + " free in " + (r.scope == "cluster" ? "the cluster" : r.scope);
}

// "16 nvidia.com/gpu free in k8s.io/block b1, no k8s.io/rack can hold the 8 pods (best: rack1, room
// for 6)".
std::string Render(const TopologyReason& r) {
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
  return std::visit([](const auto& r) { return Render(r); }, payload_);
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
void NoteNumaBest(NodesReason& r, const NodeVerdict& v, bool first) {
  if (!first && v.shortage.have <= r.available) return;
  r.requested = v.shortage.need;
  r.available = v.shortage.have;
  r.best_node = v.detail;
}

}  // namespace

std::vector<Reason> SummariseVerdicts(const std::vector<NodeVerdict>& verdicts) {
  std::map<std::tuple<int, std::string, std::string>, NodesReason> groups;
  for (const NodeVerdict& v : verdicts) {
    if (v.Fits()) continue;
    const bool numa = v.code == FitCode::kNumaUnaligned;
    const bool shortage = v.code == FitCode::kInsufficientResources || (numa && v.shortage.need);
    const std::string resource = shortage ? v.shortage.Name() : "";
    const std::string detail = shortage || numa ? "" : v.detail;
    auto key = std::make_tuple(static_cast<int>(v.code), resource, detail);
    auto [it, inserted] = groups.try_emplace(key);
    NodesReason& r = it->second;
    const int64_t short_by = v.shortage.need - v.shortage.have;
    if (inserted) {
      r = NodesReason{.code = v.code, .resource = resource, .short_by = short_by, .detail = detail};
    } else {
      r.short_by = std::min(r.short_by, short_by);
    }
    if (numa) NoteNumaBest(r, v, inserted);
    ++r.nodes;
    if (v.never) ++r.never_nodes;
  }
  std::vector<NodesReason> sorted;
  for (auto& [k, r] : groups) sorted.push_back(std::move(r));
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const NodesReason& a, const NodesReason& b) { return a.nodes > b.nodes; });
  return std::vector<Reason>(std::make_move_iterator(sorted.begin()),
                             std::make_move_iterator(sorted.end()));
}

std::string JoinReasons(const std::vector<Reason>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r.Message();
  return out;
}

}  // namespace kai
