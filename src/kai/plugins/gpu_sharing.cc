#include "kai/plugins/gpu_sharing.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

// A GPU offered to the pod: a live shared group, or (group == nullptr) `whole` free GPUs, all
// alike, that would each become a new group.
struct Candidate {
  double score;
  const GpuGroup* group;
  int64_t whole = 0;
};

// Whole GPUs offered for sharing: KAI truncates idle and releasing counts separately.
int64_t WholeGpusOffered(const SnapNode& node) {
  return std::max<int64_t>(node.idle.milli_gpu / kMilliPerUnit, 0) +
         std::max<int64_t>(node.releasing.milli_gpu / kMilliPerUnit, 0);
}

// Higher score first; on equal scores shared groups before whole GPUs, then by group name (KAI
// leaves equal scores in map order; kai makes the order total).
bool Before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if ((a.group == nullptr) != (b.group == nullptr)) return a.group != nullptr;
  if (a.group && b.group) return a.group->name < b.group->name;
  return false;
}

// The GPUs of the node that can take `memory` more, in offer order (a stable sort by Before: a
// node has a few GPUs, so insertion into a reused buffer beats allocating). The whole GPUs are one
// entry: alike, they would sort next to each other.
const std::vector<Candidate>& FittingGpus(const Session& s, PodId pod, const SnapNode& node,
                                          int64_t memory) {
  static thread_local std::vector<Candidate> out;
  out.clear();
  auto insert = [](const Candidate& c) {
    size_t at = out.size();
    while (at > 0 && Before(c, out[at - 1])) --at;
    out.push_back(c);
    std::rotate(out.begin() + static_cast<std::ptrdiff_t>(at), out.end() - 1, out.end());
  };
  if (AnyGroupFits(node, memory)) {
    for (const GpuGroup& g : node.gpu_groups) {
      if (GroupFits(node, g, memory)) insert({s.ScoreGpu(pod, node, &g), &g});
    }
  }
  if (const int64_t whole = WholeGpusOffered(node); whole > 0) {
    insert({s.ScoreGpu(pod, node, nullptr), nullptr, whole});
  }
  return out;
}

// Devices the candidates offer together.
int64_t DevicesOffered(const std::vector<Candidate>& candidates) {
  int64_t n = 0;
  for (const Candidate& c : candidates) n += c.group ? 1 : c.whole;
  return n;
}

// k when `name` is "<prefix><k>" with k written as std::to_string writes it and below `limit`.
// The digits are read first: names of one node share the prefix and differ at the end.
std::optional<size_t> GroupNumber(std::string_view name, std::string_view prefix, size_t limit) {
  if (name.size() <= prefix.size() || name.size() - prefix.size() > 9) return std::nullopt;
  const std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  size_t k = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    k = k * 10 + static_cast<size_t>(c - '0');
  }
  if (k >= limit || !name.starts_with(prefix)) return std::nullopt;
  return k;
}

// A deterministic name for a new group on the node: "<node>-gpu<k>", the first k that neither a
// group in use on the node nor an already chosen one is named by. At most groups + chosen names
// are taken, so that k is at most their count.
std::string NewGroupName(const SnapNode& node, const std::vector<std::string>& chosen) {
  std::string name = std::string(node.name) + "-gpu";
  const size_t limit = node.gpu_groups.size() + chosen.size() + 1;
  static thread_local std::vector<char> taken;
  taken.assign(limit, 0);
  auto mark = [&](std::string_view used) {
    if (auto k = GroupNumber(used, name, limit)) taken[*k] = 1;
  };
  for (const GpuGroup& g : node.gpu_groups) {
    if (g.used != 0) mark(g.name);
  }
  for (const std::string& c : chosen) mark(c);
  const size_t k = static_cast<size_t>(std::find(taken.begin(), taken.end(), 0) - taken.begin());
  char digits[20];
  char* end = std::to_chars(digits, digits + sizeof(digits), k).ptr;
  name.append(digits, end);  // as std::to_string(k) writes it, without a temporary string
  return name;
}

// The group can take the pod from idle memory alone (not only from memory being freed).
bool IdleRoom(const SnapNode& node, const GpuGroup& g, int64_t memory) {
  return g.has_allocated && node.gpu_memory_mib - g.allocated - memory >= 0;
}

}  // namespace

std::optional<GpuChoice> ChooseSharedGpus(const Session& s, PodId pod, NodeId node_id,
                                          bool pipeline_only) {
  const SnapNode& node = s.snap().nodes[node_id];
  const SnapPod& p = s.snap().pods[pod];
  const int64_t memory = SharedMemoryOn(node, p.share);
  const std::vector<Candidate>& offered = FittingGpus(s, pod, node, memory);
  if (DevicesOffered(offered) < p.share.devices) return std::nullopt;
  const bool fits_idle = FitsIdle(p, node);
  GpuChoice choice;
  // At most the devices offered (checked above); a reserved vector also appends faster.
  choice.groups.reserve(static_cast<size_t>(std::max<int64_t>(p.share.devices, 0)));
  for (const Candidate& c : offered) {
    for (int64_t i = 0; i < std::max<int64_t>(c.whole, 1); ++i) {
      if (c.group == nullptr) {
        choice.groups.push_back(NewGroupName(node, choice.groups));
        choice.new_group = true;
        choice.releasing = choice.releasing || pipeline_only || !fits_idle;
      } else {
        choice.groups.push_back(c.group->name);
        choice.releasing = choice.releasing || !IdleRoom(node, *c.group, memory) || !fits_idle;
      }
      if (static_cast<int64_t>(choice.groups.size()) == p.share.devices) return choice;
    }
  }
  return std::nullopt;
}

}  // namespace kai::plugins
