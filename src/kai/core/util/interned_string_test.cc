#include "kai/core/util/interned_string.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/compact_vector.h"

namespace kai {
namespace {

TEST(InternedString, EqualTextSharesOnePooledCopy) {
  const std::string text = "interned-string-test-equal-text";
  const InternedString a = text;
  const InternedString b = std::string_view(text);
  const InternedString c = "interned-string-test-equal-text";
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a.data(), c.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, text);
  EXPECT_EQ(a, "interned-string-test-equal-text");
  EXPECT_NE(a, InternedString("interned-string-test-other"));
  EXPECT_EQ(sizeof(InternedString), sizeof(void*));
}

TEST(InternedString, DefaultAndClearedAreEmptyAndEqualToInternedEmpty) {
  InternedString s = "x";
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s, InternedString());
  EXPECT_EQ(s, InternedString(""));
  EXPECT_EQ(s.str(), "");
  EXPECT_EQ(InternedString().size(), 0u);
}

TEST(InternedString, OrdersByContentNotAddress) {
  // Intern in reverse order so that addresses would order them the other way.
  const InternedString z = "interned-order-z", a = "interned-order-a";
  EXPECT_LT(a, z);
  EXPECT_GT(z, a);
  EXPECT_LT(a, std::string_view("interned-order-b"));
  EXPECT_LT(InternedString(), a);
  std::set<InternedString> sorted = {z, a, InternedString("interned-order-m")};
  std::vector<std::string> order(sorted.begin(), sorted.end());
  EXPECT_EQ(order,
            (std::vector<std::string>{"interned-order-a", "interned-order-m", "interned-order-z"}));
}

TEST(InternedString, ReadsAsAString) {
  const InternedString s = "Pod";
  const std::string& ref = s;
  std::string_view view = s;
  EXPECT_EQ(ref, "Pod");
  EXPECT_EQ(view, "Pod");
  EXPECT_EQ(s + " default/p", "Pod default/p");
  EXPECT_EQ("a " + s, "a Pod");
  EXPECT_EQ(std::string("b ") + s, "b Pod");
  EXPECT_TRUE(s.starts_with("Po"));
  EXPECT_EQ(s.rfind("od"), 1u);
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "Pod");
  EXPECT_EQ(std::hash<InternedString>()(s), std::hash<std::string_view>()("Pod"));
}

TEST(InternedString, ConcurrentInsertionYieldsOneCopyPerText) {
  constexpr int kThreads = 4, kStrings = 200;
  std::vector<std::vector<InternedString>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < kStrings; ++i) {
        seen[t].push_back(InternedString("interned-concurrent-" + std::to_string(i)));
      }
    });
  }
  for (auto& th : threads) th.join();
  // Every thread's handles are alive: equal texts are one entry.
  for (int t = 1; t < kThreads; ++t) {
    for (int i = 0; i < kStrings; ++i) EXPECT_EQ(seen[t][i].data(), seen[0][i].data());
  }
}

TEST(InternedString, LastHandleDroppedLeavesThePool) {
  const size_t before = InternedString::PoolSize();
  {
    const InternedString a = "interned-reclaim-only-here";
    InternedString b = a;
    EXPECT_EQ(InternedString::PoolSize(), before + 1);
    EXPECT_EQ(a.UseCount(), 2u);
    b.clear();
    EXPECT_EQ(a.UseCount(), 1u);
    EXPECT_EQ(InternedString::PoolSize(), before + 1);
  }
  EXPECT_EQ(InternedString::PoolSize(), before);
  // Interned again after it went: a fresh entry with the same text and the same hash.
  const InternedString again = "interned-reclaim-only-here";
  EXPECT_EQ(again, "interned-reclaim-only-here");
  EXPECT_EQ(std::hash<InternedString>()(again),
            std::hash<std::string_view>()("interned-reclaim-only-here"));
  EXPECT_EQ(InternedString::PoolSize(), before + 1);
}

