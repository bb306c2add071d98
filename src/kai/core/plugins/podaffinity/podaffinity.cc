#include "kai/core/plugins/podaffinity/podaffinity.h"

#include <algorithm>
#include <memory>

#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/predicates/predicates.h"
#include "kai/core/plugins/scores.h"

namespace kai::plugins {
namespace {

bool InNamespaces(const PodAffinityTerm& term, std::string_view pod_ns, std::string_view owner_ns) {
  if (term.all_namespaces) return true;
  if (term.namespaces.empty()) return pod_ns == owner_ns;
  return std::find(term.namespaces.begin(), term.namespaces.end(), pod_ns) != term.namespaces.end();
}

bool SelectorMatches(const LabelSelector& sel, const Labels& labels) {
  if (sel.matches_nothing) return false;
  for (const auto& [k, v] : sel.match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return std::all_of(sel.match_expressions.begin(), sel.match_expressions.end(),
                     [&](const SelectorRequirement& r) { return MatchesRequirement(r, labels); });
}

std::optional<std::string_view> LabelOf(const SnapNode& node, std::string_view key) {
  auto it = node.obj->meta.labels.find(key);
  if (it == node.obj->meta.labels.end()) return std::nullopt;
  return std::string_view(it->second);
}

template <class F>
void ForEachPlacedPod(const Session& s, F f) {
  for (const SnapNode& node : s.snap().nodes) {
    for (PodId p : node.pods) f(s.snap().pods[p], node);
  }
}

bool HasPair(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
             const SnapNode& node) {
  return std::any_of(pairs.begin(), pairs.end(), [&](const auto& kv) {
    auto v = LabelOf(node, kv.first);
    return v && *v == kv.second;
  });
}

bool MatchesAll(const PodObject& pod, const std::vector<PodAffinityTerm>& terms,
                std::string_view owner_ns) {
  return std::all_of(terms.begin(), terms.end(),
                     [&](const PodAffinityTerm& t) { return PodMatchesTerm(pod, t, owner_ns); });
}

}  // namespace

bool PodMatchesTerm(const PodObject& pod, const PodAffinityTerm& term, std::string_view owner_ns) {
  return InNamespaces(term, pod.meta.ns, owner_ns) &&
         SelectorMatches(term.selector, pod.meta.labels);
}

InterPodAffinity::InterPodAffinity(const Session& s) {
  for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.requires_pod_affinity && !pod.obj->required_pod_anti_affinity.empty()) {
      anti_affinity_pods_.push_back(p);
    }
  }
}

void InterPodAffinity::AddExistingAntiAffinity(const Session& s, const PodObject& pod,
                                               PodState& st) const {
  for (PodId e : anti_affinity_pods_) {
    const SnapPod& other = s.snap().pods[e];
    if (other.node == kNone || !IsActiveUsed(other.status)) continue;
    const SnapNode& node = s.snap().nodes[other.node];
    for (const PodAffinityTerm& t : other.obj->required_pod_anti_affinity) {
      if (!PodMatchesTerm(pod, t, other.ns)) continue;
      if (auto v = LabelOf(node, t.topology_key))
        st.forbidden_by_others.emplace_back(t.topology_key, *v);
    }
  }
}

void InterPodAffinity::AddOwnTerms(const Session& s, const PodObject& pod, PodState& st) const {
  const auto& affinity = pod.required_pod_affinity;
  const auto& anti = pod.required_pod_anti_affinity;
  if (affinity.empty() && anti.empty()) return;
  for (const PodAffinityTerm& t : affinity) st.affinity.push_back({t.topology_key, {}});
  st.self_match = MatchesAll(pod, affinity, pod.meta.ns);
  ForEachPlacedPod(s, [&](const SnapPod& other, const SnapNode& node) {
    for (const PodAffinityTerm& t : anti) {
      if (!PodMatchesTerm(*other.obj, t, pod.meta.ns)) continue;
      if (auto v = LabelOf(node, t.topology_key))
        st.forbidden_by_self.emplace_back(t.topology_key, *v);
    }
    if (affinity.empty() || !MatchesAll(*other.obj, affinity, pod.meta.ns)) return;
    for (AffinityTerm& term : st.affinity) {
      if (auto v = LabelOf(node, term.key)) {
        term.values.push_back(*v);
        st.any_match = true;
      }
    }
  });
}

const InterPodAffinity::PodState& InterPodAffinity::StateOf(const Session& s, PodId pod) {
  if (cache_.pod == pod && cache_.version == s.PlacementVersion()) return cache_;
  cache_ = PodState{.pod = pod, .version = s.PlacementVersion()};
  const PodObject& obj = *s.snap().pods[pod].obj;
  AddExistingAntiAffinity(s, obj, cache_);
  AddOwnTerms(s, obj, cache_);
  return cache_;
}

