#include "kai/kube/runtime/background.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace kai::runtime {
namespace {

using namespace std::chrono_literals;

// A write that blocks until released, recording when it ran.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  void Release() { open.set_value(); }
};

TEST(BackgroundWriter, AQueuedWriteOfAKeyIsReplacedByTheLatest) {
  BackgroundWriter w(10, 1);
  std::vector<std::string> ran;
  std::mutex mu;
  auto record = [&](std::string what) {
    return [&, what] {
      std::lock_guard<std::mutex> lock(mu);
      ran.push_back(what);
      return true;
    };
  };
  w.Pause();
  w.Put("a", record("a1"));
  w.Put("b", record("b1"));
  w.Put("a", record("a2"));
  EXPECT_EQ(w.queued(), 2u);
  w.Resume();
  ASSERT_TRUE(w.Flush(5s));
  EXPECT_EQ(ran, (std::vector<std::string>{"a2", "b1"})) << "a keeps its place, with its latest";
  EXPECT_EQ(w.stats().replaced, 1);
  EXPECT_EQ(w.stats().sent, 2);
}

TEST(BackgroundWriter, TwoWritesOfOneKeyNeverRunAtOnceAndKeepTheirOrder) {
  BackgroundWriter w(10, 4);
  Gate gate;
  std::atomic<int> running{0}, most{0};
  std::vector<int> order;
  std::mutex mu;
  auto write = [&](int n) {
    return [&, n] {
      most = std::max(most.load(), ++running);
      if (n == 1) gate.opened.wait();
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(n);
      }
      --running;
      return true;
    };
  };
  w.Put("k", write(1));
  while (w.queued() != 0) std::this_thread::sleep_for(1ms);  // 1 is running
  w.Put("k", write(2));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(w.queued(), 1u) << "2 waits while 1 runs, with three idle workers";
  gate.Release();
  ASSERT_TRUE(w.Flush(5s));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(most.load(), 1);
}

TEST(BackgroundWriter, UnkeyedWritesBeyondTheCapacityAreDroppedAndCounted) {
  BackgroundWriter w(2, 1);
  w.Pause();
  for (int i = 0; i < 5; ++i) w.Put("", [] { return true; });
  w.Put("keyed", [] { return false; });  // keyed writes are not bounded by the capacity
  EXPECT_EQ(w.queued(), 3u);
  w.Resume();
  ASSERT_TRUE(w.Flush(5s));
  const WriteStats st = w.stats();
  EXPECT_EQ(st.dropped, 3);
  EXPECT_EQ(st.sent, 2);
  EXPECT_EQ(st.failed, 1);
}

TEST(BackgroundWriter, CancelAndClearDropQueuedWrites) {
  BackgroundWriter w(10, 2);
  std::atomic<int> ran{0};
  w.Pause();
  w.Put("a", [&] { return ++ran > 0; });
  w.Put("b", [&] { return ++ran > 0; });
  w.Put("", [&] { return ++ran > 0; });
  w.Cancel("a");
  w.Cancel("missing");
  EXPECT_EQ(w.queued(), 2u);
  w.Clear();
  EXPECT_EQ(w.queued(), 0u);
  EXPECT_EQ(w.stats().dropped, 2);
  w.Resume();
  EXPECT_TRUE(w.Flush(1s));
  EXPECT_EQ(ran.load(), 0);
}

TEST(BackgroundWriter, PausedWritesWaitAndFlushTimesOut) {
  BackgroundWriter w(10, 1);
  std::atomic<bool> ran{false};
  w.Pause();
  w.Put("x", [&] { return ran = true; });
  EXPECT_FALSE(w.Flush(50ms));
  EXPECT_FALSE(ran.load());
  w.Resume();
  EXPECT_TRUE(w.Flush(5s));
  EXPECT_TRUE(ran.load());
}

TEST(BackgroundWriter, DestroyingItDropsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    BackgroundWriter w(10, 1);
    w.Pause();
    for (int i = 0; i < 3; ++i) w.Put("", [&] { return ++ran > 0; });
  }
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace kai::runtime
