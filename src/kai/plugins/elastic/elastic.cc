// elastic: jobs below their gang minimum first, then jobs exactly at it, then jobs above it, so
// that gangs complete before elastic jobs grow (KAI pkg/scheduler/plugins/elastic). The level is
// taken per PodSet: one PodSet below its minimum puts the job below.
#include "kai/framework/session.h"
#include "kai/framework/subgroups.h"
#include "kai/plugins/builtin.h"

namespace kai::plugins {
namespace {

class ElasticPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddJobOrder([](const Session& ss, JobId a, JobId b) {
      const GangLevel sa = JobGangLevel(ss.snap().jobs[a]);
      const GangLevel sb = JobGangLevel(ss.snap().jobs[b]);
      return sa == sb ? 0 : (sa < sb ? -1 : 1);
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeElastic() { return std::make_unique<ElasticPlugin>(); }

}  // namespace kai::plugins
