#include "kai/core/framework/node_ranking.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>

#include "kai/core/framework/session.h"
#include "kai/core/snapshot/fit.h"

namespace kai {
namespace {

// Rankings kept at once: alike pods come in runs, and a few request shapes alternate (a job's
// roles, a victim re-placed between preemptor tasks).
constexpr size_t kMaxEntries = 8;

template <class T>
void AppendBytes(std::string& key, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// Everything of the pod that room (FitsIdleOrReleasing) and the request-based scorers read: the
// core request and GPU share in one block (one append), then the scalar requests.
struct PodKey {
  int64_t milli_cpu, memory, milli_gpu, pods;
  int64_t portion_milli, memory_mib, devices;
  int64_t share_kind;
  int64_t scalars;
};

void AppendPod(std::string& key, const SnapPod& pod) {
  const Resources& r = pod.request;
  const GpuShare& g = pod.share;
  AppendBytes(
      key, PodKey{r.milli_cpu, r.memory, r.milli_gpu, r.pods, g.portion_milli, g.memory_mib,
                  g.devices, static_cast<int64_t>(g.kind), static_cast<int64_t>(r.scalars.size())});
  for (const auto& [id, amount] : r.scalars) {
    AppendBytes(key, id);
    AppendBytes(key, amount);
  }
}

}  // namespace

// Every block keeps the strictest fundamental alignment.
size_t BlockPool::BlockSize(size_t bytes) {
  constexpr size_t kAlign = alignof(std::max_align_t);
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

void* BlockPool::Allocate(size_t bytes) {
  const size_t size = BlockSize(bytes);
  if (block_ == 0) block_ = size;
  if (size != block_) return ::operator new(bytes);
  if (free_) {
    FreeBlock* b = free_;
    free_ = b->next;
    return b;
  }
  if (chunk_used_ == kBlocksPerChunk) {
    chunks_.push_back(std::make_unique<std::byte[]>(block_ * kBlocksPerChunk));
    chunk_used_ = 0;
  }
  return chunks_.back().get() + block_ * chunk_used_++;
}

void BlockPool::Deallocate(void* p, size_t bytes) {
  if (BlockSize(bytes) != block_) return ::operator delete(p);
  free_ = new (p) FreeBlock{free_};
}

enum class Slot : uint8_t { kOut, kIn, kNaN };

struct NodeRanking::Entry {
  explicit Entry(BlockPool* pool) : order(PoolAllocator<RankedNode>(pool)) {}
  std::string key;
  size_t cursor = 0;  // NodeChanges() entries applied
  bool built = false;
  std::vector<double> score;  // per node, where slot is kIn
  std::vector<Slot> slot;     // per node
  int64_t nan_nodes = 0;      // nodes scored NaN: no total order, so the ranking is not used
  RankedNodes order;
};

NodeRanking::NodeRanking(Session& s) : s_(s) {}
NodeRanking::~NodeRanking() = default;

const RankedNodes* NodeRanking::Ranked(PodId pod) {
  const size_t n = s_.snap().nodes.size();
  if (s_.CandidateNodes().size() != n) return nullptr;
  key_.clear();
  AppendPod(key_, s_.snap().pods[pod]);
  if (!s_.NodeScoreKey(pod, key_)) return nullptr;
  Entry& e = EntryFor(key_);
  const std::span<const NodeId> changes = s_.NodeChanges();
  // Re-reading more changes than there are nodes costs more than scoring every node afresh.
  if (!e.built || changes.size() - e.cursor > n) {
    Rebuild(e, pod);
  } else {
    Update(e, pod, changes.subspan(e.cursor));
  }
  e.cursor = changes.size();
  return e.nan_nodes ? nullptr : &e.order;
}

NodeRanking::Entry& NodeRanking::EntryFor(const std::string& key) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if ((*it)->key != key) continue;
    std::rotate(it.base() - 1, it.base(), entries_.end());  // most recently used last
    return *entries_.back();
  }
  if (entries_.size() >= kMaxEntries) entries_.erase(entries_.begin());
  entries_.push_back(std::make_unique<Entry>(&pool_));
  entries_.back()->key = key;
  return *entries_.back();
}

void NodeRanking::Rebuild(Entry& e, PodId pod) {
  const size_t n = s_.snap().nodes.size();
  e.order.clear();
  e.score.assign(n, 0);
  e.slot.assign(n, Slot::kOut);
  e.nan_nodes = 0;
  e.built = true;
  const SnapPod& p = s_.snap().pods[pod];
  nodes_.clear();
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    if (FitsIdleOrReleasing(p, s_.snap().nodes[id])) nodes_.push_back(id);
  }
  Rescore(e, pod, nodes_);
}

void NodeRanking::Update(Entry& e, PodId pod, std::span<const NodeId> changes) {
  if (changes.empty()) return;
  seen_.resize(s_.snap().nodes.size());
  const SnapPod& p = s_.snap().pods[pod];
  nodes_.clear();
  for (NodeId id : changes) {
    if (seen_[id]) continue;
    seen_[id] = 1;
    Remove(e, id);
    if (FitsIdleOrReleasing(p, s_.snap().nodes[id])) nodes_.push_back(id);
  }
  for (NodeId id : changes) seen_[id] = 0;
  Rescore(e, pod, nodes_);
}

void NodeRanking::Rescore(Entry& e, PodId pod, std::span<const NodeId> nodes) {
  if (nodes.empty()) return;
  s_.PrepareScores(pod);
  scores_.resize(s_.snap().nodes.size());
  s_.ScoreNodes(pod, scores_, nodes);
  const std::vector<int32_t>& rank = s_.snap().node_name_rank;
  for (NodeId id : nodes) {
    const double v = scores_[id];
    if (v == -std::numeric_limits<double>::infinity()) continue;  // vetoed by a scorer
    if (std::isnan(v)) {
      e.slot[id] = Slot::kNaN;
      ++e.nan_nodes;
      continue;
    }
    e.slot[id] = Slot::kIn;
    e.score[id] = v;
    e.order.insert(RankedNode{v, rank[id], id});
  }
}

void NodeRanking::Remove(Entry& e, NodeId id) {
  if (e.slot[id] == Slot::kIn) {
    e.order.erase(RankedNode{e.score[id], s_.snap().node_name_rank[id], id});
  } else if (e.slot[id] == Slot::kNaN) {
    --e.nan_nodes;
  }
  e.slot[id] = Slot::kOut;
}

}  // namespace kai
