// nodeplacement: binpack or spread, per resource. GPU tasks are placed by free GPUs, CPU-only
// tasks by free CPU (KAI pkg/scheduler/plugins/nodeplacement).
//   binpack: 9 * (1 - (free - min) / (max - min)) with min/max of free over the candidate nodes
//            that have the resource (9 when min == max; 0 when the node lacks it or max == 0);
//   spread:  free / capacity.
// free = idle + releasing. Scores are doubles, as in KAI, so equal scores tie the same way.
#include <limits>

#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"
#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

CoreResource PlacementResource(const SnapPod& pod) {
  return IsCpuOnly(pod) ? CoreResource::kCpu : CoreResource::kGpu;
}

double Free(const SnapNode& n, CoreResource r) {
  return static_cast<double>(n.idle.Get(r) + n.releasing.Get(r));
}

class NodePlacementPlugin : public Plugin {
 public:
  NodePlacementPlugin(bool gpu_spread, bool cpu_spread)
      : gpu_spread_(gpu_spread), cpu_spread_(cpu_spread) {}

  void OnSessionOpen(Session& s) override {
    s.AddNodeScores([this](const Session& ss, PodId pod, std::span<double> out) {
      PrepareRange(ss, pod);
      const SnapPod& p = ss.snap().pods[pod];
      const CoreResource r = PlacementResource(p);
      const bool spread = Spread(r);
      const auto& nodes = ss.snap().nodes;
      for (NodeId n : ss.ScoredNodes()) {
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
    });
  }

 private:
  bool Spread(CoreResource r) const { return r == CoreResource::kCpu ? cpu_spread_ : gpu_spread_; }

  void PrepareRange(const Session& s, PodId pod) {
    const CoreResource r = PlacementResource(s.snap().pods[pod]);
    min_ = std::numeric_limits<double>::max();
    max_ = 0;
    if (Spread(r)) return;
    // One field for the whole pass (the hot loop of binpack over every candidate).
    int64_t Resources::*field =
        r == CoreResource::kCpu ? &Resources::milli_cpu : &Resources::milli_gpu;
    for (NodeId id : s.CandidateNodes()) {
      const SnapNode& n = s.snap().nodes[id];
      if (n.allocatable.*field == 0) continue;
      const double f = static_cast<double>(n.idle.*field + n.releasing.*field);
      min_ = std::min(min_, f);
      max_ = std::max(max_, f);
    }
  }

  double Score(const SnapPod& pod, const SnapNode& node) const {
    const CoreResource r = PlacementResource(pod);
    const double capacity = static_cast<double>(node.allocatable.Get(r));
    if (capacity == 0) return 0;
    const double free = Free(node, r);
    if (Spread(r)) return free / capacity;
    if (max_ == 0) return 0;
    if (min_ == max_) return scores::kMaxHighDensity;
    return scores::kMaxHighDensity * (1 - (free - min_) / (max_ - min_));
  }

  bool gpu_spread_;
  bool cpu_spread_;
  double min_ = 0, max_ = 0;
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
