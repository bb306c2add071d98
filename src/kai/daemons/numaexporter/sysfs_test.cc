#include "kai/daemons/numaexporter/sysfs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kai::numaexporterd {
namespace {

namespace fs = std::filesystem;

// A fake sysfs tree: <root>/devices/system/node/...
class FakeSysfs : public ::testing::Test {
 protected:
  FakeSysfs() {
    char tmpl[] = "/tmp/kai-sysfs-XXXXXX";
    root_ = mkdtemp(tmpl);
    fs::create_directories(NodeDir());
  }
  ~FakeSysfs() override { fs::remove_all(root_); }
  fs::path NodeDir() const { return fs::path(root_) / "devices" / "system" / "node"; }
  void Write(const std::string& rel, const std::string& text) {
    const fs::path p = NodeDir() / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  std::string root_;
};

TEST_F(FakeSysfs, MapsCpusOfEveryNode) {
  Write("node0/cpulist", "0-1,4\n");
  Write("node1/cpulist", "2-3\n");
  Write("possible", "0-1\n");  // a file, not a node
  Write("power/state", "x");   // another directory
  fs::create_directories(NodeDir() / "node7x");
  auto map = LoadCpuToNuma(root_);
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_EQ(*map, (numaexporter::CpuToNuma{{0, 0}, {1, 0}, {4, 0}, {2, 1}, {3, 1}}));
}

TEST_F(FakeSysfs, AMissingTreeIsAnErrorNamingIt) {
  auto map = LoadCpuToNuma(root_ + "/nowhere");
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find(root_ + "/nowhere/devices/system/node"), std::string::npos)
      << map.error().message;
}

TEST_F(FakeSysfs, NoNodeIsAnError) {
  auto map = LoadCpuToNuma(root_);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("no NUMA node directory"), std::string::npos);
}

TEST_F(FakeSysfs, ANodeWithoutACpuListIsAnError) {
  Write("node0/cpulist", "0");
  fs::create_directories(NodeDir() / "node1");
  auto map = LoadCpuToNuma(root_);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("node1/cpulist"), std::string::npos) << map.error().message;
}

TEST_F(FakeSysfs, AMalformedListNamesItsFile) {
  Write("node0/cpulist", "0-1");
  Write("node1/cpulist", "2-x");
  auto map = LoadCpuToNuma(root_);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("node1/cpulist: invalid CPU"), std::string::npos)
      << map.error().message;
}

TEST_F(FakeSysfs, AHugeFileOrRangeIsRefused) {
  Write("node0/cpulist", std::string(numaexporter::kMaxCpuListBytes + 10, '1'));
  auto map = LoadCpuToNuma(root_);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("larger than"), std::string::npos) << map.error().message;
  Write("node0/cpulist", "0-4000000000");
  map = LoadCpuToNuma(root_);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().message.find("more than"), std::string::npos) << map.error().message;
}

}  // namespace
}  // namespace kai::numaexporterd
