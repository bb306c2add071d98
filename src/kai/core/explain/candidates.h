#pragma once
// Internal to `kai explain` (explain/counterfactual.cc): the candidate changes generated from the
// first cycle's outcome, before they are verified.
#include <functional>
#include <optional>
#include <vector>

#include "kai/core/explain/changes.h"
#include "kai/core/explain/counterfactual.h"
#include "kai/core/framework/session.h"

namespace kai::explain_detail {

// The workload and the first cycle, closed.
struct Baseline {
  const ClusterState& world;
  const SchedulerConfig& config;
  const Session& session;
  WorkloadRef edited;       // the pods that pod-level changes edit (the whole PodGroup)
  JobId job = kNone;        // its job in the session's snapshot
  std::vector<PodId> pods;  // the judged pods (the target pod, or the PodGroup's)
  TargetOutcome outcome;
};

// Changes of growing size; the search keeps the smallest rung that works.
struct Candidate {
  size_t rungs = 0;
  std::function<Change(size_t)> rung;  // rung i in [0, rungs), made when tried
  bool monotone = true;  // what works at one rung works at every larger one (bisection)
  // Monotone ladders: rungs below this one are known to fail (a necessary condition does not
  // hold); it is tried first, as the likely answer.
  size_t first = 0;
};

// A candidate of the given rungs.
Candidate Ladder(std::vector<Change> rungs, bool monotone);

// For a pending workload, from its reasons.
std::vector<Candidate> PendingCandidates(const Baseline& b);
// For an evicted workload: what would have kept it.
std::vector<Candidate> ProtectionCandidates(const Baseline& b);
// Freeing GPUs for the workload's pods, node by node, cheapest slot first.
std::optional<Candidate> FreeGpusCandidate(const Baseline& b);

}  // namespace kai::explain_detail
