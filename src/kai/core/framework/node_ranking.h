#pragma once
// The candidate nodes of a pod ranked best first, kept across the tasks of a session, so that
// placing thousands of alike tasks costs O(changed nodes x log N) each instead of scoring every
// node for every task (docs/design.md: performance rules).
//
// A ranking is kept per key: the pod's request and GPU share plus every scorer's ScoreKeyFn. Pods
// with one key get the same score on every node whose accounting did not change, so a ranking
// re-scores only the nodes Session::NodeChanges() names since it was last used. It holds the
// nodes with room (idle + releasing) for the request, ordered by total score descending, then
// node name (the placement's order); a node a scorer vetoes (-infinity) is left out.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kai/core/snapshot/snapshot.h"

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

// Fixed-size blocks for the nodes of ranking trees. Rankings drop and re-add a node on every
// placement and re-fill a thousand at a time on a rebuild; through the general allocator that
// churn was a visible share of the time. Blocks come from chunks kept until the pool dies, and
// a freed block goes on a free list for the next one.
class BlockPool {
 public:
  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  void* Allocate(size_t bytes);
  void Deallocate(void* p, size_t bytes);

 private:
  static constexpr size_t kBlocksPerChunk = 1024;
  static size_t BlockSize(size_t bytes);
  struct FreeBlock {
    FreeBlock* next;
  };
  size_t block_ = 0;  // the one block size served; other sizes go to operator new
  FreeBlock* free_ = nullptr;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  size_t chunk_used_ = kBlocksPerChunk;  // blocks handed out from the last chunk
};

// A std allocator drawing single objects from a BlockPool.
template <class T>
struct PoolAllocator {
  using value_type = T;
  explicit PoolAllocator(BlockPool* p) : pool(p) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& o) : pool(o.pool) {}  // NOLINT: rebinding converts
  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(pool->Allocate(sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) return ::operator delete(p);
    pool->Deallocate(p, sizeof(T));
  }
  template <class U>
  bool operator==(const PoolAllocator<U>& o) const {
    return pool == o.pool;
  }
  BlockPool* pool;
};

using RankedNodes = std::set<RankedNode, BetterNode, PoolAllocator<RankedNode>>;

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

  Session& s_;
  BlockPool pool_;                               // the rankings' tree nodes (outlives entries_)
  std::vector<std::unique_ptr<Entry>> entries_;  // most recently used last
  std::string key_;                              // scratch
  std::vector<double> scores_;                   // scratch, one per node
  std::vector<NodeId> nodes_;                    // scratch
  std::vector<char> seen_;                       // scratch, one per node
};

}  // namespace kai
