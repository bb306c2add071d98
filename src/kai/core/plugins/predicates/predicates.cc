#include "kai/core/plugins/predicates/predicates.h"

#include <algorithm>
#include <charconv>

#include "kai/core/framework/session.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/podaffinity/podaffinity.h"
#include "kai/core/plugins/predicates/volumes.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai::plugins {
namespace {

bool ParseInt(const std::string& s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool Tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.key.empty()) return t.op == "Exists";  // empty key with Exists tolerates everything
  if (t.key != taint.key) return false;
  return t.op == "Exists" || t.value == taint.value;
}

bool AsksMig(const SnapPod& pod) {
  return std::any_of(pod.request.scalars.begin(), pod.request.scalars.end(), [](const auto& e) {
    return e.second > 0 && ResourceName(e.first).starts_with(keys::kMigResourcePrefix);
  });
}

NodeVerdict Unsupported(std::string detail) {
  return {FitCode::kGpuSharingUnsupported, {}, std::move(detail)};
}

// Whether the node serves this kind of GPU request (KAI's PredicateByNodeResourcesType).
NodeVerdict CheckResourceType(const SnapPod& pod, const SnapNode& node) {
  if (pod.legacy_mig) return Unsupported("MIG requested by annotation (legacy) is not scheduled");
  if (IsCpuOnly(pod)) return {};
  const bool mig = AsksMig(pod);
  if (!node.mig_enabled) {
    return mig ? Unsupported("MIG request on a node without MIG") : NodeVerdict{};
  }
  if (mig && node.legacy_mig_pods > 0) {
    return Unsupported("MIG request on a node running legacy MIG pods");
  }
  if (node.mig_strategy == MigStrategy::kSingle && (pod.share.IsShared() || mig)) {
    return Unsupported("only whole-GPU requests run on a node with MIG strategy single");
  }
  if (node.mig_strategy == MigStrategy::kMixed && !mig) {
    return Unsupported("only MIG requests run on a node with MIG strategy mixed");
  }
  return {};
}

// A pod that turns a whole GPU into a shared group also needs a slot for the group's
// reservation pod (KAI's checkMaxPodsWithGpuGroupReservation).
bool ReservationSlotMissing(const Session& s, PodId pod, NodeId node_id) {
  const SnapNode& node = s.snap().nodes[node_id];
  if (node.allocatable.pods == 0) return false;
  if (node.idle.pods + node.releasing.pods >= 2) return false;
  auto choice = s.ChooseSharedGpus(pod, node_id, /*pipeline_only=*/false);
  if (!choice || choice->releasing) choice = s.ChooseSharedGpus(pod, node_id, true);
  return !choice || choice->new_group;
}

NodeVerdict CheckGpuSharing(const Session& s, PodId pod_id, NodeId node_id) {
  const SnapPod& pod = s.snap().pods[pod_id];
  const SnapNode& node = s.snap().nodes[node_id];
  if (NodeVerdict v = CheckResourceType(pod, node); !v.Fits()) return v;
  if (pod.share.kind == GpuShareKind::kMemory && !node.gpu_memory_synced) {
    return Unsupported("gpu-memory request on a node whose GPU memory is unknown");
  }
  if (pod.share.IsShared() && ReservationSlotMissing(s, pod_id, node_id)) {
    return {FitCode::kTooManyPods, {}, "no pod slot left for the GPU reservation pod"};
  }
  return {};
}

