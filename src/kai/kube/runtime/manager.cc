#include "kai/kube/runtime/manager.h"

#include <thread>

#include "kai/kube/client/kubeconfig.h"
#include "kai/kube/runtime/server.h"

namespace kai::runtime {
namespace {

// Process-wide stop requests (the signal handler's): each manager remembers how many it has
// seen at its start, so a request stops every manager running when it came.
std::atomic<uint64_t> g_process_stops{0};

constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr auto kStandbyPoll = std::chrono::milliseconds(100);

}  // namespace

void RequestProcessStop() { g_process_stops.fetch_add(1); }

uint64_t ProcessStopRequests() { return g_process_stops.load(); }

Result<k8s::ApiClient> OpenClient(const ClientOptions& o) {
  auto config = k8s::ResolveConfig(o.kubeconfig, o.context, k8s::ProcessEnv());
  if (!config.ok()) return config.error();
  config->qps = o.qps;
  config->burst = o.burst;
  return k8s::ApiClient(*config);
}

Manager::Manager(const k8s::ApiClient& client, ManagerOptions options, std::ostream& log)
    : options_(std::move(options)),
      lead_(client, options_.leader_elect,
            [this] {
              LeaderOptions lo = options_.leader;
              lo.log = [this](const std::string& l) { Log(l); };
              return lo;
            }()),
      log_(log),
      process_stops_seen_(g_process_stops.load()) {}

Manager::~Manager() = default;

void Manager::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  log_ << "kai " << options_.name << ": " << line << "\n";
}

std::function<void(const std::string&)> Manager::Logger() {
  return [this](const std::string& line) { Log(line); };
}

bool Manager::Stopping() const {
  if (stopping_) return true;
  const bool stop = stop_ || g_process_stops.load() != process_stops_seen_ ||
                    (options_.also_stop && options_.also_stop->load()) || lead_.Lost();
  if (stop) stopping_ = true;
  return stop;
}

void Manager::Sleep(std::chrono::steady_clock::duration d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!Stopping() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        kPoll, until - std::chrono::steady_clock::now()));
  }
}

Status Manager::OpenServers(Component& component) {
  const ManagerOptions& o = options_;
  if (o.metrics_address.empty() && o.health_address.empty() && o.snapshot_address.empty()) {
    return Ok();
  }
  ServerHooks hooks;
  hooks.ready = [&component] { return component.Synced(); };
  hooks.metrics = &registry_;
  hooks.snapshot = component.DebugSnapshot();
  servers_ = std::make_unique<Servers>(hooks);
  return servers_->Listen(o.metrics_address, o.health_address, o.snapshot_address);
}

void Manager::AwaitLeadership(Component& component) {
  while (!Stopping() && !lead_.Leading()) {
    component.Standby();
    Sleep(kStandbyPoll);
  }
}

int Manager::Finish(Component& component, int rc) {
  const bool lost = lead_.Lost();
  if (lost) {
    Log(kLeadershipLostMessage);
    rc = kLeadershipLostExit;
  }
  stopping_ = true;  // the component's own waits end
  component.Stop(lost);
  if (servers_) servers_->Stop();
  lead_.Release();  // after the writers stopped (a lost lease only stops the elector)
  return rc;
}

int Manager::Run(Component& component) {
  if (Status st = component.Start(); !st.ok()) {
    Log("error: " + st.error().message);
    return Finish(component, 2);
  }
  if (Stopping()) return Finish(component, 0);
  if (Status st = component.Sync(options_.sync_timeout); !st.ok()) {
    Log("error: " + st.error().message);
    return Finish(component, 1);
  }
  if (Status st = OpenServers(component); !st.ok()) {
    Log("error: " + st.error().message);
    return Finish(component, 1);
  }
  lead_.Start();
  if (!component.DecidesAsStandby()) AwaitLeadership(component);
  const int rc = Stopping() ? 0 : component.Run();
  return Finish(component, rc);
}

int RunComponent(const k8s::ApiClient& client, ManagerOptions options, std::ostream& log,
                 const std::function<std::unique_ptr<Component>(Manager&)>& make,
                 const std::atomic<bool>* also_stop) {
  if (also_stop) options.also_stop = also_stop;
  Manager manager(client, std::move(options), log);
  std::unique_ptr<Component> component = make(manager);
  return manager.Run(*component);
}

int RunComponent(const ClientOptions& client, ManagerOptions options, std::ostream& log,
                 const std::function<std::unique_ptr<Component>(Manager&)>& make) {
  auto c = OpenClient(client);
  if (!c.ok()) {
    log << "kai " << options.name << ": error: " << c.error().message << "\n";
    return 2;
  }
  return RunComponent(*c, std::move(options), log, make);
}

}  // namespace kai::runtime
