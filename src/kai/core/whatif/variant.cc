#include "kai/core/whatif/variant.h"

namespace kai::whatif {
namespace {

template <class T>
void Overlay(std::vector<T>& base, std::vector<T>& overlay) {
  for (T& o : overlay) {
    bool replaced = false;
    for (T& b : base) {
      if (b.meta.ns == o.meta.ns && b.meta.name == o.meta.name) {
        b = std::move(o);
        replaced = true;
        break;
      }
    }
    if (!replaced) base.push_back(std::move(o));
  }
}

}  // namespace

ClusterState ApplyVariant(ClusterState base, ClusterState overlay) {
  Overlay(base.nodes, overlay.nodes);
  Overlay(base.pods, overlay.pods);
  Overlay(base.pod_groups, overlay.pod_groups);
  Overlay(base.queues, overlay.queues);
  Overlay(base.priority_classes, overlay.priority_classes);
  Overlay(base.topologies, overlay.topologies);
  Overlay(base.bind_requests, overlay.bind_requests);
  if (overlay.shard) base.shard = std::move(overlay.shard);
  for (std::string& w : overlay.warnings) base.warnings.push_back(std::move(w));
  return base;
}

}  // namespace kai::whatif
