// `kai controllers` against the fake API server (fake_apiserver.py) with faults injected: a status
// patch the server fails (500, beyond the client's own retries) is tried again by the work queue
// until it lands; a 404 (the PodGroup deleted meanwhile) is not retried; a watch that ends is
// resumed, so a change made after it is still seen.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "fake_server.h"
#include "kai/daemons/controllers/controllers.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/manager.h"

namespace kai::controllersd {
namespace {

using namespace std::chrono_literals;
using fakeapi::FakeApiServer;
using fakeapi::StrAt;
namespace res = k8s::resources;

std::string PodJson(const std::string& phase) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team",)"
         R"("annotations":{"pod-group-name":"pg"}},"spec":{"nodeName":"n1","containers":)"
         R"([{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":")" +
         phase + R"("}})";
}

constexpr const char* kPodGroup =
    R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":"pg",)"
    R"("namespace":"team"},"spec":{"queue":"q"}})";
constexpr const char* kQueue =
    R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q"},"spec":{}})";

std::string Op(const std::string& op, const std::string& object) {
  return R"({"op":")" + op + R"(","object":)" + object + "}";
}

class ControllersFakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const FakeApiServer::StartResult started = server_.Start(why);
    if (started == FakeApiServer::StartResult::kNoPython) GTEST_SKIP() << why;
    ASSERT_EQ(started, FakeApiServer::StartResult::kStarted) << why;
    client_ = fakeapi::QuickClient(server_);
    options_.metrics_address = options_.health_address = "";
    options_.resync_period = 0ms;
    options_.sync_timeout = 10s;
    server_.Ops({Op("create", kQueue), Op("create", kPodGroup), Op("create", PodJson("Running"))});
  }

  void TearDown() override {
    if (thread_.joinable()) {
      runtime::RequestProcessStop();
      thread_.join();
    }
  }

  void Start() {
    thread_ = std::thread([this] { rc_ = RunControllers(options_, *client_, err_); });
  }

  int Stop() {
    runtime::RequestProcessStop();
    thread_.join();
    return rc_;
  }

  std::string AllocatedCpu(const k8s::ResourceType& type, std::initializer_list<const char*> at) {
    const rapidjson::Document d = server_.Objects(type);
    if (!d.IsObject() || !d.HasMember("items") || d["items"].Empty()) return "";
    return StrAt(d["items"][0], at);
  }

  std::string GroupCpu() {
    return AllocatedCpu(res::kPodGroup, {"status", "resourcesStatus", "allocated", "cpu"});
  }

  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout = 15s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return done();
  }

  int StatusPatches() {
    int n = 0;
    for (const auto& e : server_.Log()) {
      n += e.method == "PATCH" && e.path.find("/podgroups/pg/status") != std::string::npos;
    }
    return n;
  }

  FakeApiServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
  ControllersOptions options_;
  std::ostringstream err_;
  std::thread thread_;
  int rc_ = -1;
};

TEST_F(ControllersFakeApi, FailedStatusPatchIsRetriedUntilItLands) {
  server_.AddFault(
      R"({"method":"PATCH","path":"/podgroups/pg/status$","times":3,"action":{"status":500}})");
  Start();
  ASSERT_TRUE(WaitFor([&] { return GroupCpu() == "1"; })) << err_.str();
  EXPECT_TRUE(WaitFor([&] {
    return AllocatedCpu(res::kQueue, {"status", "allocated", "cpu"}) == "1";
  }));
  EXPECT_EQ(StatusPatches(),
            4);  // 2 failed calls of 2 attempts each (3 faults), then one that lands
  EXPECT_EQ(Stop(), 0);
  EXPECT_NE(err_.str().find("500"), std::string::npos);
}

TEST_F(ControllersFakeApi, NotFoundOnPatchIsNotRetried) {
  server_.AddFault(
      R"({"method":"PATCH","path":"/podgroups/pg/status$","times":-1,"action":{"status":404}})");
  Start();
  ASSERT_TRUE(WaitFor([&] { return StatusPatches() >= 1; }));
  std::this_thread::sleep_for(2500ms);  // past the work queue's first retry delay (1 s)
  EXPECT_EQ(StatusPatches(), 1);
  EXPECT_EQ(Stop(), 0);
}

TEST_F(ControllersFakeApi, EndedWatchIsResumedAndLaterChangesSeen) {
  Start();
  ASSERT_TRUE(WaitFor([&] { return GroupCpu() == "1"; })) << err_.str();
  server_.CloseWatches();
  server_.Ops({Op("update", PodJson("Succeeded"))});
  EXPECT_TRUE(WaitFor([&] { return GroupCpu().empty(); })) << err_.str();
  EXPECT_EQ(Stop(), 0);
}

}  // namespace
}  // namespace kai::controllersd
