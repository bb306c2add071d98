#pragma once
// Reads the CPU -> NUMA node map of a sysfs tree: <root>/devices/system/node/node<N>/cpulist
// (KAI's pkg/npe/cputopology). The parsing is core/numaexporter/cpu_topology.h; this reads the
// files, each bounded in size.
#include <string>

#include "kai/core/numaexporter/cpu_topology.h"
#include "kai/core/util/result.h"

namespace kai::numaexporterd {

// An error names the directory or file that could not be read or parsed, a file over
// numaexporter::kMaxCpuListBytes, or a tree with no CPU under any node.
Result<numaexporter::CpuToNuma> LoadCpuToNuma(const std::string& sysfs_root);

}  // namespace kai::numaexporterd
