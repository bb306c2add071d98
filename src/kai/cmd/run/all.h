#pragma once
// The components `kai run` knows, each with the options it runs with alone.
#include <string>
#include <vector>

#include "kai/cmd/run/run.h"
#include "kai/core/util/result.h"
#include "kai/daemons/admission/server.h"
#include "kai/daemons/binder/controller.h"
#include "kai/daemons/controllers/controllers.h"
#include "kai/daemons/podgrouper/controller.h"
#include "kai/daemons/scaleadjuster/controller.h"
#include "kai/daemons/scheduler/scheduler.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::run {

struct AllOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the API client's rate limit (qps 0: none)
  int burst = 300;
  std::vector<std::string> components;  // empty: every component that can run
  // HOST:PORT of the first component's /metrics and /healthz; the next components get the
  // next ports, in the order of KnownComponents() ("" = off).
  std::string metrics_address, health_address;
  bool leader_elect = false;
  scheduler::SchedulerOptions scheduler;
  binder::BinderOptions binder;
  podgrouperd::PodGrouperOptions podgrouper;
  controllersd::ControllersOptions controllers;
  scaleadjusterd::ScaleAdjusterOptions scale_adjuster;
  webhook::ServerOptions admission;  // runs only with a certificate (--tls-cert-file)
};

// Every component's name, in the order ports are given out.
std::vector<std::string> KnownComponents();

// The components to run, watching through `hub` when one is given. Errors name the flag: an
// unknown component, admission asked for without a certificate, a malformed address.
Result<std::vector<Component>> BuildComponents(const AllOptions& options, std::ostream& log,
                                               informer::WatchHub* hub = nullptr);

// Resolves the kubeconfig, builds the components and runs them on one client and one watch hub
// (informer/watch_hub.h): every kind is listed and watched once for the whole process.
int RunAll(const AllOptions& options, std::ostream& err);

}  // namespace kai::run
