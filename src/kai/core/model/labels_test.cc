#include "kai/core/model/labels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kai {
namespace {

std::vector<std::pair<std::string, std::string>> Entries(const Labels& l) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : l) out.emplace_back(k, v);
  return out;
}

TEST(Labels, IteratesInKeyOrderLikeAStdMap) {
  Labels l;
  std::map<std::string, std::string> m;
  for (const char* k : {"zone", "app", "kai.scheduler/queue", "a", "app2", "Z"}) {
    l[k] = std::string(k) + "-v";
    m[k] = std::string(k) + "-v";
  }
  EXPECT_EQ(Entries(l), (std::vector<std::pair<std::string, std::string>>(m.begin(), m.end())));
  EXPECT_EQ(l.size(), m.size());
}

TEST(Labels, InitializerListKeepsTheFirstOfEqualKeys) {
  const Labels l = {{"b", "1"}, {"a", "2"}, {"b", "3"}};
  EXPECT_EQ(Entries(l), (std::vector<std::pair<std::string, std::string>>{{"a", "2"}, {"b", "1"}}));
}

TEST(Labels, FindCountAtEmplaceAssignErase) {
  Labels l = {{"app", "web"}};
  EXPECT_EQ(l.find("app")->second, "web");
  EXPECT_EQ(l.find("ap"), l.end());
  EXPECT_EQ(l.count("app"), 1u);
  EXPECT_EQ(l.count(std::string("zzz")), 0u);
  EXPECT_EQ(l.at("app"), "web");
  EXPECT_THROW(static_cast<void>(l.at("missing")), std::out_of_range);

  auto [it, inserted] = l.emplace("app", "other");
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, "web");
  EXPECT_TRUE(l.emplace(std::string("tier"), "gpu").second);
  EXPECT_FALSE(l.insert_or_assign("tier", "cpu").second);
  EXPECT_EQ(l.at("tier"), "cpu");
  EXPECT_EQ(l.erase("app"), 1u);
  EXPECT_EQ(l.erase("app"), 0u);
  EXPECT_EQ(Entries(l), (std::vector<std::pair<std::string, std::string>>{{"tier", "cpu"}}));
  l.clear();
  EXPECT_TRUE(l.empty());
}

TEST(Labels, EqualityComparesEntries) {
  const Labels a = {{"x", "1"}, {"y", "2"}};
  Labels b;
  b["y"] = "2";
  b["x"] = "1";
  EXPECT_EQ(a, b);
  b["x"] = "3";
  EXPECT_NE(a, b);
}

TEST(Labels, IsOnePointerAndAllocatesNothingWhileEmpty) {
  EXPECT_EQ(sizeof(Labels), sizeof(void*));
  Labels l;
  EXPECT_EQ(l.BlockBytes(), 0u);
  EXPECT_EQ(l.begin(), l.end());
  l.reserve(3);
  EXPECT_EQ(l.capacity(), 3u);
  l["a"] = "1";
  l["b"] = "2";
  l["c"] = "3";
  EXPECT_EQ(l.capacity(), 3u);  // reserved exactly: no growth slack
  EXPECT_EQ(l.BlockBytes(), sizeof(void*) + 3 * sizeof(Labels::value_type));
}

TEST(Labels, CopiesAreDeepAndMovesEmptyTheSource) {
  Labels a = {{"k1", "a value longer than the small-string buffer"}, {"k2", "v"}};
  Labels b = a;
  b["k1"] = "changed";
  EXPECT_EQ(a.at("k1"), "a value longer than the small-string buffer");
  Labels c = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from Labels are empty
  EXPECT_EQ(c.size(), 2u);
  b = c;
  EXPECT_EQ(b, c);
  c = Labels();
  EXPECT_TRUE(c.empty());
}

TEST(Labels, ManyInsertsAndErasesInAnyOrderMatchAStdMap) {
  Labels l;
  std::map<std::string, std::string> m;
  uint32_t x = 12345;
  for (int step = 0; step < 2000; ++step) {
    x = x * 1103515245u + 12345u;
    const std::string key = "key-" + std::to_string((x >> 8) % 97);
    if ((x >> 20) % 4 == 0) {
      EXPECT_EQ(l.erase(key), m.erase(key));
    } else {
      const std::string value = "value-" + std::to_string(step);
      EXPECT_EQ(l.emplace(key, value).second, m.emplace(key, value).second);
    }
  }
  EXPECT_EQ(Entries(l), (std::vector<std::pair<std::string, std::string>>(m.begin(), m.end())));
}

}  // namespace
}  // namespace kai
