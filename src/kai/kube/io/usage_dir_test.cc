#include "kai/kube/io/usage_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kai::usage {
namespace {

namespace fs = std::filesystem;
constexpr UnixSeconds kT0 = 1735732800;  // 2025-01-01T12:00:00Z

class UsageDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kai-usage-dir-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Text() {
    UsageHistory h;
    Resources a, cap;
    a.milli_gpu = 3000;
    cap.milli_gpu = 8000;
    h.Record(kT0, {{"a", a}}, cap, 86400);
    h.Record(kT0 + 30, {{"a", a}}, cap, 86400);
    return EncodeHistory(h, UsageParams{});
  }
  std::string Slurp(const fs::path& p) const {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void Write(const fs::path& p, const std::string& text) const {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(UsageDirTest, AMissingDirectoryOrFileIsAnEmptyHistory) {
  UsageDir d(dir_.string());
  auto r = d.Load(kT0);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->file);
  EXPECT_TRUE(r->corrupt.empty());
  EXPECT_TRUE(fs::is_directory(dir_));
}

TEST_F(UsageDirTest, SaveThenLoadRoundTripsAndLeavesNoTemporaryFile) {
  UsageDir d(dir_.string());
  ASSERT_FALSE(d.Save(Text()));
  EXPECT_EQ(Names(), std::vector<std::string>{"usage-history"});
  auto r = d.Load(kT0);
  ASSERT_TRUE(r.ok() && r->file);
  EXPECT_EQ(EncodeHistory(r->file->history, r->file->params), Text());
  ASSERT_FALSE(d.Save(Text() + ""));  // a second save replaces the first
  EXPECT_EQ(Slurp(dir_ / "usage-history"), Text());
}

TEST_F(UsageDirTest, ATruncatedFileIsSetAsideUnderItsTimeAndReported) {
  const std::string text = Text();
  for (size_t cut :
       {size_t{0}, size_t{10}, text.find('\n') + 1, text.size() / 2, text.size() - 1}) {
    fs::remove_all(dir_);
    Write(dir_ / "usage-history", text.substr(0, cut));
    auto r = UsageDir(dir_.string()).Load(kT0);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->file) << cut;
    EXPECT_NE(r->corrupt.find((dir_ / "usage-history").string()), std::string::npos) << r->corrupt;
    EXPECT_EQ(r->set_aside_as, (dir_ / "usage-history.corrupt-2025-01-01T12:00:00Z").string());
    // Kept byte for byte, never overwritten; the live name is free for the next save.
    EXPECT_EQ(Slurp(r->set_aside_as), text.substr(0, cut));
    EXPECT_FALSE(fs::exists(dir_ / "usage-history"));
  }
}

TEST_F(UsageDirTest, ASecondCorruptFileInTheSameSecondGetsItsOwnName) {
  Write(dir_ / "usage-history", "garbage");
  ASSERT_TRUE(UsageDir(dir_.string()).Load(kT0).ok());
  Write(dir_ / "usage-history", "more garbage");
  auto r = UsageDir(dir_.string()).Load(kT0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->set_aside_as, (dir_ / "usage-history.corrupt-2025-01-01T12:00:00Z.1").string());
  EXPECT_EQ(Slurp(dir_ / "usage-history.corrupt-2025-01-01T12:00:00Z"), "garbage");
}

TEST_F(UsageDirTest, ATemporaryFileLeftByACrashIsRemovedAndTheRealFileKept) {
  Write(dir_ / "usage-history", Text());
  Write(dir_ / "usage-history.tmp", Text().substr(0, 20));  // the crash came mid-write
  auto r = UsageDir(dir_.string()).Load(kT0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->removed_temp);
  ASSERT_TRUE(r->file);
  EXPECT_EQ(Names(), std::vector<std::string>{"usage-history"});
}

TEST_F(UsageDirTest, ReadLeavesADamagedFileWhereItIs) {
  Write(dir_ / "usage-history", Text().substr(0, 30));
  auto r = UsageDir(dir_.string()).Read();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("usage-history"), std::string::npos);
  EXPECT_EQ(Names(), std::vector<std::string>{"usage-history"});
}

}  // namespace
}  // namespace kai::usage
