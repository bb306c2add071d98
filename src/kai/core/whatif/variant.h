#pragma once
// A what-if variant: the base cluster with some objects replaced or added (a Queue with another
// quota, a SchedulingShard with other arguments, more nodes).
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"

namespace kai::whatif {

// `base` with every object of `overlay` in place of the base's object of the same kind and
// namespace/name, or appended when the base has none; the overlay's shard replaces the base's.
// The result is not validated (k8s/decode.h ValidateCluster does that).
ClusterState ApplyVariant(ClusterState base, ClusterState overlay);

}  // namespace kai::whatif
