// resourcetype: CPU-only tasks prefer CPU-only nodes, keeping GPU nodes for GPU work.
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai::plugins {
namespace {

class ResourceTypePlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScores(
        [](const Session& ss, PodId pod, std::span<double> out) {
          if (!IsCpuOnly(ss.snap().pods[pod])) return;
          const auto& nodes = ss.snap().nodes;
          for (NodeId n : ss.ScoredNodes()) {
            if (!IsGpuNode(nodes[n])) out[n] += scores::kResourceType;
          }
        },
        AlwaysCacheable);
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeResourceType() { return std::make_unique<ResourceTypePlugin>(); }

}  // namespace kai::plugins
