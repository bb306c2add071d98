// numa: NUMA-aware placement (KAI's numa plugin; opt-in). On nodes whose kubelet Topology Manager
// rejects unaligned pods (restricted, single-numa-node) a pod the kubelet aligns (Guaranteed, or
// asking a device the zones report) fits only where its policy admits a zone mask; on those and
// best-effort nodes, nodes where it spans fewer zones score higher. The arithmetic and the
// per-zone ledger live in snapshot/numa.h; this plugin turns placement prediction on and adds
// the predicate and the score.
#include <limits>

#include "kai/explain/reasons.h"
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"
#include "kai/plugins/scores.h"
#include "kai/snapshot/numa.h"

namespace kai::plugins {
namespace {

const PodNumaRequest* RequestOf(const Session& s, PodId pod) {
  const SnapPod& p = s.snap().pods[pod];
  return p.obj == nullptr || p.obj->numa.empty() ? nullptr : &p.obj->numa[0];
}

NodeVerdict Check(const Session& s, PodId pod, NodeId node) {
  const NodeNuma* topo = s.snap().numa.Of(node);
  const PodNumaRequest* req = topo ? RequestOf(s, pod) : nullptr;
  if (!req || !NumaFiltered(*topo, *req)) return {};
  const NumaFit fit = EvaluateNuma(*topo, *req, false, nullptr);
  if (fit.fits) return {};
  NodeVerdict v{FitCode::kNumaUnaligned, {}, std::string(s.snap().nodes[node].name)};
  v.shortage = {fit.short_resource.is_core, fit.short_resource.core, fit.short_resource.scalar,
                fit.need, fit.best};
  v.never = !EvaluateNuma(*topo, *req, true, nullptr).fits;
  return v;
}

// KAI's span: a node without a topology counts as the cluster's widest; an unmanaged node (or
// one that does not align this pod) as all its zones.
std::optional<int> AssumedSpan(const Snapshot& snap, const PodNumaRequest& req, NodeId node) {
  const NodeNuma* topo = snap.numa.Of(node);
  if (!topo) return snap.numa.max_zones;
  if (!NumaScored(*topo, req)) return static_cast<int>(topo->zones.size());
  const NumaFit fit = EvaluateNuma(*topo, req, false, nullptr);
  if (!fit.fits) return std::nullopt;
  return fit.span;
}

// KAI's wantsNuma: a Guaranteed pod, or one asking a device some scored node reports.
bool WantsNuma(const Snapshot& snap, const PodNumaRequest& req) {
  if (req.guaranteed) return true;
  for (const NodeNuma& t : snap.numa.topologies) {
    if (NumaScored(t, req)) return true;
  }
  return false;
}

void Score(const Session& s, PodId pod, std::span<double> out) {
  const Snapshot& snap = s.snap();
  const PodNumaRequest* req = RequestOf(s, pod);
  if (!req || snap.numa.max_zones == 0 || !WantsNuma(snap, *req)) return;
  for (NodeId n : s.ScoredNodes()) {
    if (const auto span = AssumedSpan(snap, *req, n); span && *span > 0) {
      out[n] += scores::kNuma / *span;
    }
  }
}

class NumaPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    if (!s.snap().numa.Any()) return;
    s.snap().numa.place = true;
    s.AddPredicate(Check);
    s.AddNodeScores(Score);  // reads the zone ledger: never cached
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeNuma() { return std::make_unique<NumaPlugin>(); }

}  // namespace kai::plugins
