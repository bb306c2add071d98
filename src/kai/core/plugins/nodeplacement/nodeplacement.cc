// nodeplacement: binpack or spread, per resource. GPU tasks are placed by free GPUs, CPU-only
// tasks by free CPU (KAI pkg/scheduler/plugins/nodeplacement).
//   binpack: 9 * (1 - (free - min) / (max - min)) with min/max of free over the candidate nodes
//            that have the resource (9 when min == max; 0 when the node lacks it or max == 0);
//   spread:  free / capacity.
// free = idle + releasing. Scores are doubles, as in KAI, so equal scores tie the same way.
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai::plugins {
namespace {

CoreResource PlacementResource(const SnapPod& pod) {
  return IsCpuOnly(pod) ? CoreResource::kCpu : CoreResource::kGpu;
}

double Free(const SnapNode& n, CoreResource r) {
  return static_cast<double>(n.idle.Get(r) + n.releasing.Get(r));
}

// Free amounts of one resource over all nodes that have it, kept current from the session's node
// changes, for the binpack range over all nodes without a pass over them per task.
class FreeRange {
 public:
  void Update(const Session& s, int64_t Resources::*field) {
    const auto& nodes = s.snap().nodes;
    const std::span<const NodeId> changes = s.NodeChanges();
    if (free_.empty() || changes.size() - cursor_ > nodes.size()) {
      counts_.clear();
      free_.assign(nodes.size(), 0);
      for (NodeId id = 0; id < static_cast<NodeId>(nodes.size()); ++id) Add(nodes[id], id, field);
    } else {
      for (NodeId id : changes.subspan(cursor_)) {
        if (nodes[id].allocatable.*field == 0) continue;
        Move(id, nodes[id].idle.*field + nodes[id].releasing.*field);
      }
    }
    cursor_ = changes.size();
  }
  // The smallest and largest free amount; lo > hi when no node has the resource.
  std::pair<int64_t, int64_t> MinMax() const {
    if (counts_.empty()) return {1, 0};
    return {counts_.begin()->first, counts_.rbegin()->first};
  }

 private:
  // The node's free amount changes to `to`; the map entry of an amount no node has any more is
  // reused for the new amount (no allocation on the hot path).
  void Move(NodeId id, int64_t to) {
    const int64_t from = free_[id];
    if (from == to) return;
    free_[id] = to;
    auto it = counts_.find(from);
    if (it->second > 1) {
      --it->second;
      ++counts_[to];
      return;
    }
    if (auto there = counts_.find(to); there != counts_.end()) {
      ++there->second;
      counts_.erase(it);
      return;
    }
    auto entry = counts_.extract(it);
    entry.key() = to;
    counts_.insert(std::move(entry));
  }

  void Add(const SnapNode& node, NodeId id, int64_t Resources::*field) {
    if (node.allocatable.*field == 0) return;
    free_[id] = node.idle.*field + node.releasing.*field;
    ++counts_[free_[id]];
  }

  std::vector<int64_t> free_;          // per node (nodes that have the resource)
  std::map<int64_t, int64_t> counts_;  // free amount -> nodes
  size_t cursor_ = 0;                  // NodeChanges() entries applied
};

class NodePlacementPlugin : public Plugin {
 public:
  NodePlacementPlugin(bool gpu_spread, bool cpu_spread)
      : gpu_spread_(gpu_spread), cpu_spread_(cpu_spread) {}

  void OnSessionOpen(Session& s) override {
    s.AddNodeScores(
        [this](const Session& ss, PodId pod, std::span<double> out) { Score(ss, pod, out); },
        [this](const Session& ss, PodId pod, std::string& key) {
          // A node's score reads the node and the range; the resource follows from the request.
          PrepareRange(ss, pod);
          key.append(reinterpret_cast<const char*>(&min_), sizeof min_);
          key.append(reinterpret_cast<const char*>(&max_), sizeof max_);
          return true;
        });
  }

 private:
  bool Spread(CoreResource r) const { return r == CoreResource::kCpu ? cpu_spread_ : gpu_spread_; }

  void Score(const Session& s, PodId pod, std::span<double> out) {
    PrepareRange(s, pod);
    const CoreResource r = PlacementResource(s.snap().pods[pod]);
    const bool spread = Spread(r);
    const auto& nodes = s.snap().nodes;
    for (NodeId n : s.ScoredNodes()) {
      const SnapNode& node = nodes[n];
      const double capacity = static_cast<double>(node.allocatable.Get(r));
      if (capacity == 0) continue;
      const double free = Free(node, r);
      if (spread) {
        out[n] += free / capacity;
      } else if (max_ != 0) {
        out[n] += min_ == max_ ? scores::kMaxHighDensity
                               : scores::kMaxHighDensity * (1 - (free - min_) / (max_ - min_));
      }
    }
  }

  // min_/max_ of free over the candidates that have the resource (binpack only).
  void PrepareRange(const Session& s, PodId pod) {
    const CoreResource r = PlacementResource(s.snap().pods[pod]);
    min_ = std::numeric_limits<double>::max();
    max_ = 0;
    if (Spread(r)) return;
    // One field for the whole pass (the hot loop of binpack over every candidate).
    int64_t Resources::*field =
        r == CoreResource::kCpu ? &Resources::milli_cpu : &Resources::milli_gpu;
    if (s.CandidateNodes().size() == s.snap().nodes.size()) {
      FreeRange& range = r == CoreResource::kCpu ? cpu_range_ : gpu_range_;
      range.Update(s, field);
      if (auto [lo, hi] = range.MinMax(); lo <= hi) {
        min_ = static_cast<double>(lo);
        max_ = std::max(max_, static_cast<double>(hi));
      }
      return;
    }
    for (NodeId id : s.CandidateNodes()) {
      const SnapNode& n = s.snap().nodes[id];
      if (n.allocatable.*field == 0) continue;
      const double f = static_cast<double>(n.idle.*field + n.releasing.*field);
      min_ = std::min(min_, f);
      max_ = std::max(max_, f);
    }
  }

  bool gpu_spread_;
  bool cpu_spread_;
  double min_ = 0, max_ = 0;
  FreeRange cpu_range_, gpu_range_;
};

Result<bool> ParseStrategy(const PluginArguments& args, const std::string& key) {
  auto it = args.find(key);
  if (it == args.end() || it->second == "binpack") return false;
  if (it->second == "spread") return true;
  return Error{"argument " + key + ": must be binpack or spread, got \"" + it->second + "\""};
}

}  // namespace

Result<std::unique_ptr<Plugin>> MakeNodePlacement(const PluginArguments& args) {
  auto gpu = ParseStrategy(args, "gpu");
  if (!gpu.ok()) return gpu.error();
  auto cpu = ParseStrategy(args, "cpu");
  if (!cpu.ok()) return cpu.error();
  return std::unique_ptr<Plugin>(std::make_unique<NodePlacementPlugin>(*gpu, *cpu));
}

}  // namespace kai::plugins
