// elastic: jobs below their gang minimum first, then jobs exactly at it, then jobs above it, so
// that gangs complete before elastic jobs grow (KAI pkg/scheduler/plugins/elastic). The level is
// taken per PodSet: one PodSet below its minimum puts the job below.
#include "kai/core/framework/session.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/plugins/builtin.h"

namespace kai::plugins {
namespace {

class ElasticPlugin : public Plugin {
 public:
  void OnSessionOpen(Session& s) override {
    s.AddJobOrderKey([](const Session& ss, JobId j) {
      return static_cast<int64_t>(JobGangLevel(ss.snap().jobs[j]));
    });
  }
};

}  // namespace

std::unique_ptr<Plugin> MakeElastic() { return std::make_unique<ElasticPlugin>(); }

}  // namespace kai::plugins