NodeVerdict InterPodAffinity::Check(const Session& s, PodId pod, NodeId node_id) {
  if (anti_affinity_pods_.empty() && !s.snap().pods[pod].requires_pod_affinity) return {};
  const PodState& st = StateOf(s, pod);
  const SnapNode& node = s.snap().nodes[node_id];
  if (HasPair(st.forbidden_by_others, node)) {
    return {FitCode::kPodAffinity, {}, "existing pods' anti-affinity"};
  }
  if (HasPair(st.forbidden_by_self, node)) return {FitCode::kPodAffinity, {}, "anti-affinity"};
  bool all_present = true;
  for (const AffinityTerm& t : st.affinity) {
    auto v = LabelOf(node, t.key);
    if (!v) return {FitCode::kPodAffinity, {}, "affinity: node lacks " + std::string(t.key)};
    if (std::find(t.values.begin(), t.values.end(), *v) == t.values.end()) all_present = false;
  }
  if (!all_present && !(!st.any_match && st.self_match)) {
    return {FitCode::kPodAffinity, {}, "affinity"};
  }
  return {};
}

PodAffinityScorer::PodAffinityScorer(const Session& s) {
  for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.prefers_pod_affinity || pod.requires_pod_affinity) with_affinity_.push_back(p);
  }
}

void PodAffinityScorer::AddExisting(const PodObject& incoming, const SnapPod& existing,
                                    const SnapNode& node) {
  auto add = [&](const PodAffinityTerm& t, int64_t w) {
    auto v = LabelOf(node, t.topology_key);
    if (!v) return;
    for (Entry& e : entries_) {
      if (e.key == t.topology_key && e.value == *v) {
        e.score += w;
        return;
      }
    }
    entries_.push_back({t.topology_key, *v, w});
  };
  const PodObject& e = *existing.obj;
  for (const auto& wt : incoming.preferred_pod_affinity) {
    if (PodMatchesTerm(e, wt.term, incoming.meta.ns)) add(wt.term, wt.weight);
  }
  for (const auto& wt : incoming.preferred_pod_anti_affinity) {
    if (PodMatchesTerm(e, wt.term, incoming.meta.ns)) add(wt.term, -wt.weight);
  }
  for (const PodAffinityTerm& t : e.required_pod_affinity) {
    if (PodMatchesTerm(incoming, t, e.meta.ns)) add(t, 1);
  }
  for (const auto& wt : e.preferred_pod_affinity) {
    if (PodMatchesTerm(incoming, wt.term, e.meta.ns)) add(wt.term, wt.weight);
  }
  for (const auto& wt : e.preferred_pod_anti_affinity) {
    if (PodMatchesTerm(incoming, wt.term, e.meta.ns)) add(wt.term, -wt.weight);
  }
}

void PodAffinityScorer::Compute(const Session& s, PodId pod) {
  cached_pod_ = pod;
  cached_version_ = s.PlacementVersion();
  entries_.clear();
  const bool prefers = s.snap().pods[pod].prefers_pod_affinity;
  if (!prefers && with_affinity_.empty()) return;  // no term anywhere involves the pod
  const PodObject& incoming = *s.snap().pods[pod].obj;
  if (prefers) {
    ForEachPlacedPod(
        s, [&](const SnapPod& e, const SnapNode& node) { AddExisting(incoming, e, node); });
    return;
  }
  for (PodId p : with_affinity_) {
    const SnapPod& e = s.snap().pods[p];
    if (e.node == kNone || !IsActiveUsed(e.status)) continue;
    AddExisting(incoming, e, s.snap().nodes[e.node]);
  }
}

bool PodAffinityScorer::ScoresNothing(const Session& s, PodId pod) {
  if (cached_pod_ != pod || cached_version_ != s.PlacementVersion()) Compute(s, pod);
  return entries_.empty();
}

void PodAffinityScorer::Score(const Session& s, PodId pod, std::span<double> out) {
  if (cached_pod_ != pod || cached_version_ != s.PlacementVersion()) Compute(s, pod);
  if (entries_.empty()) return;  // nothing to prefer (kube-scheduler skips the plugin)
  for (NodeId n : s.CandidateNodes()) {
    int64_t score = 0;
    for (const Entry& e : entries_) {
      auto v = LabelOf(s.snap().nodes[n], e.key);
      if (v && *v == e.value) score += e.score;
    }
    out[n] += scores::kK8sPlugins * static_cast<double>(score);
  }
}

namespace {

class PodAffinityPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    scorer_ = std::make_unique<PodAffinityScorer>(s);
    s.AddNodeScores([this](const Session& ss, PodId pod,
                           std::span<double> out) { scorer_->Score(ss, pod, out); },
                    [this](const Session& ss, PodId pod, std::string&) {
                      return scorer_->ScoresNothing(ss, pod);
                    });
  }

 private:
  std::unique_ptr<PodAffinityScorer> scorer_;
};

}  // namespace

std::unique_ptr<Plugin> MakePodAffinity() { return std::make_unique<PodAffinityPlugin>(); }

}  // namespace kai::plugins
