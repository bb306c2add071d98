// priority: jobs of higher priority go first (KAI pkg/scheduler/plugins/priority).
#include "kai/core/framework/session.h"
#include "kai/core/plugins/builtin.h"

namespace kai::plugins {
namespace {

class PriorityPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddJobOrderKey(
        [](const Session& ss, JobId j) { return -int64_t{ss.snap().jobs[j].priority}; });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakePriority() { return std::make_unique<PriorityPlugin>(); }

}  // namespace kai::plugins
