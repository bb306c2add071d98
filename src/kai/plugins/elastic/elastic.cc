// elastic: jobs below their gang minimum first, then jobs exactly at it, then jobs above it, so
// that gangs complete before elastic jobs grow (KAI pkg/scheduler/plugins/elastic).
#include "kai/framework/session.h"
#include "kai/plugins/builtin.h"

namespace kai::plugins {
namespace {

// 0: below minimum, 1: exactly at it, 2: above it.
int GangState(const SnapJob& job) {
  if (job.active_allocated < job.MinAvailable()) return 0;
  return job.active_allocated == job.MinAvailable() ? 1 : 2;
}

class ElasticPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddJobOrder([](const Session& ss, JobId a, JobId b) {
      const int sa = GangState(ss.snap().jobs[a]);
      const int sb = GangState(ss.snap().jobs[b]);
      return sa == sb ? 0 : (sa < sb ? -1 : 1);
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeElastic() { return std::make_unique<ElasticPlugin>(); }

}  // namespace kai::plugins
