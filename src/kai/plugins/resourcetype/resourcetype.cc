// resourcetype: CPU-only tasks prefer CPU-only nodes, keeping GPU nodes for GPU work.
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"
#include "kai/plugins/scores.h"

namespace kai::plugins {
namespace {

class ResourceTypePlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScore([](const Session& ss, PodId pod, NodeId node) {
      const bool cpu_task = IsCpuOnly(ss.snap().pods[pod]);
      return cpu_task && !IsGpuNode(ss.snap().nodes[node]) ? scores::kResourceType : 0.0;
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeResourceType() { return std::make_unique<ResourceTypePlugin>(); }

}  // namespace kai::plugins
