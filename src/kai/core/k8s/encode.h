#pragma once
// ClusterState -> Kubernetes manifests (multi-document YAML) that the decoder reads back to the
// same objects: decode(encode(state)) == state for every field kai reads. A pod's effective
// request is written as one container's requests (init containers and overhead are already
// folded into it). Used by the scheduler's /debug/snapshot, so any live cycle can be replayed
// with `kai simulate -f`.
#include <string>

#include "kai/core/model/cluster.h"

namespace kai {

std::string EncodeManifests(const ClusterState& state);

}  // namespace kai
