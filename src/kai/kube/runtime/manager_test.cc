#include "kai/kube/runtime/manager.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kai/kube/serve/http_server.h"

namespace kai::runtime {
namespace {

k8s::ApiClient Client() { return k8s::ApiClient(k8s::ClusterConfig{}); }

// A component that records what the runtime asked of it.
class Recorder final : public Component {
 public:
  explicit Recorder(Manager& m) : m_(m) {}
  Status start = Ok();
  Status sync = Ok();
  bool decides_as_standby = false;
  int run_rc = 0;
  std::vector<std::string> calls;

  Status Start() override {
    calls.push_back("start");
    return start;
  }
  Status Sync(std::chrono::milliseconds) override {
    calls.push_back("sync");
    return sync;
  }
  bool Synced() const override { return sync.ok(); }
  bool DecidesAsStandby() const override { return decides_as_standby; }
  int Run() override {
    calls.push_back("run");
    while (!m_.Stopping()) m_.Sleep(std::chrono::milliseconds(5));
    return run_rc;
  }
  void Stop(bool lease_lost) override { calls.push_back(lease_lost ? "stop lost" : "stop"); }
  std::function<std::string()> DebugSnapshot() override {
    return [] { return std::string("kind: Node\n"); };
  }

 private:
  Manager& m_;
};

ManagerOptions Named(const std::string& name) {
  ManagerOptions o;
  o.name = name;
  return o;
}

TEST(Manager, ABadStartIsBadConfigurationAndNothingRuns) {
  const k8s::ApiClient client = Client();
  std::stringstream log;
  Manager m(client, Named("binder"), log);
  Recorder c(m);
  c.start = Error{"--plugins: not JSON"};
  EXPECT_EQ(m.Run(c), 2);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"start", "stop"}));
  EXPECT_EQ(log.str(), "kai binder: error: --plugins: not JSON\n");
}

TEST(Manager, CachesThatNeverSyncExitOne) {
  const k8s::ApiClient client = Client();
  std::stringstream log;
  Manager m(client, Named("podgrouper"), log);
  Recorder c(m);
  c.sync = Error{"the pod watch did not sync"};
  EXPECT_EQ(m.Run(c), 1);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"start", "sync", "stop"}));
  EXPECT_NE(log.str().find("kai podgrouper: error: the pod watch did not sync"), std::string::npos);
}

TEST(Manager, RunsUntilAStopThenStopsTheComponent) {
  const k8s::ApiClient client = Client();
  std::stringstream log;
  Manager m(client, Named("controllers"), log);
  Recorder c(m);
  std::thread stopper([&m] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m.RequestStop();
  });
  EXPECT_EQ(m.Run(c), 0);
  stopper.join();
  EXPECT_EQ(c.calls, (std::vector<std::string>{"start", "sync", "run", "stop"}));
}

TEST(Manager, AProcessStopStopsEveryManagerRunning) {
  const k8s::ApiClient client = Client();
  std::stringstream log_a, log_b;
  Manager a(client, Named("a"), log_a);
  Manager b(client, Named("b"), log_b);
  Recorder ca(a), cb(b);
  int rc_a = -1, rc_b = -1;
  std::thread ta([&] { rc_a = a.Run(ca); });
  std::thread tb([&] { rc_b = b.Run(cb); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RequestProcessStop();
  ta.join();
  tb.join();
  EXPECT_EQ(rc_a, 0);
  EXPECT_EQ(rc_b, 0);
  // A manager made after the request does not see it.
  Manager later(client, Named("later"), log_a);
  EXPECT_FALSE(later.Stopping());
}

TEST(Manager, AnotherStopFlagStopsIt) {
  const k8s::ApiClient client = Client();
  std::stringstream log;
  std::atomic<bool> others{false};
  ManagerOptions o = Named("scheduler");
  o.also_stop = &others;
  Manager m(client, o, log);
  Recorder c(m);
  c.decides_as_standby = true;
  std::thread stopper([&others] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    others = true;
  });
  EXPECT_EQ(m.Run(c), 0);
  stopper.join();
  EXPECT_EQ(c.calls.back(), "stop");
}

// A server holding a loopback port; its address.
std::string TakenAddress(serve::HttpServer& taken) {
  taken.Add(serve::Get("/", [](const serve::Request&) {
    return serve::Response{200, "text/plain", "", {}};
  }));
  EXPECT_TRUE(taken.Listen("127.0.0.1:0").ok());
  return "127.0.0.1:" + std::to_string(taken.port());
}

TEST(Manager, AMetricsAddressThatCannotBeBoundStopsTheComponent) {
  serve::HttpServer taken;
  const std::string address = TakenAddress(taken);
  const k8s::ApiClient client = Client();
  std::stringstream log;
  ManagerOptions o = Named("scale-adjuster");
  o.metrics_address = address;
  Manager m(client, o, log);
  Recorder c(m);
  EXPECT_EQ(m.Run(c), 1);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"start", "sync", "stop"}));
  EXPECT_NE(log.str().find(address), std::string::npos) << log.str();
  taken.Stop();
}

TEST(Manager, ATakenDebugSnapshotAddressIsOnlyAWarning) {
  serve::HttpServer taken;
  const std::string address = TakenAddress(taken);
  const k8s::ApiClient client = Client();
  std::stringstream log;
  ManagerOptions o = Named("scheduler");
  o.snapshot_address = address;
  Manager m(client, o, log);
  Recorder c(m);
  std::thread stopper([&m] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m.RequestStop();
  });
  EXPECT_EQ(m.Run(c), 0);
  stopper.join();
  EXPECT_NE(log.str().find("kai scheduler: warning: /debug/snapshot is off: "), std::string::npos)
      << log.str();
  taken.Stop();
}

TEST(Manager, LogLinesNameTheComponent) {
  const k8s::ApiClient client = Client();
  std::stringstream log;
  Manager m(client, Named("admission"), log);
  m.Log("serving");
  m.Logger()("again");
  EXPECT_EQ(log.str(), "kai admission: serving\nkai admission: again\n");
}

}  // namespace
}  // namespace kai::runtime
