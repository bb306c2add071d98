#pragma once
// The candidate nodes of a pod ranked best first, kept across the tasks of a session, so that
// placing thousands of alike tasks costs O(changed nodes x log N) each instead of scoring every
// node for every task (DESIGN.md: performance).
//
// A ranking is kept per key: the pod's request and GPU share plus every scorer's ScoreKeyFn. Pods
// with one key get the same score on every node whose accounting did not change, so a ranking
// re-scores only the nodes Session::NodeChanges() names since it was last used. It holds the
// nodes with room (idle + releasing) for the request, ordered by total score descending, then
// node name (the placement's order); a node a scorer vetoes (-infinity) is left out.
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kai/snapshot/snapshot.h"

namespace kai {

class Session;

struct RankedNode {
  double score = 0;
  int32_t rank = 0;  // the node's name rank (the tie-break)
  NodeId id = kNone;
};
struct BetterNode {
  bool operator()(const RankedNode& a, const RankedNode& b) const {
    if (a.score != b.score) return a.score > b.score;
    return a.rank < b.rank;
  }
};
using RankedNodes = std::set<RankedNode, BetterNode>;

class NodeRanking {
 public:
  explicit NodeRanking(Session& s);
  ~NodeRanking();
  NodeRanking(const NodeRanking&) = delete;
  NodeRanking& operator=(const NodeRanking&) = delete;

  // The nodes with room for the pod, best first, when the session's candidates are all nodes and
  // every scorer's scores for the pod can be cached; nullptr otherwise (the caller scores the
  // nodes itself). Valid until the next call or node change.
  const RankedNodes* Ranked(PodId pod);

 private:
  struct Entry;
  Entry& EntryFor(const std::string& key);
  void Rebuild(Entry& e, PodId pod);
  void Update(Entry& e, PodId pod, std::span<const NodeId> changes);
  void Rescore(Entry& e, PodId pod, std::span<const NodeId> nodes);
  void Remove(Entry& e, NodeId n);
  void Insert(RankedNodes& order, const RankedNode& node);
  // Empties `order`, keeping its tree nodes for later insertions.
  void Recycle(RankedNodes& order);

  Session& s_;
  std::vector<std::unique_ptr<Entry>> entries_;  // most recently used last
  std::string key_;                              // scratch
  std::vector<double> scores_;                   // scratch, one per node
  std::vector<NodeId> nodes_;                    // scratch
  std::vector<char> seen_;                       // scratch, one per node
  // Tree nodes of removed entries and dropped rankings, reused by the next insertion (a changed
  // node leaves a ranking and comes back with its new score on every placement; a rebuilt
  // ranking takes the nodes of the one it replaces): no allocation for them.
  std::vector<RankedNodes::node_type> spare_;
};

}  // namespace kai
