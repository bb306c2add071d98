#include "kai/plugins/gpu_sharing.h"

#include <algorithm>

#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

struct Candidate {
  double score;
  const GpuGroup* group;  // nullptr: a whole free GPU
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

std::vector<Candidate> FittingGpus(const Session& s, PodId pod, const SnapNode& node) {
  std::vector<Candidate> out;
  const int64_t memory = SharedMemoryOn(node, s.snap().pods[pod].share);
  for (const GpuGroup& g : node.gpu_groups) {
    if (GroupFits(node, g, memory)) out.push_back({s.ScoreGpu(pod, node, &g), &g});
  }
  const int64_t whole = WholeGpusOffered(node);
  if (whole > 0) {
    const double score = s.ScoreGpu(pod, node, nullptr);
    for (int64_t i = 0; i < whole; ++i) out.push_back({score, nullptr});
  }
  std::stable_sort(out.begin(), out.end(), Before);
  return out;
}

bool Taken(const SnapNode& node, const std::vector<std::string>& chosen, const std::string& name) {
  if (std::find(chosen.begin(), chosen.end(), name) != chosen.end()) return true;
  for (const GpuGroup& g : node.gpu_groups) {
    if (g.name == name && g.used != 0) return true;
  }
  return false;
}

// A deterministic name for a new group on the node: "<node>-gpu<k>", the first k free.
std::string NewGroupName(const SnapNode& node, const std::vector<std::string>& chosen) {
  for (int k = 0;; ++k) {
    std::string name = std::string(node.name) + "-gpu" + std::to_string(k);
    if (!Taken(node, chosen, name)) return name;
  }
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
  const bool fits_idle = FitsIdle(p, node);
  GpuChoice choice;
  for (const Candidate& c : FittingGpus(s, pod, node)) {
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
  return std::nullopt;
}

}  // namespace kai::plugins
