// topology: keeps a job (or one of its SubGroups) inside one domain of a Topology (KAI
// plugins/topology, kai-semantics.md §6.3).
//   SubsetNodes: the candidate domains, from the preferred level up to the required one (the root
//     when none is required), deepest first; within a level the fullest domain that fits first
//     (bin-packing). A required level is a hard boundary; a preferred one falls back to larger
//     domains. With pods of the group already placed, a required level keeps the domains holding
//     them.
//   NodeScores: inside the chosen domain, nodes of the preferred-level domain with the most free
//     capacity score highest: floor(10 (i+1) / n) x 1e5 for the i-th of n domains in packing order.
#include <cmath>

#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/plugins/topology/fit.h"
#include "kai/core/plugins/topology/tree.h"

namespace kai::plugins {
namespace {

using topology::Demand;
using topology::DomainId;
using topology::Evaluator;
using topology::kRootDomain;
using topology::kRootLevel;
using topology::Tree;

// The job's SubGroup tree as the plugin needs it (root = the PodGroup's own constraint).
const TopologyConstraintSpec* ConstraintOf(const SnapJob& job, int32_t sub_group) {
  return job.sub_groups[sub_group].topology;
}
int32_t ParentOf(const SnapJob& job, int32_t sub_group) { return job.sub_groups[sub_group].parent; }
int32_t SubGroupOf(const SnapPod& pod) { return pod.sub_group; }
size_t SubGroupCount(const SnapJob& job) { return job.sub_groups.size(); }
// Name of a SubGroup for reasons; empty for the root (the whole PodGroup).
std::string_view SubGroupName(const SnapJob& job, int32_t sub_group) {
  return job.sub_groups[sub_group].name;
}
// Pods of the PodSets under the group that hold one of its tasks (KAI's relevant podSets).
std::vector<PodId> RelevantPods(const Snapshot& snap, const TaskGroup& group) {
  const SnapJob& job = snap.jobs[group.job];
  std::vector<int32_t> sets;
  for (PodId t : group.tasks) {
    const int32_t sg = snap.pods[t].sub_group;
    if (std::find(sets.begin(), sets.end(), sg) == sets.end()) sets.push_back(sg);
  }
  std::vector<PodId> pods;
  for (int32_t sg : sets) {
    const std::span<const PodId> set = job.PodsOf(sg);
    pods.insert(pods.end(), set.begin(), set.end());
  }
  return pods;
}

// Levels of a constraint, resolved against its topology (label or alias).
struct Levels {
  std::optional<int> required, preferred;
};

// Node scores of the SubGroups of the job being placed (KAI keys them by SubGroup).
class GroupScores {
 public:
  void Reset(size_t groups) {
    for (auto& s : by_group_) s.clear();
    by_group_.resize(groups);
  }
  std::vector<double>& For(int32_t group, size_t nodes) {
    auto& s = by_group_[group];
    s.assign(nodes, kAbsent);
    return s;
  }
  const std::vector<double>* Find(int32_t group) const {
    if (group < 0 || static_cast<size_t>(group) >= by_group_.size()) return nullptr;
    return by_group_[group].empty() ? nullptr : &by_group_[group];
  }
  static constexpr double kAbsent = -1;

 private:
  std::vector<std::vector<double>> by_group_;
};

class TopologyPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    for (const TopologyObject* t : s.snap().topologies)
      trees_.push_back(topology::BuildTree(*t, s.snap()));
    s.AddJobAttempt(
        [this](Session& ss, JobId job) { scores_.Reset(SubGroupCount(ss.snap().jobs[job])); });
    s.AddSubsetNodes([this](Session& ss, const TaskGroup& group, std::span<const NodeId> nodes,
                            NodeSubsets& out) { Subset(ss, group, nodes, out); });
    s.AddNodeScores(
        [this](const Session& ss, PodId pod, std::span<double> out) { Score(ss, pod, out); },
        [this](const Session& ss, PodId pod, std::string&) { return !ScoresOf(ss, pod); });
  }

 private:
  Tree* FindTree(std::string_view name) {
    for (Tree& t : trees_) {
      if (t.name() == name) return &t;
    }
    return nullptr;
  }

  void Subset(Session& s, const TaskGroup& group, std::span<const NodeId> nodes, NodeSubsets& out) {
    const SnapJob& job = s.snap().jobs[group.job];
    const TopologyConstraintSpec* c = ConstraintOf(job, group.sub_group);
    if (!c || c->topology.empty() || group.tasks.empty()) {
      out.sets.push_back(nodes);
      return;
    }
    Tree* tree = FindTree(c->topology);
    if (!tree) {
      TopologyReason r = ConfigReason(c->topology, "the topology does not exist");
      r.sub_group = SubGroupName(job, group.sub_group);
      out.reasons.push_back(std::move(r));
      return;
    }
    const size_t before = out.reasons.size();
    if (auto levels = ResolveLevels(*tree, *c, out)) Place(s, *tree, group, *levels, nodes, out);
    for (size_t i = before; i < out.reasons.size(); ++i) {
      if (auto* r = out.reasons[i].As<TopologyReason>())
        r->sub_group = SubGroupName(job, group.sub_group);
    }
  }

