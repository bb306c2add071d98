#include "kai/core/resource/resources.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kai {
namespace {

TEST(InternResource, IdsAreStableAndNamesReadBack) {
  const ResourceId a = InternResource("example.com/resources-test-a");
  EXPECT_EQ(InternResource("example.com/resources-test-a"), a);
  EXPECT_NE(InternResource("example.com/resources-test-b"), a);
  EXPECT_EQ(ResourceName(a), "example.com/resources-test-a");
  EXPECT_THROW(ResourceName(1u << 30), std::out_of_range);
}

// Reflector threads decode (and intern resource names) while others read names.
TEST(InternResource, ConcurrentInterningAgreesOnIds) {
  constexpr int kThreads = 4, kNames = 600;  // past one chunk of names
  std::vector<std::vector<ResourceId>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ids] {
      for (int i = 0; i < kNames; ++i) {
        const std::string name = "example.com/concurrent-" + std::to_string(i);
        const ResourceId id = InternResource(name);
        ids[t].push_back(id);
        if (ResourceName(id) != name) ids[t].back() = ResourceId(-1);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]);
  for (ResourceId id : ids[0]) EXPECT_NE(id, ResourceId(-1));
}

}  // namespace
}  // namespace kai
