#include "kai/daemons/numaexporter/sysfs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace kai::numaexporterd {
namespace {

namespace fs = std::filesystem;
using numaexporter::NodeCpuList;

// More entries than this under devices/system/node is not a sysfs tree.
constexpr size_t kMaxEntries = 1 << 17;

// A file's text, refusing one larger than `max_bytes`.
Result<std::string> ReadBounded(const fs::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"reading " + path.string() + ": cannot open"};
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Error{"reading " + path.string() + ": read error"};
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return Error{"reading " + path.string() + ": larger than " + std::to_string(max_bytes) +
                 " bytes"};
  }
  return text;
}

// The node<N> directories of `dir`, each with its cpulist's text, in node order.
Result<std::vector<NodeCpuList>> ReadNodeLists(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Error{"reading NUMA node directory " + dir.string() + ": " + ec.message()};
  std::vector<NodeCpuList> out;
  size_t seen = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (++seen > kMaxEntries) return Error{"too many entries under " + dir.string()};
    const auto node = numaexporter::NumaNodeOfEntry(it->path().filename().string());
    if (!node || !it->is_directory(ec)) continue;
    const fs::path file = it->path() / "cpulist";
    auto text = ReadBounded(file, numaexporter::kMaxCpuListBytes);
    if (!text.ok()) return text.error();
    out.push_back({*node, std::move(*text), file.string()});
  }
  if (ec) return Error{"reading NUMA node directory " + dir.string() + ": " + ec.message()};
  std::sort(out.begin(), out.end(),
            [](const NodeCpuList& a, const NodeCpuList& b) { return a.node < b.node; });
  return out;
}

}  // namespace

Result<numaexporter::CpuToNuma> LoadCpuToNuma(const std::string& sysfs_root) {
  const fs::path dir = fs::path(sysfs_root) / "devices" / "system" / "node";
  auto lists = ReadNodeLists(dir);
  if (!lists.ok()) return lists.error();
  if (lists->empty()) return Error{"no NUMA node directory (node<N>) under " + dir.string()};
  return numaexporter::BuildCpuToNuma(*lists);
}

}  // namespace kai::numaexporterd
