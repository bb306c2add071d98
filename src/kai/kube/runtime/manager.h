#pragma once
// The component runtime: what controller-runtime's Manager and client-go's leader election give
// each of KAI's components, given once to every kai daemon (scheduler, binder, pod grouper,
// controllers, scale adjuster, admission) and to each of them inside `kai run`.
//
// A component implements Component; Manager::Run drives its life, the same for all of them:
//   1. Start: the component builds what it needs (writing through client(), the fenced client)
//      and starts its watches. An error is bad configuration: exit 2.
//   2. Sync: the first lists arrive within the sync time-out, or the process exits 1 naming
//      what did not sync.
//   3. The servers open (/metrics from registry(), /healthz, /readyz once synced, the optional
//      /debug/snapshot). A metrics or health address that cannot be bound stops the process
//      (exit 1), as controller-runtime's manager does: a component nobody can scrape or probe is
//      not started. /debug/snapshot's own address (loopback, a debugging aid) is only logged as
//      off when taken, so that two schedulers can run on one machine.
//   4. Leader election starts. A component that leads only (the default) keeps its caches warm
//      in Standby until it leads; a component that decides as a standby too (the scheduler) runs
//      at once and asks Leading() before each write.
//   5. Run until a stop (RequestStop, SIGTERM through RequestProcessStop) or a lost lease. A lost
//      lease closes the write fence at once, whatever the component's threads are doing; the
//      component's queued writes are then dropped and the process exits 1 (kLeadershipLostExit)
//      so that its Deployment restarts it into the election.
//   6. Stop: the component stops its workers (flushing queued writes for a few seconds on a clean
//      stop), the servers close, and the lease is handed back so that a standby takes over at once.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>

#include "kai/core/util/result.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/leader.h"
#include "kai/kube/serve/metrics.h"

namespace kai::informer {
class WatchHub;
}

namespace kai::runtime {

class Servers;

// The client flags of every command that talks to a cluster.
struct ClientOptions {
  std::string kubeconfig, context;
  double qps = 0;  // --qps and --burst: the client's rate limit (qps 0: none)
  int burst = 300;
};

template <class Options>
ClientOptions ClientOptionsOf(const Options& o) {
  return {o.kubeconfig, o.context, o.qps, o.burst};
}

// The API client the flags name; an error names the kubeconfig's problem.
Result<k8s::ApiClient> OpenClient(const ClientOptions& o);

// What the runtime needs of a component's flags.
struct ManagerOptions {
  std::string name;  // the component: the log subject (`kai NAME: ...`)
  bool leader_elect = false;
  LeaderOptions leader;
  std::string metrics_address;   // host:port for /metrics; "" = off
  std::string health_address;    // host:port for /healthz, /readyz; "" = off
  std::string snapshot_address;  // host:port for /debug/snapshot; "" = off
  std::chrono::milliseconds sync_timeout{60000};
  // Another stop request the manager obeys (`kai run`'s: one component's exit stops the rest).
  const std::atomic<bool>* also_stop = nullptr;
};

// The ManagerOptions of a component whose options carry the leader_elect_* flags and the
// server addresses every long-running component has.
template <class Options>
ManagerOptions ManagerOptionsOf(std::string name, const Options& o) {
  ManagerOptions m;
  m.name = std::move(name);
  m.leader_elect = o.leader_elect;
  m.leader = LeaderOptionsOf(o, nullptr);
  m.metrics_address = o.metrics_address;
  m.health_address = o.health_address;
  m.sync_timeout = o.sync_timeout;
  return m;
}

class Manager;

// One kai component on the runtime.
class Component {
 public:
  virtual ~Component() = default;
  // Builds what the component needs and starts its watches; an error is bad configuration.
  virtual Status Start() = 0;
  // Waits for the first lists; an error says what did not sync.
  virtual Status Sync(std::chrono::milliseconds timeout) = 0;
  // The caches hold the first lists (/readyz).
  virtual bool Synced() const = 0;
  // True: Run is called at once, before leading (the component checks Leading() itself).
  virtual bool DecidesAsStandby() const { return false; }
  // A standby's wait for the lease, called every 100 ms: keeps the caches current.
  virtual void Standby() {}
  // Works until the manager stops (Stopping()); returns the exit status of a clean run.
  virtual int Run() = 0;
  // Stops the component's workers; `lease_lost`: queued writes are dropped, not sent.
  virtual void Stop(bool lease_lost) = 0;
  // /debug/snapshot's body; null: no such route.
  virtual std::function<std::string()> DebugSnapshot() { return nullptr; }
};

class Manager {
 public:
  Manager(const k8s::ApiClient& client, ManagerOptions options, std::ostream& log);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // The client every write of the component goes through: fenced by the lease when electing.
  const k8s::ApiClient& client() const { return lead_.client(); }
  serve::MetricsRegistry& registry() { return registry_; }
  const ManagerOptions& options() const { return options_; }

  // One log line, `kai NAME: line`, written whole (lines of other threads never interleave).
  void Log(const std::string& line);
  std::function<void(const std::string&)> Logger();

  bool electing() const { return lead_.electing(); }
  bool Leading() const { return lead_.Leading(); }
  bool LeaseLost() const { return lead_.Lost(); }
  // A stop was asked for (this manager's, or the process's) or the lease is lost.
  bool Stopping() const;
  // The flag loops that take an atomic wait on: set once Stopping() (kept current by Sleep).
  const std::atomic<bool>& stop_flag() const { return stopping_; }
  // Sleeps `d`, or less when the manager stops.
  void Sleep(std::chrono::steady_clock::duration d);
  // Asks this manager to stop (async-signal-safe).
  void RequestStop() { stop_ = true; }

  // Drives the component through its life (above); returns the process's exit status.
  int Run(Component& component);

 private:
  Status OpenServers(Component& component);
  void AwaitLeadership(Component& component);
  int Finish(Component& component, int rc);

  ManagerOptions options_;
  std::ostream& log_;
  std::mutex log_mu_;
  std::atomic<bool> stop_{false};
  mutable std::atomic<bool> stopping_{false};
  uint64_t process_stops_seen_;
  Leadership lead_;  // after what its elector's log lines use: it is destroyed first
  serve::MetricsRegistry registry_;
  std::unique_ptr<Servers> servers_;        // /metrics, /healthz, /readyz
  std::unique_ptr<Servers> debug_servers_;  // /debug/snapshot on an address of its own
};

// SIGTERM and SIGINT: every manager of the process stops (async-signal-safe). A manager made
// after the request does not see it.
void RequestProcessStop();
// How many process stops were requested so far (a runner without a manager compares it).
uint64_t ProcessStopRequests();

// Opens the client from `client`, makes the manager and the component (`make` gets the manager)
// and runs it: a daemon's whole main. Exit 2 when the client cannot be opened.
int RunComponent(const ClientOptions& client, ManagerOptions options, std::ostream& log,
                 const std::function<std::unique_ptr<Component>(Manager&)>& make);
// The same on a shared client (`kai run`), also stopping when `also_stop` is set.
int RunComponent(const k8s::ApiClient& client, ManagerOptions options, std::ostream& log,
                 const std::function<std::unique_ptr<Component>(Manager&)>& make,
                 const std::atomic<bool>* also_stop = nullptr);

}  // namespace kai::runtime
