// Client-side rate limiting (--qps, --burst): the token bucket on a fake clock, and a client whose
// copies share one bucket.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "kai/kube/client/api_client.h"

namespace kai::k8s {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(TokenBucket, BurstGoesAtOnceThenOneRequestPerToken) {
  Clock::time_point now{};
  TokenBucket bucket(10, 3, [&now] { return now; });
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(), 0ms) << "request " << i;
  EXPECT_EQ(bucket.Reserve(), 100ms);
  EXPECT_EQ(bucket.Reserve(), 200ms);  // queued behind the one before
}

TEST(TokenBucket, RefillsAtQpsUpToBurst) {
  Clock::time_point now{};
  TokenBucket bucket(2, 2, [&now] { return now; });
  EXPECT_EQ(bucket.Reserve(), 0ms);
  EXPECT_EQ(bucket.Reserve(), 0ms);
  now += 500ms;  // one token back
  EXPECT_EQ(bucket.Reserve(), 0ms);
  EXPECT_EQ(bucket.Reserve(), 500ms);
  now += 10s;  // refilled to the burst, no further
  EXPECT_EQ(bucket.Reserve(), 0ms);
  EXPECT_EQ(bucket.Reserve(), 0ms);
  EXPECT_EQ(bucket.Reserve(), 500ms);
}

TEST(TokenBucket, BurstBelowOneCountsAsOne) {
  Clock::time_point now{};
  TokenBucket bucket(4, 0, [&now] { return now; });
  EXPECT_EQ(bucket.Reserve(), 0ms);
  EXPECT_EQ(bucket.Reserve(), 250ms);
}

// A client of a port nobody listens on, without retries: each call is one request, and the
// client's sleeps are the rate limit's waits.
struct LimitedClient {
  Clock::time_point now{};
  std::vector<std::chrono::milliseconds> waits;
  ApiClient client;
  explicit LimitedClient(double qps, int burst) : client(Config(qps, burst), Policy(), Clocks()) {}
  static ClusterConfig Config(double qps, int burst) {
    ClusterConfig c;
    c.server = "http://127.0.0.1:1";
    c.qps = qps;
    c.burst = burst;
    return c;
  }
  static RetryPolicy Policy() {
    RetryPolicy p;
    p.max_attempts = 1;
    return p;
  }
  ClientClock Clocks() {
    ClientClock c;
    c.sleep = [this](std::chrono::milliseconds d) { waits.push_back(d); };
    c.jitter = [] { return 0.5; };
    c.now = [this] { return now; };
    return c;
  }
};

TEST(ApiClientRateLimit, CopiesShareOneBucket) {
  LimitedClient l(5, 2);
  const ApiClient copy = l.client;
  const ApiClient fenced = l.client.WithFence(nullptr);
  l.client.Get("/api/v1/pods");
  copy.Get("/api/v1/pods");
  EXPECT_TRUE(l.waits.empty());
  fenced.Get("/api/v1/pods");
  ASSERT_EQ(l.waits.size(), 1u);
  EXPECT_EQ(l.waits[0], 200ms);
}

TEST(ApiClientRateLimit, NoQpsNoLimit) {
  LimitedClient l(0, 0);
  for (int i = 0; i < 20; ++i) l.client.Get("/api/v1/pods");
  EXPECT_TRUE(l.waits.empty());
}

}  // namespace
}  // namespace kai::k8s
