// nodeavailability: prefer nodes where the task fits on idle resources (no pipelining needed).
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/plugins/scores.h"
#include "kai/core/snapshot/fit.h"

namespace kai::plugins {
namespace {

class NodeAvailabilityPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddNodeScores(
        [](const Session& ss, PodId pod, std::span<double> out) {
          AddScoreWhere(ss.snap(), ss.ScoredNodes(), pod, out, scores::kAvailability, FitsIdle);
        },
        AlwaysCacheable);
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeNodeAvailability() {
  return std::make_unique<NodeAvailabilityPlugin>();
}

}  // namespace kai::plugins
