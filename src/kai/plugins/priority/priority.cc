// priority: jobs of higher priority go first (KAI pkg/scheduler/plugins/priority).
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"

namespace kai::plugins {
namespace {

class PriorityPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddJobOrder([](const Session& ss, JobId a, JobId b) {
      const int pa = ss.snap().jobs[a].priority;
      const int pb = ss.snap().jobs[b].priority;
      return pa == pb ? 0 : (pa > pb ? -1 : 1);
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakePriority() { return std::make_unique<PriorityPlugin>(); }

}  // namespace kai::plugins
