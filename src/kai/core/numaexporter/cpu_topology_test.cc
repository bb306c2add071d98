#include "kai/core/numaexporter/cpu_topology.h"

#include <gtest/gtest.h>

namespace kai::numaexporter {
namespace {

TEST(ParseCpuList, ReadsIdsAndRanges) {
  auto cpus = ParseCpuList("0-3,8,12-13\n");
  ASSERT_TRUE(cpus.ok()) << cpus.error().message;
  EXPECT_EQ(*cpus, (std::vector<int64_t>{0, 1, 2, 3, 8, 12, 13}));
}

TEST(ParseCpuList, EmptyTextIsNoCpu) {
  auto cpus = ParseCpuList(" \n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_TRUE(cpus->empty());
}

TEST(ParseCpuList, ToleratesSpacesAndEmptyTokens) {
  auto cpus = ParseCpuList(" 1 , ,2 - 3 ");
  ASSERT_TRUE(cpus.ok()) << cpus.error().message;
  EXPECT_EQ(*cpus, (std::vector<int64_t>{1, 2, 3}));
}

TEST(ParseCpuList, BadTokensAreNamed) {
  for (const char* bad : {"a", "1-", "-3", "1-2-3", "0x1", "5-2", "99999999999999999999"}) {
    auto cpus = ParseCpuList(bad);
    ASSERT_FALSE(cpus.ok()) << bad;
    EXPECT_NE(cpus.error().message.find("CPU"), std::string::npos) << cpus.error().message;
  }
}

TEST(ParseCpuList, AHugeRangeIsAnErrorNotAnAllocation) {
  auto cpus = ParseCpuList("0-9223372036854775806");
  ASSERT_FALSE(cpus.ok());
  EXPECT_NE(cpus.error().message.find("more than 1048576 CPUs"), std::string::npos)
      << cpus.error().message;
  EXPECT_FALSE(ParseCpuList("0-4", 4).ok());
  EXPECT_TRUE(ParseCpuList("0-3", 4).ok());
}

TEST(NumaNodeOfEntry, TakesNodeDirectoriesOnly) {
  EXPECT_EQ(NumaNodeOfEntry("node0"), 0);
  EXPECT_EQ(NumaNodeOfEntry("node17"), 17);
  for (const char* other : {"node", "possible", "node-1", "node3x", "has_cpu", "node99999999"}) {
    EXPECT_EQ(NumaNodeOfEntry(other), std::nullopt) << other;
  }
}

TEST(BuildCpuToNuma, MapsEveryCpuToItsNode) {
  auto map = BuildCpuToNuma({{0, "0-1", "node0/cpulist"}, {1, "2,3", "node1/cpulist"}});
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_EQ(*map, (CpuToNuma{{0, 0}, {1, 0}, {2, 1}, {3, 1}}));
}

TEST(BuildCpuToNuma, ABadListNamesItsFile) {
  auto map = BuildCpuToNuma({{0, "0-1", "a"}, {1, "x", "/sys/devices/system/node/node1/cpulist"}});
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.error().message,
            "parsing /sys/devices/system/node/node1/cpulist: invalid CPU list token \"x\"");
}

TEST(BuildCpuToNuma, NoCpuIsAnError) {
  EXPECT_FALSE(BuildCpuToNuma({}).ok());
  EXPECT_FALSE(BuildCpuToNuma({{0, "\n", "node0/cpulist"}}).ok());
}

}  // namespace
}  // namespace kai::numaexporter
