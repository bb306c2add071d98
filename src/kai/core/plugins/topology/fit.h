#pragma once
// Whether a topology domain can hold a group of tasks (KAI plugins/topology/job_filtering.go).
// Free capacity of a domain is the idle plus releasing resources of its nodes. Homogeneous tasks
// (all or none ask for GPUs, every extended resource asked by all) are counted as copies of the
// largest task per node; other groups compare their summed request with the domain's free
// resources.
#include <span>
#include <vector>

#include "kai/core/plugins/topology/tree.h"

namespace kai::plugins::topology {

struct Demand {
  Resources total;          // summed requests of the tasks
  Resources largest;        // element-wise maximum: the representative task
  int pods = 0;             // number of tasks
  bool count_pods = false;  // homogeneous: count representative tasks per node
};
Demand DemandOf(const Snapshot& snap, std::span<const PodId> tasks);

// How many copies of the representative task a node holds (KAI calcNodeAccommodation).
int64_t NodeAccommodation(const Demand& demand, const SnapNode& node);

// The dominant ratio of requested to free resources over every requested resource but pods;
// a resource the domain has none of counts 1000 (KAI getJobRatioToFreeResources). A domain can
// hold the summed request when the ratio is at most 1.
double DominantRatio(const Resources& request, const Resources& free);

struct DomainCapacity {
  Resources free;
  int64_t fit_pods = -1;  // representative tasks the domain holds; -1 when not counted
};

// Capacities of the domains of one scope's subtree for one demand. Domains outside the scope
// keep no free resources, as in KAI (they are reset, and only the scope is summed).
class Evaluator {
 public:
  Evaluator(const Tree& tree, const Snapshot& snap, const Demand& demand, DomainId scope);
  const DomainCapacity& At(DomainId d) const { return caps_[d]; }
  double Ratio(DomainId d) const { return DominantRatio(demand_.total, caps_[d].free); }
  bool Fits(DomainId d) const;
  const Demand& demand() const { return demand_; }

 private:
  void Sum(DomainId d);

  const Tree& tree_;
  const Snapshot& snap_;
  const Demand& demand_;
  std::vector<DomainCapacity> caps_;
};

// Orders the children of every domain under `scope` down to `max_level` (inclusive: the children
// of a `max_level` domain are ordered too) by decreasing ratio, then id: the fullest domain that
// fits comes first (bin-packing; KAI sortTree).
void SortForPacking(Tree& tree, const Evaluator& eval, DomainId scope, int max_level);

}  // namespace kai::plugins::topology
