#pragma once
// "What exactly would make this job run?" (`kai explain`). One scheduling cycle shows what
// happens to a workload and why (its typed reasons); candidate changes are generated from those
// reasons, each applied to a copy of the world and verified by running the cycle again; amounts
// are searched for the smallest that works. For a workload the cycle evicts: the rule, the
// beneficiary, and the changes that would have kept it running, verified the same way.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/explain/changes.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/reasons.h"
#include "kai/core/model/cluster.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/util/result.h"

namespace kai {

struct ExplainTarget {
  bool pod_group = false;  // a PodGroup; else a pod
  std::string ns, name;
  std::string Name() const;  // "pod ns/name" or "podgroup ns/name"
};

struct ExplainOptions {
  sim::SimulateOptions simulate;  // the clock and the usage history of the cycles
  int max_cycles = 48;            // cycles run in all, the first included
};

// What one cycle does to the target workload.
struct TargetOutcome {
  std::string status;    // the pod's status; for a PodGroup its pods' statuses, e.g. "Pending 4"
  int scheduled = 0;     // pods that hold or are promised resources after the cycle
  int required = 0;      // pods the workload needs for that (its gang's minimum; 1 for a pod)
  bool runs = false;     // scheduled >= required
  bool evicted = false;  // a pod of it was evicted (or moved) by the cycle
  std::vector<Reason> reasons;  // why it is pending
  EvictionVerdict eviction;     // of its first disrupted pod
  std::string beneficiary;      // the verdict's preemptor, namespace/name
};

struct Suggestion {
  Change change;
  std::string description;
  TargetOutcome after;  // the verifying cycle's outcome
};

struct Explanation {
  ExplainTarget target;
  std::string queue;
  std::string pod_group;  // namespace/name ("" for a pod without one)
  TargetOutcome outcome;
  // Pending: changes that make it run next cycle. Evicted: changes that would have kept it.
  std::vector<Suggestion> suggestions;
  // Candidates tried that did not make it, for people ("raise quota ...: still pending").
  std::vector<std::string> rejected;
  int cycles = 0;  // cycles run, the first included
  bool budget_exhausted = false;
};

Result<Explanation> ExplainWorkload(const ClusterState& world, const SchedulerConfig& config,
                                    const ExplainTarget& target, const ExplainOptions& options);

}  // namespace kai
