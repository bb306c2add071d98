// The write fence of a leader's client: a write it refuses is not sent and not retried, reads go
// through, the deadline closes it without anyone calling Close, and a closed fence stays closed.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "kai/kube/client/api_client.h"

namespace kai::k8s {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A client of a port nobody listens on: every request that is sent fails at once (and is
// retried), so the sleeps between tries count the tries.
struct CountingClient {
  int sleeps = 0;
  ApiClient client;
  CountingClient() : client(Config(), Policy(), Clocks(sleeps)) {}
  static ClusterConfig Config() {
    ClusterConfig c;
    c.server = "http://127.0.0.1:1";
    return c;
  }
  static RetryPolicy Policy() {
    RetryPolicy p;
    p.max_attempts = 3;
    return p;
  }
  static ClientClock Clocks(int& sleeps) {
    ClientClock c;
    c.sleep = [&sleeps](std::chrono::milliseconds) { ++sleeps; };
    c.jitter = [] { return 0.5; };
    return c;
  }
};

TEST(WriteFence, ClosedFenceRefusesWritesWithoutSendingOrRetrying) {
  CountingClient c;
  auto fence = std::make_shared<WriteFence>();  // never opened: a standby
  const ApiClient fenced = c.client.WithFence(fence);
  for (const HttpResponse& r :
       {fenced.Create("/api/v1/namespaces/a/pods", "{}"), fenced.Update("/api/v1/nodes/n", "{}"),
        fenced.Patch("/api/v1/nodes/n", "{}", PatchType::kMerge), fenced.Delete("/api/v1/nodes/n"),
        fenced.Call({"POST", "/api/v1/namespaces/a/bindings"})}) {
    EXPECT_TRUE(Fenced(r));
    EXPECT_FALSE(Retryable(r));
    EXPECT_EQ(r.transport_error, kFencedError);
  }
  EXPECT_EQ(c.sleeps, 0);           // none was tried twice
  EXPECT_EQ(fence->admitted(), 0);  // none was sent
  // A read is never fenced: it is sent (and, with nobody listening, retried).
  const HttpResponse got = fenced.Get("/api/v1/nodes");
  EXPECT_FALSE(Fenced(got));
  EXPECT_EQ(c.sleeps, 2);
}

TEST(WriteFence, UnfencedClientOfTheSamePoolStillWrites) {
  CountingClient c;
  auto fence = std::make_shared<WriteFence>();
  const ApiClient fenced = c.client.WithFence(fence);
  const HttpResponse r = c.client.Update("/api/v1/nodes/n", "{}");  // the lease's own path
  EXPECT_FALSE(Fenced(r));
  EXPECT_EQ(c.sleeps, 2);
}

TEST(WriteFence, FenceClosedBetweenTriesStopsTheRetry) {
  auto fence = std::make_shared<WriteFence>();
  fence->OpenUntil(Clock::now() + 1h);
  ClientClock clock;
  clock.sleep = [&](std::chrono::milliseconds) { fence->Close(); };  // lost during the backoff
  clock.jitter = [] { return 0.5; };
  const ApiClient fenced =
      ApiClient(CountingClient::Config(), CountingClient::Policy(), clock).WithFence(fence);
  const HttpResponse r = fenced.Update("/api/v1/nodes/n", "{}");
  EXPECT_TRUE(Fenced(r));
  EXPECT_EQ(fence->admitted(), 1);  // the first try went, the retry did not
  EXPECT_TRUE(fence->Drain(0ms));
}

TEST(WriteFence, DeadlineClosesWithoutCloseAndRenewalsMoveIt) {
  Clock::time_point now{};
  WriteFence fence([&] { return now; });
  EXPECT_FALSE(fence.Admit());
  fence.OpenUntil(now + 10s);
  EXPECT_TRUE(fence.Open());
  EXPECT_TRUE(fence.Admit());
  fence.Finish();
  now += 10s;  // the renew deadline passed with no renewal
  EXPECT_FALSE(fence.Open());
  EXPECT_FALSE(fence.Admit());
  fence.OpenUntil(now + 10s);  // a renewal that did land
  EXPECT_TRUE(fence.Admit());
  fence.Finish();
  EXPECT_EQ(fence.admitted(), 2);
}

TEST(WriteFence, ClosedFenceNeverOpensAgain) {
  Clock::time_point now{};
  WriteFence fence([&] { return now; });
  fence.OpenUntil(now + 10s);
  fence.Close();
  fence.OpenUntil(now + 20s);
  EXPECT_FALSE(fence.Open());
  EXPECT_FALSE(fence.Admit());
  EXPECT_EQ(fence.admitted(), 0);
}

TEST(WriteFence, DrainWaitsForAdmittedWrites) {
  Clock::time_point now{};
  WriteFence fence([&] { return now; });
  fence.OpenUntil(now + 10s);
  ASSERT_TRUE(fence.Admit());
  fence.Close();
  EXPECT_FALSE(fence.Drain(0ms));  // one write still in flight
  fence.Finish();
  EXPECT_TRUE(fence.Drain(0ms));
}

}  // namespace
}  // namespace kai::k8s
