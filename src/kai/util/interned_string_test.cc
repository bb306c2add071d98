#include "kai/util/interned_string.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kai/util/compact_vector.h"

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
  std::vector<std::vector<const char*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < kStrings; ++i) {
        seen[t].push_back(InternedString("interned-concurrent-" + std::to_string(i)).data());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
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
