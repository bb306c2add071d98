// numa: NUMA-aware placement (KAI's numa plugin; opt-in). On nodes whose kubelet Topology Manager
// rejects unaligned pods (restricted, single-numa-node) a pod the kubelet aligns (Guaranteed, or
// asking a device the zones report) fits only where its policy admits a zone mask; on those and
// best-effort nodes, nodes where it spans fewer zones score higher. The arithmetic and the
// per-zone ledger live in snapshot/numa.h; this plugin turns placement prediction on and adds
// the predicate and the score.
#include <limits>
#include <string>
#include <vector>

#include "kai/core/framework/reasons.h"
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/snapshot/numa.h"

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

template <class T>
void Append(std::string& key, T v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void AppendResources(std::string& key, const Resources& r) {
  for (int64_t v : {r.milli_cpu, r.memory, r.milli_gpu, r.pods}) Append(key, v);
  Append(key, r.scalars.size());
  for (const auto& [id, amount] : r.scalars) {
    Append(key, id);
    Append(key, amount);
  }
}

// The score of a node is a function of its own zones (which change only with the pods placed on
// it, as the node's accounting does) and of what the pod asks to be aligned: cacheable by that.
bool ScoreKey(const Session& s, PodId pod, std::string& key) {
  const PodNumaRequest* req = RequestOf(s, pod);
  Append(key, static_cast<int8_t>(req ? (req->guaranteed ? 2 : 1) : 0));
  if (!req) return true;
  AppendResources(key, req->pod_scope);
  for (const std::vector<Resources>* units : {&req->concurrent, &req->serial}) {
    Append(key, units->size());
    for (const Resources& r : *units) AppendResources(key, r);
  }
  return true;
}

class NumaPlugin : public Plugin {
 public:
  NumaPlugin(std::vector<std::string> ignore, bool reconstruct)
      : ignore_(std::move(ignore)), reconstruct_(reconstruct) {}

  void OnSessionOpen(Session& s) override {
    if (!s.snap().numa.Any()) return;
    if (!ignore_.empty() || !reconstruct_) ApplyNumaArguments(s.snap().numa, ignore_, reconstruct_);
    s.snap().numa.place = true;
    s.AddPredicate(Check);
    s.AddNodeScores(Score, ScoreKey);
  }

 private:
  std::vector<std::string> ignore_;
  bool reconstruct_;
};

// ignoreList: resource names, comma-separated (spaces around them ignored).
std::vector<std::string> IgnoreList(const PluginArguments& args) {
  std::vector<std::string> out;
  auto it = args.find("ignoreList");
  if (it == args.end()) return out;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) out.emplace_back(name);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Plugin>> MakeNuma(const PluginArguments& args) {
  bool reconstruct = true;
  if (auto it = args.find("reconstructAvailable"); it != args.end()) {
    if (it->second != "true" && it->second != "false") {
      return Error{"argument reconstructAvailable: expected true or false, got \"" + it->second +
                   "\""};
    }
    reconstruct = it->second == "true";
  }
  return std::unique_ptr<Plugin>(std::make_unique<NumaPlugin>(IgnoreList(args), reconstruct));
}

}  // namespace kai::plugins
