#pragma once
// The front ends' manifest loader: reads the files and hands their text to libkai's decoder
// (k8s/decode.h), which does no I/O. io/ is part of kaikube, not of the pure core.
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"

namespace kai {

// Reads files, or every *.yaml / *.yml file of a directory (sorted by name), decodes and validates.
Result<ClusterState> LoadManifests(const std::vector<std::string>& paths);

}  // namespace kai
