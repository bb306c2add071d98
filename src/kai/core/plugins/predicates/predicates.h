#pragma once
// Kubernetes node filters kai applies (KAI's predicates plugin wraps kube-scheduler's).
#include "kai/core/framework/reasons.h"
#include "kai/core/model/cluster.h"

namespace kai::plugins {

bool MatchesRequirement(const SelectorRequirement& req, const Labels& labels);
bool MatchesNodeSelector(const Labels& selector, const NodeObject& node);
// Required node affinity: the terms are ORed, the expressions of one term ANDed.
bool MatchesRequiredNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                 const NodeObject& node);
// Returns the first NoSchedule/NoExecute taint the pod does not tolerate, or nullptr.
const Taint* UntoleratedTaint(const std::vector<Toleration>& tolerations, const NodeObject& node);

}  // namespace kai::plugins