  // KAI calculateRelevantDomainLevels: a level finer than the required one is an error too.
  std::optional<Levels> ResolveLevels(const Tree& tree, const TopologyConstraintSpec& c,
                                      NodeSubsets& out) const {
    Levels l;
    for (auto [name, slot] :
         {std::pair{&c.required_level, &l.required}, std::pair{&c.preferred_level, &l.preferred}}) {
      if (name->empty()) continue;
      *slot = tree.FindLevel(*name);
      if (!*slot) {
        out.reasons.push_back(
            ConfigReason(tree.name(), "no level named \"" + *name + "\" in the topology"));
        return std::nullopt;
      }
    }
    if (!l.required && !l.preferred) {
      out.reasons.push_back(ConfigReason(tree.name(), "the constraint names no level"));
      return std::nullopt;
    }
    if (l.required && l.preferred && *l.preferred < *l.required) {
      out.reasons.push_back(ConfigReason(tree.name(), "the preferred level " + c.preferred_level +
                                                          " is coarser than the required level " +
                                                          c.required_level));
      return std::nullopt;
    }
    return l;
  }

  static TopologyReason ConfigReason(std::string_view topology, std::string detail) {
    return TopologyReason{.topology = std::string(topology), .detail = std::move(detail)};
  }

  void Place(Session& s, Tree& tree, const TaskGroup& group, const Levels& levels,
             std::span<const NodeId> nodes, NodeSubsets& out) {
    const Snapshot& snap = s.snap();
    MarkInput(tree, nodes, snap.nodes.size());
    const DomainId scope = LowestCommonDomain(tree, levels.preferred);
    const Demand demand = topology::DemandOf(snap, group.tasks);
    const Evaluator eval(tree, snap, demand, scope);
    if (!eval.Fits(scope)) {
      out.reasons.push_back(ScopeReason(tree, eval, scope));
      return;
    }
    const std::optional<int> max_level = levels.preferred ? levels.preferred : levels.required;
    topology::SortForPacking(tree, eval, scope, *max_level);
    if (levels.preferred) SetScores(tree, group.sub_group, scope, *levels.preferred, snap);
    const std::vector<DomainId> allowed = DomainsHoldingGroup(s, tree, group, levels.required);
    std::vector<DomainId> candidates;
    std::vector<DomainId> last_level;
    for (int level = levels.preferred.value_or(*levels.required);
         level >= levels.required.value_or(kRootLevel); --level) {
      last_level.clear();
      topology::CollectLevel(tree, kRootDomain, level, last_level);
      for (DomainId d : last_level) {
        if (!Allowed(tree, allowed, d)) continue;
        if (eval.Fits(d)) candidates.push_back(d);
      }
    }
    if (candidates.empty()) {
      std::erase_if(last_level, [&](DomainId d) { return !Allowed(tree, allowed, d); });
      out.reasons.push_back(NoDomainReason(tree, eval, scope, last_level));
      return;
    }
    for (DomainId d : candidates) out.Add(InputNodesOf(tree, d));
  }

  // Marks the input nodes that belong to the topology.
  void MarkInput(const Tree& tree, std::span<const NodeId> nodes, size_t all) {
    in_input_.assign(all, 0);
    valid_.clear();
    for (NodeId n : nodes) {
      if (tree.leaf_of_node[n] < 0) continue;
      in_input_[n] = 1;
      valid_.push_back(n);
    }
  }

  // The deepest domain holding every input node, never below the preferred level (KAI
  // lowestCommonDomainID); the root when no input node is in the topology.
  DomainId LowestCommonDomain(const Tree& tree, std::optional<int> preferred) const {
    if (valid_.empty()) return kRootDomain;
    DomainId common = kRootDomain;
    for (int level = 0; level < tree.depth(); ++level) {
      const DomainId d = tree.AncestorAt(tree.leaf_of_node[valid_.front()], level);
      for (NodeId n : valid_) {
        if (tree.AncestorAt(tree.leaf_of_node[n], level) != d) return common;
      }
      common = d;
      if (preferred && level == *preferred) break;
    }
    return common;
  }

  NodeSet InputNodesOf(const Tree& tree, DomainId d) const {
    NodeSet set;
    for (NodeId n : tree.domains[d].nodes) {
      if (in_input_[n]) set.push_back(n);
    }
    return set;
  }

  void SetScores(const Tree& tree, int32_t group, DomainId scope, int preferred,
                 const Snapshot& snap) {
    std::vector<DomainId> ordered;
    topology::CollectLevel(tree, scope, preferred, ordered);
    std::vector<double>& scores = scores_.For(group, snap.nodes.size());
    const double n = static_cast<double>(ordered.size());
    for (size_t i = 0; i < ordered.size(); ++i) {
      const double score = std::floor(static_cast<double>(i + 1) / n * 10) * scores::kTopology;
      for (NodeId node : tree.domains[ordered[i]].nodes) scores[node] = score;
    }
  }