NodeVerdict Check(const Session& s, PodId pod_id, NodeId node_id) {
  const SnapNode& node = s.snap().nodes[node_id];
  if (NodeVerdict v = CheckGpuSharing(s, pod_id, node_id); !v.Fits()) return v;
  if (!node.unusable_reason.empty()) {
    return {FitCode::kNodeUnusable, {}, node.unusable_reason};
  }
  // Without selectors, and on a node without taints, there is nothing of the pod's to check:
  // the pod's object (a cache miss per task) is not fetched then.
  if (!s.snap().pods[pod_id].selects_nodes && node.obj->taints.empty()) return {};
  const PodObject& pod = *s.snap().pods[pod_id].obj;
  if (!MatchesNodeSelector(pod.node_selector, *node.obj)) {
    return {FitCode::kNodeSelectorMismatch, {}, ""};
  }
  if (!MatchesRequiredNodeAffinity(pod.required_node_affinity, *node.obj)) {
    return {FitCode::kNodeAffinityMismatch, {}, ""};
  }
  if (const Taint* t = UntoleratedTaint(pod.tolerations, *node.obj)) {
    return {FitCode::kTaintNotTolerated, {}, t->key + "=" + t->value + ":" + t->effect};
  }
  return {};
}

// KAI's order: node ports before the node filters, volumes after inter-pod affinity.
NodeVerdict CheckPortsAndNode(const Session& s, PodId pod, NodeId node) {
  if (NodeVerdict v = CheckHostPorts(s, pod, node); !v.Fits()) return v;
  return Check(s, pod, node);
}

class PredicatesPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddPredicate(CheckPortsAndNode);
    affinity_ = std::make_unique<InterPodAffinity>(s);
    s.AddPredicate([this](const Session& ss, PodId pod, NodeId node) {
      return affinity_->Check(ss, pod, node);
    });
    volumes_ = std::make_unique<VolumePlacement>(s);
    s.AddPredicate([this](const Session& ss, PodId pod, NodeId node) {
      return volumes_->Check(ss, pod, node);
    });
    if (!s.snap().storage) return;  // no volume to take or give back
    s.AddAllocateHandler([this](Session& ss, PodId pod) { volumes_->Allocated(ss, pod); });
    s.AddDeallocateHandler([this](Session& ss, PodId pod) { volumes_->Deallocated(ss, pod); });
  }

 private:
  std::unique_ptr<InterPodAffinity> affinity_;
  std::unique_ptr<VolumePlacement> volumes_;
};

}  // namespace

bool MatchesRequirement(const SelectorRequirement& req, const Labels& labels) {
  auto it = labels.find(req.key);
  const bool has = it != labels.end();
  const auto& vals = req.values;
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  if (req.op == "In") return has && std::find(vals.begin(), vals.end(), it->second) != vals.end();
  if (req.op == "NotIn")
    return !has || std::find(vals.begin(), vals.end(), it->second) == vals.end();
  if (req.op == "Gt" || req.op == "Lt") {
    int64_t have = 0, want = 0;
    if (!has || vals.size() != 1 || !ParseInt(it->second, have) || !ParseInt(vals[0], want)) {
      return false;
    }
    return req.op == "Gt" ? have > want : have < want;
  }
  return false;
}

bool MatchesNodeSelector(const Labels& selector, const NodeObject& node) {
  for (const auto& [k, v] : selector) {
    auto it = node.meta.labels.find(k);
    if (it == node.meta.labels.end() || it->second != v) return false;
  }
  return true;
}

bool MatchesRequiredNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                 const NodeObject& node) {
  if (terms.empty()) return true;
  const Labels fields = {{"metadata.name", node.meta.name}};
  for (const NodeSelectorTerm& term : terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;  // matches nothing
    const bool exprs =
        std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                    [&](const auto& r) { return MatchesRequirement(r, node.meta.labels); });
    const bool flds = std::all_of(term.match_fields.begin(), term.match_fields.end(),
                                  [&](const auto& r) { return MatchesRequirement(r, fields); });
    if (exprs && flds) return true;
  }
  return false;
}

const Taint* UntoleratedTaint(const std::vector<Toleration>& tolerations, const NodeObject& node) {
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool ok = std::any_of(tolerations.begin(), tolerations.end(),
                                [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!ok) return &taint;
  }
  return nullptr;
}

std::unique_ptr<Plugin> MakePredicates() { return std::make_unique<PredicatesPlugin>(); }

}  // namespace kai::plugins
