#pragma once
// podaffinity: inter-pod affinity. The required filter runs in the predicates plugin (as KAI
// runs kube-scheduler's InterPodAffinity filter there); the plugin of this folder scores nodes.
//
// Required inter-pod affinity and anti-affinity (kube-scheduler's InterPodAffinity filter, which
// KAI's predicates plugin runs). For a pod P and a node N:
//   - an existing pod E whose required anti-affinity term matches P forbids every node sharing
//     E's node's value of the term's topology key;
//   - P's anti-affinity term forbids nodes sharing the topology value of a pod matching it;
//   - for each of P's affinity terms, N must carry the topology key and share its value with a
//     pod that matches all of P's affinity terms; when no such pod exists anywhere and P matches
//     its own terms, any node carrying the keys is allowed (the first pod of a group).
// A term without namespaces applies to its owner's namespace; an absent label selector matches
// no pod. Existing pods are the pods holding resources on nodes (releasing ones included), so
// pods placed earlier in the same session count.
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kai/core/framework/session.h"

namespace kai::plugins {

bool PodMatchesTerm(const PodObject& pod, const PodAffinityTerm& term, std::string_view owner_ns);

class InterPodAffinity {
 public:
  explicit InterPodAffinity(const Session& s);
  NodeVerdict Check(const Session& s, PodId pod, NodeId node);

 private:
  using Pair = std::pair<std::string_view, std::string_view>;  // topology key, value
  struct AffinityTerm {
    std::string_view key;
    std::vector<std::string_view> values;  // values holding a pod that matches all terms
  };
  struct PodState {
    PodId pod = kNone;
    uint64_t version = 0;
    std::vector<Pair> forbidden_by_others;  // existing pods' anti-affinity
    std::vector<Pair> forbidden_by_self;    // the pod's own anti-affinity
    std::vector<AffinityTerm> affinity;
    bool any_match = false;   // some existing pod matches all affinity terms
    bool self_match = false;  // the pod matches all its own affinity terms
  };
  const PodState& StateOf(const Session& s, PodId pod);
  void AddExistingAntiAffinity(const Session& s, const PodObject& pod, PodState& st) const;
  void AddOwnTerms(const Session& s, const PodObject& pod, PodState& st) const;

  std::vector<PodId> anti_affinity_pods_;  // pods with required anti-affinity terms
  PodState cache_;
};

// Node scores of kube-scheduler's InterPodAffinity scoring, which KAI's podaffinity plugin adds
// as 1e6 x the raw score (no normalisation). Every existing pod E on a node N adds, to N's value
// of a term's topology key: +w for each of P's preferred affinity terms E matches, -w for each of
// P's preferred anti-affinity terms; +1 for each of E's required affinity terms P matches (the
// hard pod affinity weight), +w / -w for each of E's preferred affinity / anti-affinity terms P
// matches. A node scores the sum over the values it carries.
class PodAffinityScorer {
 public:
  explicit PodAffinityScorer(const Session& s);
  void Score(const Session& s, PodId pod, std::span<double> out);
  // True when the pod's score is 0 on every node (no preferred term involves it).
  bool ScoresNothing(const Session& s, PodId pod);

 private:
  struct Entry {
    std::string_view key, value;
    int64_t score = 0;
  };
  void Compute(const Session& s, PodId pod);
  void AddExisting(const PodObject& incoming, const SnapPod& existing, const SnapNode& node);

  std::vector<PodId> with_affinity_;  // pods with affinity terms that may score others
  PodId cached_pod_ = kNone;
  uint64_t cached_version_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace kai::plugins