TEST(InternedString, MovesAndAssignmentsKeepCountsExact) {
  const size_t before = InternedString::PoolSize();
  InternedString a = "interned-counts-a";
  InternedString moved = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT: a moved-from handle is empty, as a moved-from std::string
  EXPECT_EQ(moved.UseCount(), 1u);
  InternedString b = "interned-counts-b";
  b = moved;  // b's old text goes
  EXPECT_EQ(moved.UseCount(), 2u);
  EXPECT_EQ(InternedString::PoolSize(), before + 1);
  b = b;  // NOLINT: self-assignment keeps the count
  EXPECT_EQ(b.UseCount(), 2u);
  b = std::move(moved);
  EXPECT_EQ(b.UseCount(), 1u);
  b = "";
  EXPECT_EQ(InternedString::PoolSize(), before);
  EXPECT_EQ(InternedString().UseCount(), 0u);  // the empty string is not counted
}

TEST(InternedString, ViewsLiveWhileAnyHandleToTheTextLives) {
  auto a = std::make_unique<InternedString>("interned-view-text-longer-than-sso");
  const std::string_view view = *a;
  const InternedString other = "interned-view-text-longer-than-sso";
  a.reset();
  EXPECT_EQ(view, "interned-view-text-longer-than-sso");
  EXPECT_EQ(view.data(), other.data());
}

TEST(InternedString, ObjectsReleaseTheirStringsWithThem) {
  const InternedString pending = "Pending";  // a pod's default phase, held throughout
  const size_t before = InternedString::PoolSize();
  {
    ClusterState world;
    PodObject pod;
    pod.meta.ns = "interned-objects-ns";
    pod.node_name = "interned-objects-node-1.example.internal";
    pod.meta.labels["interned-objects-label-key"] = "value";
    world.pods.push_back(pod);
    world.pods.push_back(std::move(pod));
    world.pods.erase(world.pods.begin());
    EXPECT_EQ(InternedString::PoolSize(), before + 3);
    Labels copy = world.pods[0].meta.labels;
    copy.erase("interned-objects-label-key");
    EXPECT_EQ(InternedString::PoolSize(), before + 3);
  }
  EXPECT_EQ(InternedString::PoolSize(), before);
}

// Reflector threads intern while the scheduler's thread drops objects: threads intern texts of
// a small shared vocabulary and texts of their own, hand handles to each other and drop them, so
// counts go from 1 to 0 while other threads intern the same text.
TEST(InternedString, ConcurrentInternAndDropLeaveNothingBehind) {
  constexpr int kThreads = 4, kRounds = 20000, kShared = 8;
  const size_t before = InternedString::PoolSize();
  std::mutex mu;
  std::vector<InternedString> handoff;
  std::atomic<int> mismatches{0};
  auto work = [&](int t) {
    std::vector<InternedString> mine;
    for (int i = 0; i < kRounds; ++i) {
      const std::string text = "interned-race-" + std::to_string(i % kShared);
      const InternedString a = text;
      const InternedString b = std::string_view(text);
      if (a.data() != b.data() || a != text) ++mismatches;
      mine.push_back(i % 3 ? a
                           : InternedString("interned-race-own-" + std::to_string(t) + "-" +
                                            std::to_string(i % 64)));
      if (mine.size() > 16) mine.erase(mine.begin(), mine.begin() + 8);
      std::lock_guard<std::mutex> lock(mu);
      if (i % 2) {
        handoff.push_back(b);
      } else if (!handoff.empty()) {
        handoff.pop_back();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  handoff.clear();
  EXPECT_EQ(InternedString::PoolSize(), before);
}

TEST(CompactVector, EmptyOwnsNothingAndReadsAsAVector) {
  CompactVector<std::string> v;
  EXPECT_EQ(sizeof(v), sizeof(void*));
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.begin(), v.end());
  const std::vector<std::string>& as_vector = v;
  EXPECT_TRUE(as_vector.empty());
  v.push_back("a");
  v.emplace_back("b");
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], "b");
  EXPECT_EQ(v.front(), "a");
  EXPECT_EQ(v.back(), "b");
  EXPECT_EQ(v, (std::vector<std::string>{"a", "b"}));
}

TEST(CompactVector, CopiesAreDeepAndAssignmentFromVectorsAndLists) {
  CompactVector<std::string> a = std::vector<std::string>{"x"};
  CompactVector<std::string> b = a;
  b.push_back("y");
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 2u);
  a = {"p", "q", "r"};
  EXPECT_EQ(a.vec(), (std::vector<std::string>{"p", "q", "r"}));
  a = std::vector<std::string>{};
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.data(), nullptr);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace kai
