#pragma once
// Which NUMA node each logical CPU belongs to, from the text of sysfs
// (devices/system/node/node<N>/cpulist): the kubelet's pod-resources API names a container's
// exclusive CPUs by id only, so the NUMA placement exporter resolves them here. Pure: the daemon
// reads the files (daemons/numaexporter/sysfs.h) and hands their text in.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kai/core/util/result.h"

namespace kai::numaexporter {

// Logical CPU id -> NUMA node id.
using CpuToNuma = std::unordered_map<int64_t, int32_t>;

// Bounds on what sysfs may describe: far above any machine, far below what would exhaust memory.
inline constexpr size_t kMaxCpus = 1 << 20;          // CPUs over all NUMA nodes
inline constexpr int32_t kMaxNumaNode = 1 << 16;     // the highest node<N> taken
inline constexpr size_t kMaxCpuListBytes = 1 << 16;  // one cpulist file

// A Linux CPU list ("0-3,8,12-13\n") as its CPU ids; empty text is no CPU. An error names the bad
// token; more than `max_cpus` ids is an error too (a range such as "0-99999999999").
Result<std::vector<int64_t>> ParseCpuList(std::string_view text, size_t max_cpus = kMaxCpus);

// The NUMA node a sysfs entry name stands for ("node3" -> 3); nullopt for any other entry
// ("possible", "node", "node3x", "node-1", a node above kMaxNumaNode).
std::optional<int32_t> NumaNodeOfEntry(std::string_view name);

// One NUMA node's cpulist as read; `source` names the file in errors.
struct NodeCpuList {
  int32_t node = 0;
  std::string text;
  std::string source;
};

// The CPU -> NUMA node map of every node's cpulist. Errors: a list that does not parse (naming
// its source), more than kMaxCpus CPUs in all, or no CPU at all.
Result<CpuToNuma> BuildCpuToNuma(const std::vector<NodeCpuList>& nodes);

}  // namespace kai::numaexporter
