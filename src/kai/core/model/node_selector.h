#pragma once
// Node selector terms: a pod's required node affinity, a PersistentVolume's node affinity, a
// StorageClass's allowed topologies.
#include <string>
#include <vector>

namespace kai {

struct SelectorRequirement {
  std::string key, op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  friend bool operator==(const SelectorRequirement&, const SelectorRequirement&) = default;
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  // only metadata.name is meaningful
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

}  // namespace kai
