#pragma once
// A Topology as a tree of domains over the snapshot's nodes (KAI plugins/topology). The root holds
// every node that carries all level labels (a node missing one is outside the topology); each
// level, coarsest first, splits its parent by the value of that level's node label. Children keep
// the order of the last sort, as KAI's tree does.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/snapshot/snapshot.h"

namespace kai::plugins::topology {

inline constexpr int kRootLevel = -1;
using DomainId = int32_t;
inline constexpr DomainId kRootDomain = 0;

struct Domain {
  std::string id;          // KAI's domain id: level values from the top joined by '.'; "root"
  std::string_view value;  // value of its own level's label ("rack1"); "root" for the root
  int level = kRootLevel;  // index into Tree::labels, coarsest first
  DomainId parent = -1;
  std::vector<DomainId> children;
  std::vector<NodeId> nodes;  // every node of the subtree, ascending ids
};

struct Tree {
  const TopologyObject* obj = nullptr;
  std::vector<std::string_view> labels;  // node label of each level, coarsest first
  std::vector<Domain> domains;           // [kRootDomain] is the root
  std::vector<DomainId> leaf_of_node;    // per NodeId: its finest domain, -1 outside the topology

  std::string_view name() const { return obj->meta.name; }
  int depth() const { return static_cast<int>(labels.size()); }
  // The level named by a node label or a level alias; nullopt when the topology has none.
  std::optional<int> FindLevel(std::string_view label_or_alias) const;
  // The domain of `level` that contains `domain` (which must be at that level or below).
  DomainId AncestorAt(DomainId domain, int level) const;
  bool Contains(DomainId outer, DomainId inner) const;
  // Human name of a level (its label) and of a domain ("rack1"; "the cluster" for the root).
  std::string LevelName(int level) const;
};

Tree BuildTree(const TopologyObject& topology, const Snapshot& snap);

// Domains of `level` inside `scope`, in the order of the tree's children (depth-first).
void CollectLevel(const Tree& tree, DomainId scope, int level, std::vector<DomainId>& out);

}  // namespace kai::plugins::topology
