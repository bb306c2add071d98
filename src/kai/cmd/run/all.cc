#include "kai/cmd/run/all.h"

#include <algorithm>

#include "kai/kube/informer/watch_hub.h"
#include "kai/kube/runtime/manager.h"

namespace kai::run {
namespace {

// Gives a component the i-th metrics and health addresses, the shared leader flag and the
// process's watch hub.
struct Addresses {
  std::string metrics, health;
  informer::WatchHub* hub = nullptr;
};

Result<Addresses> AddressesFor(const AllOptions& o, int index, informer::WatchHub* hub) {
  Addresses a{OffsetAddress(o.metrics_address, index), OffsetAddress(o.health_address, index), hub};
  if (!o.metrics_address.empty() && a.metrics.empty()) {
    return Error{"--metrics-bind-address " + o.metrics_address + ": expected HOST:PORT"};
  }
  if (!o.health_address.empty() && a.health.empty()) {
    return Error{"--health-probe-bind-address " + o.health_address + ": expected HOST:PORT"};
  }
  return a;
}

// A component whose options carry the metrics, health and leader fields every long-running
// component has; `run` is its shared-client entry point.
template <class Options, class Run>
Component Served(std::string name, Options opts, const AllOptions& o, const Addresses& a, Run run) {
  opts.metrics_address = a.metrics;
  opts.health_address = a.health;
  opts.leader_elect = o.leader_elect;
  opts.watch_hub = a.hub;
  return {std::move(name),
          [opts, run](const k8s::ApiClient& c, std::ostream& log, const std::atomic<bool>& stop) {
            return run(opts, c, log, &stop);
          }};
}

Component Scheduler(const AllOptions& o, const Addresses& a) {
  return Served("scheduler", o.scheduler, o, a,
                [](const scheduler::SchedulerOptions& opts, const k8s::ApiClient& c,
                   std::ostream& log, const std::atomic<bool>* stop) {
                  return scheduler::RunScheduler(opts, c, log, log, stop);
                });
}

Component Binder(const AllOptions& o, const Addresses& a) {
  using Run = int (*)(const binder::BinderOptions&, const k8s::ApiClient&, std::ostream&,
                      const std::atomic<bool>*);
  return Served("binder", o.binder, o, a, static_cast<Run>(binder::RunBinder));
}

Component PodGrouper(const AllOptions& o, const Addresses& a) {
  using Run = int (*)(const podgrouperd::PodGrouperOptions&, const k8s::ApiClient&, std::ostream&,
                      const std::atomic<bool>*);
  return Served("podgrouper", o.podgrouper, o, a, static_cast<Run>(podgrouperd::RunPodGrouper));
}

Component Controllers(const AllOptions& o, const Addresses& a) {
  using Run = int (*)(const controllersd::ControllersOptions&, const k8s::ApiClient&, std::ostream&,
                      const std::atomic<bool>*);
  return Served("controllers", o.controllers, o, a, static_cast<Run>(controllersd::RunControllers));
}

Component ScaleAdjuster(const AllOptions& o, const Addresses& a) {
  using Run = int (*)(const scaleadjusterd::ScaleAdjusterOptions&, const k8s::ApiClient&,
                      std::ostream&, const std::atomic<bool>*);
  return Served("scale-adjuster", o.scale_adjuster, o, a,
                static_cast<Run>(scaleadjusterd::RunScaleAdjuster));
}

// The webhook server has its own HTTPS address (it serves /healthz there).
Component Admission(const AllOptions& o, const Addresses&) {
  auto opts = o.admission;
  return {"admission",
          [opts](const k8s::ApiClient& c, std::ostream& log, const std::atomic<bool>& stop) {
            return webhook::RunAdmission(opts, c, log, &stop);
          }};
}

using Factory = Component (*)(const AllOptions&, const Addresses&);

const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const std::vector<std::pair<std::string, Factory>> f = {
      {"scheduler", Scheduler},          {"binder", Binder},
      {"podgrouper", PodGrouper},        {"controllers", Controllers},
      {"scale-adjuster", ScaleAdjuster}, {"admission", Admission},
  };
  return f;
}

bool Wanted(const AllOptions& o, const std::string& name) {
  if (o.components.empty()) return name != "admission" || !o.admission.cert_file.empty();
  return std::find(o.components.begin(), o.components.end(), name) != o.components.end();
}

}  // namespace

std::vector<std::string> KnownComponents() {
  std::vector<std::string> names;
  for (const auto& [name, f] : Factories()) names.push_back(name);
  return names;
}

Result<std::vector<Component>> BuildComponents(const AllOptions& o, std::ostream& log,
                                               informer::WatchHub* hub) {
  const std::vector<std::string> known = KnownComponents();
  for (const std::string& c : o.components) {
    if (std::find(known.begin(), known.end(), c) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Error{"--components: unknown component \"" + c + "\" (known: " + list + ")"};
    }
  }
  if (Wanted(o, "admission") && (o.admission.cert_file.empty() || o.admission.key_file.empty())) {
    return Error{"--components admission: needs --tls-cert-file and --tls-key-file"};
  }
  std::vector<Component> out;
  for (size_t i = 0; i < Factories().size(); ++i) {
    const auto& [name, factory] = Factories()[i];
    if (!Wanted(o, name)) continue;
    auto addresses = AddressesFor(o, static_cast<int>(i), hub);
    if (!addresses.ok()) return addresses.error();
    out.push_back(factory(o, *addresses));
    log << "kai run: " << name
        << (addresses->metrics.empty() ? "" : ", metrics on " + addresses->metrics)
        << (addresses->health.empty() ? "" : ", health on " + addresses->health) << "\n";
  }
  if (o.components.empty() && !Wanted(o, "admission")) {
    log << "kai run: admission off (no --tls-cert-file)\n";
  }
  return out;
}

int RunAll(const AllOptions& o, std::ostream& err) {
  auto opened = runtime::OpenClient(runtime::ClientOptionsOf(o));
  if (!opened.ok()) {
    err << "kai: error: " << opened.error().message << "\n";
    return 2;
  }
  const k8s::ApiClient& client = *opened;
  std::mutex err_mu;
  informer::ReflectorOptions ro;
  ro.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(err_mu);
    err << "kai run: watch " << line << "\n";
  };
  ro.recheck_absent = o.scheduler.unserved_recheck;  // the optional kinds (the scheduler's)
  // One list and one watch per kind for all components (they subscribe as they start).
  informer::WatchHub hub(client, ro);
  auto components = BuildComponents(o, err, &hub);
  if (!components.ok()) {
    err << "kai: error: " << components.error().message << "\n";
    return 2;
  }
  const int rc = RunComponents(*components, client, err, &err_mu);
  hub.Stop();
  return rc;
}

}  // namespace kai::run
