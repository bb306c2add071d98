// The leader elector and its write fence against the fake API server: another holder that
// takes the Lease closes the fence at the elector's next renewal (a fenced write then never
// reaches the server, and the lost lease is not taken back), a renewal that hangs closes it by
// the renew deadline alone, and a released lease is taken by a standby at once.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <thread>

#include "fake_server.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/runtime/leader.h"

namespace kai::runtime {
namespace {

using namespace std::chrono_literals;
using fakeapi::FakeApiServer;
using fakeapi::StrAt;
namespace res = k8s::resources;

std::string RenewTimeNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
  return buf;
}

std::string StolenLease(const std::string& holder) {
  return R"({"op":"update","object":{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
         R"("metadata":{"name":"kai-test","namespace":"kai-scheduler"},"spec":{"holderIdentity":")" +
         holder + R"(","leaseDurationSeconds":15,"renewTime":")" + RenewTimeNow() + R"("}}})";
}

template <class Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds limit = 5s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

class LeaderFakeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    const FakeApiServer::StartResult started = server_.Start(why);
    if (started == FakeApiServer::StartResult::kNoPython) GTEST_SKIP() << why;
    ASSERT_EQ(started, FakeApiServer::StartResult::kStarted) << why;
    client_ = fakeapi::QuickClient(server_);
  }

  LeaderOptions Options(const std::string& identity, std::shared_ptr<k8s::WriteFence> fence) {
    LeaderOptions lo;
    lo.name = "kai-test";
    lo.identity = identity;
    lo.lease_duration = 3s;
    lo.renew_deadline = 2s;
    lo.retry_period = 50ms;
    lo.fence = std::move(fence);
    return lo;
  }

  rapidjson::Document Lease() {
    rapidjson::Document d = server_.Objects(res::kLease);
    rapidjson::Document one;
    if (d.IsObject() && d.HasMember("items") && d["items"].Size() == 1) {
      one.CopyFrom(d["items"][0], one.GetAllocator());
    }
    return one;
  }

  int ConfigMapPosts() {
    int n = 0;
    for (const fakeapi::LogEntry& e : server_.Log())
      n += e.method == "POST" && e.path.find("/configmaps") != std::string::npos;
    return n;
  }

  static std::string ConfigMap(const std::string& name) {
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("}})";
  }

  FakeApiServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
};

TEST_F(LeaderFakeApi, StolenLeaseClosesTheFenceAtTheNextRenewal) {
  auto fence = std::make_shared<k8s::WriteFence>();
  const k8s::ApiClient fenced = client_->WithFence(fence);
  const std::string cms = k8s::CollectionPath(res::kConfigMap, "team");
  EXPECT_TRUE(k8s::Fenced(fenced.Create(cms, ConfigMap("standby"))));  // not leading yet
  LeaderElector elector(*client_, Options("a", fence));
  elector.Start();
  ASSERT_TRUE(WaitFor([&] { return elector.IsLeader(); }));
  EXPECT_TRUE(fenced.Create(cms, ConfigMap("leader")).ok());
  server_.Ops({StolenLease("b")});
  ASSERT_TRUE(WaitFor([&] { return elector.Lost(); }));
  EXPECT_FALSE(fence->Open());
  EXPECT_FALSE(elector.IsLeader());
  EXPECT_TRUE(k8s::Fenced(fenced.Create(cms, ConfigMap("deposed"))));
  EXPECT_EQ(ConfigMapPosts(), 1);  // only the leader's write reached the server
  EXPECT_EQ(fence->admitted(), 1);
  std::this_thread::sleep_for(200ms);  // four retry periods: the loop ended, the lease stays
  EXPECT_EQ(StrAt(Lease(), {"spec", "holderIdentity"}), "b");
}

TEST_F(LeaderFakeApi, RenewalThatHangsClosesTheFenceByTheDeadline) {
  auto fence = std::make_shared<k8s::WriteFence>();
  LeaderOptions lo = Options("a", fence);
  lo.renew_deadline = 500ms;
  LeaderElector elector(*client_, lo);
  elector.Start();
  ASSERT_TRUE(WaitFor([&] { return elector.IsLeader(); }));
  server_.AddFault(R"({"method":"GET","path":"/leases/kai-test$","times":-1,)"
                   R"("action":{"hang":true,"hang_seconds":3}})");
  // The elector's thread is stuck in its GET; the fence closes on its own at the deadline.
  ASSERT_TRUE(WaitFor([&] { return !fence->Open(); }));
  EXPECT_TRUE(elector.Lost());
  EXPECT_TRUE(k8s::Fenced(client_->WithFence(fence).Create(
      k8s::CollectionPath(res::kConfigMap, "team"), ConfigMap("late"))));
  EXPECT_EQ(ConfigMapPosts(), 0);
  server_.ClearFaults();
}

TEST_F(LeaderFakeApi, ReleasedLeaseIsTakenByAStandbyAtOnce) {
  auto fence = std::make_shared<k8s::WriteFence>();
  LeaderElector leader(*client_, Options("a", fence));
  leader.Start();
  ASSERT_TRUE(WaitFor([&] { return leader.IsLeader(); }));
  LeaderOptions standby_options = Options("b", nullptr);
  standby_options.lease_duration = 60s;  // an unreleased lease would keep it out for a minute
  standby_options.renew_deadline = 40s;
  LeaderElector standby(*client_, standby_options);
  standby.Start();
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(standby.IsLeader());
  leader.Release();
  EXPECT_FALSE(fence->Open());
  EXPECT_FALSE(leader.IsLeader());
  EXPECT_FALSE(leader.Lost());  // released, not lost
  ASSERT_TRUE(WaitFor([&] { return standby.IsLeader(); }, 5s));
  EXPECT_EQ(StrAt(Lease(), {"spec", "holderIdentity"}), "b");
}

TEST_F(LeaderFakeApi, ReleaseLeavesTheLeaseWithEmptyHolderAndShortDuration) {
  LeaderElector leader(*client_, Options("a", std::make_shared<k8s::WriteFence>()));
  leader.Start();
  ASSERT_TRUE(WaitFor([&] { return leader.IsLeader(); }));
  leader.Release();
  const rapidjson::Document lease = Lease();
  ASSERT_TRUE(lease.IsObject() && lease.HasMember("spec"));
  EXPECT_EQ(StrAt(lease, {"spec", "holderIdentity"}), "");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"].GetInt(), 1);
}

}  // namespace
}  // namespace kai::runtime