  // With a required level and pods of the group already placed, only the required-level domains
  // holding those pods (KAI getRelevantDomainsWithAllocatedPods). Empty: no restriction.
  std::vector<DomainId> DomainsHoldingGroup(const Session& s, const Tree& tree,
                                            const TaskGroup& group,
                                            std::optional<int> required) const {
    std::vector<DomainId> out;
    if (!required) return out;
    for (NodeId node : PlacedNodesOfGroup(s, group)) {
      const DomainId leaf = tree.leaf_of_node[node];
      if (leaf < 0) continue;
      const DomainId d = tree.AncestorAt(leaf, *required);
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
    if (out.empty() && HasPlacedPods(s, group)) out.push_back(-1);  // placed outside: none fit
    return out;
  }

  static bool Allowed(const Tree& tree, const std::vector<DomainId>& allowed, DomainId d) {
    if (allowed.empty()) return true;
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](DomainId a) { return a >= 0 && tree.Contains(a, d); });
  }

  static std::vector<NodeId> PlacedNodesOfGroup(const Session& s, const TaskGroup& group) {
    std::vector<NodeId> nodes;
    for (PodId p : RelevantPods(s.snap(), group)) {
      const SnapPod& pod = s.snap().pods[p];
      if (IsActiveAllocated(pod.status) && pod.node != kNone) nodes.push_back(pod.node);
    }
    return nodes;
  }

  static bool HasPlacedPods(const Session& s, const TaskGroup& group) {
    return !PlacedNodesOfGroup(s, group).empty();
  }

  // Reasons name the dominant resource: GPUs when the group asks for them.
  static CoreResource ReportedResource(const Demand& d) {
    if (d.total.milli_gpu > 0) return CoreResource::kGpu;
    if (d.total.milli_cpu > 0) return CoreResource::kCpu;
    if (d.total.memory > 0) return CoreResource::kMemory;
    return CoreResource::kPods;
  }

  static std::string DomainName(const Tree& tree, DomainId d) {
    if (d == kRootDomain) return "cluster";
    const auto& dom = tree.domains[d];
    return tree.LevelName(dom.level) + " " + std::string(dom.value);
  }

  static TopologyReason BaseReason(const Tree& tree, const Evaluator& eval, DomainId scope) {
    const CoreResource r = ReportedResource(eval.demand());
    return TopologyReason{.topology = std::string(tree.name()),
                          .scope = DomainName(tree, scope),
                          .resource = std::string(CoreResourceName(r)),
                          .requested = eval.demand().total.Get(r),
                          .scope_free = eval.At(scope).free.Get(r)};
  }

  static TopologyReason ScopeReason(const Tree& tree, const Evaluator& eval, DomainId scope) {
    return BaseReason(tree, eval, scope);
  }

  // No domain of the last candidate level fits: name the level, the best domain there and what
  // the scope has free.
  static TopologyReason NoDomainReason(const Tree& tree, const Evaluator& eval, DomainId scope,
                                       const std::vector<DomainId>& level_domains) {
    TopologyReason r = BaseReason(tree, eval, scope);
    r.level = level_domains.empty() ? "" : tree.LevelName(tree.domains[level_domains[0]].level);
    if (level_domains.empty()) {
      r.level = "domain";
      return r;
    }
    const CoreResource res = ReportedResource(eval.demand());
    DomainId best = level_domains.front();
    for (DomainId d : level_domains) {
      if (eval.demand().count_pods ? eval.At(d).fit_pods > eval.At(best).fit_pods
                                   : eval.Ratio(d) < eval.Ratio(best)) {
        best = d;
      }
    }
    r.domain = std::string(tree.domains[best].value);
    r.available = eval.At(best).free.Get(res);
    if (eval.demand().count_pods) {
      r.placed = static_cast<int>(std::max<int64_t>(eval.At(best).fit_pods, 0));
      r.required = eval.demand().pods;
    }
    return r;
  }

  // The node scores of the pod's SubGroup or its nearest ancestor with some; null when none.
  const std::vector<double>* ScoresOf(const Session& s, PodId pod) const {
    const SnapPod& p = s.snap().pods[pod];
    if (p.job == kNone) return nullptr;
    const SnapJob& job = s.snap().jobs[p.job];
    const std::vector<double>* scores = nullptr;
    for (int32_t sg = SubGroupOf(p); sg >= 0 && !scores; sg = ParentOf(job, sg)) {
      scores = scores_.Find(sg);
    }
    return scores;
  }

  void Score(const Session& s, PodId pod, std::span<double> out) const {
    const std::vector<double>* scores = ScoresOf(s, pod);
    if (!scores) return;
    for (NodeId n : s.CandidateNodes()) {
      const double v = (*scores)[n];
      // KAI drops a node its topology scoring does not know.
      out[n] += v == GroupScores::kAbsent ? -std::numeric_limits<double>::infinity() : v;
    }
  }

  std::vector<Tree> trees_;
  GroupScores scores_;
  std::vector<char> in_input_;
  std::vector<NodeId> valid_;
};

}  // namespace

std::unique_ptr<Plugin> MakeTopology() { return std::make_unique<TopologyPlugin>(); }

}  // namespace kai::plugins
