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
      log_(log),
      process_stops_seen_(g_process_stops.load()),
      lead_(client, options_.leader_elect, [this] {
        LeaderOptions lo = options_.leader;
        lo.log = [this](const std::string& l) { Log(l); };
        return lo;
      }()) {}

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
  std::function<std::string()> snapshot =
      o.snapshot_address.empty() ? nullptr : component.DebugSnapshot();
  // /debug/snapshot on an address of its own is a debugging aid: one that cannot be bound (a
  // second scheduler on the machine) is logged and left off. The probes and /metrics are not.
  const bool own_debug_address =
      snapshot && o.snapshot_address != o.metrics_address && o.snapshot_address != o.health_address;
  if (!o.metrics_address.empty() || !o.health_address.empty()) {
    ServerHooks hooks;
    hooks.ready = [&component] { return component.Synced(); };
    hooks.metrics = &registry_;
    if (!own_debug_address) hooks.snapshot = snapshot;
    servers_ = std::make_unique<Servers>(hooks);
    if (Status st = servers_->Listen(o.metrics_address, o.health_address,
                                     own_debug_address ? "" : o.snapshot_address);
        !st.ok()) {
      return st;
    }
  }
  if (own_debug_address) {
    ServerHooks hooks;
    hooks.snapshot = snapshot;
    debug_servers_ = std::make_unique<Servers>(hooks);
    if (Status st = debug_servers_->Listen("", "", o.snapshot_address); !st.ok()) {
      Log("warning: /debug/snapshot is off: " + st.error().message);
    }
  }
  return Ok();
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
  if (debug_servers_) debug_servers_->Stop();
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
