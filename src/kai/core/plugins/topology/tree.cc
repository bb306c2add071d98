#include "kai/core/plugins/topology/tree.h"

#include <map>

namespace kai::plugins::topology {
namespace {

// The value of every level label of a node, or nullopt when one is missing.
std::optional<std::vector<std::string_view>> LevelValues(const Tree& tree, const NodeObject& node) {
  std::vector<std::string_view> values;
  values.reserve(tree.labels.size());
  for (std::string_view label : tree.labels) {
    auto it = node.meta.labels.find(label);
    if (it == node.meta.labels.end()) return std::nullopt;
    values.push_back(it->second);
  }
  return values;
}

}  // namespace

Tree BuildTree(const TopologyObject& topology, const Snapshot& snap) {
  Tree tree;
  tree.obj = &topology;
  for (const TopologyLevel& l : topology.levels) tree.labels.push_back(l.node_label);
  tree.domains.push_back(Domain{.id = "root", .value = "root"});
  tree.leaf_of_node.assign(snap.nodes.size(), -1);
  std::map<std::pair<int, std::string>, DomainId> by_id;  // (level, id): ids are per level
  for (NodeId n = 0; n < static_cast<NodeId>(snap.nodes.size()); ++n) {
    auto values = LevelValues(tree, *snap.nodes[n].obj);
    if (!values) continue;
    DomainId at = kRootDomain;
    tree.domains[kRootDomain].nodes.push_back(n);
    std::string id;
    for (int level = 0; level < tree.depth(); ++level) {
      id += (level ? "." : "") + std::string((*values)[level]);
      auto [it, added] = by_id.try_emplace({level, id}, static_cast<DomainId>(tree.domains.size()));
      if (added) {
        tree.domains.push_back(
            Domain{.id = id, .value = (*values)[level], .level = level, .parent = at});
        tree.domains[at].children.push_back(it->second);
      }
      at = it->second;
      tree.domains[at].nodes.push_back(n);
    }
    tree.leaf_of_node[n] = at;
  }
  return tree;
}

std::optional<int> Tree::FindLevel(std::string_view label_or_alias) const {
  for (size_t i = 0; i < obj->levels.size(); ++i) {
    const TopologyLevel& l = obj->levels[i];
    if (l.node_label == label_or_alias || (!l.alias.empty() && l.alias == label_or_alias)) {
      return static_cast<int>(i);
    }
  }
  return std::nullopt;
}

DomainId Tree::AncestorAt(DomainId domain, int level) const {
  while (domains[domain].level > level) domain = domains[domain].parent;
  return domain;
}

bool Tree::Contains(DomainId outer, DomainId inner) const {
  if (domains[inner].level < domains[outer].level) return false;
  return AncestorAt(inner, domains[outer].level) == outer;
}

std::string Tree::LevelName(int level) const {
  return level == kRootLevel ? "cluster" : std::string(labels[level]);
}

void CollectLevel(const Tree& tree, DomainId scope, int level, std::vector<DomainId>& out) {
  const Domain& d = tree.domains[scope];
  if (d.level == level) {
    out.push_back(scope);
    return;
  }
  if (d.level > level) return;
  for (DomainId c : d.children) CollectLevel(tree, c, level, out);
}

}  // namespace kai::plugins::topology
