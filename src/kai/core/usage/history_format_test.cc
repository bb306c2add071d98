#include "kai/core/usage/history_format.h"

#include <gtest/gtest.h>

namespace kai::usage {
namespace {

constexpr UnixSeconds kT0 = 1735732800;

UsageHistory Sample() {
  UsageHistory h;
  Resources a, b, cap;
  a.milli_gpu = 2000;
  a.milli_cpu = 4000;
  a.memory = int64_t{64} << 30;
  b.milli_gpu = 500;
  cap.milli_gpu = 10000;
  cap.milli_cpu = 100000;
  cap.memory = int64_t{1} << 40;
  h.Record(kT0, {{"team-a", a}}, cap, 7 * 86400);
  h.Record(kT0 + 60, {{"team-a", a}, {"team-b", b}}, cap, 7 * 86400);
  h.Record(kT0 + 120, {{"team-b", b}}, cap, 7 * 86400);
  return h;
}

const UsageParams kParams{.half_life_seconds = 3600, .window_seconds = 86400};

TEST(HistoryFormatTest, RoundTripKeepsEveryIntervalTheOpenMarksAndTheParams) {
  const UsageHistory h = Sample();
  const std::string text = EncodeHistory(h, kParams);
  auto back = DecodeHistory(text, "f");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->history.allocations(), h.allocations());
  EXPECT_EQ(back->history.capacity(), h.capacity());
  EXPECT_EQ(back->history.last_sample(), kT0 + 120);
  EXPECT_FALSE(back->history.allocations().at("team-a").open);
  EXPECT_TRUE(back->history.allocations().at("team-b").open);
  EXPECT_EQ(back->params.half_life_seconds, 3600);
  EXPECT_EQ(back->params.window_seconds, 86400);
  EXPECT_EQ(EncodeHistory(back->history, back->params), text);
}

TEST(HistoryFormatTest, AFileCutShortAnywhereIsRejected) {
  const std::string text = EncodeHistory(Sample(), kParams);
  // Every offset: a crash mid-write leaves some prefix of the file.
  for (size_t cut = 0; cut < text.size(); ++cut) {
    auto r = DecodeHistory(text.substr(0, cut), "usage-history");
    ASSERT_FALSE(r.ok()) << "accepted a file cut at byte " << cut << " of " << text.size();
    EXPECT_EQ(r.error().message.rfind("usage-history: ", 0), 0u) << r.error().message;
  }
  EXPECT_EQ(DecodeHistory("", "f").error().message, "f: empty file");
  const std::string one_line_less = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  EXPECT_NE(DecodeHistory(one_line_less, "f").error().message.find("checksum mismatch"),
            std::string::npos);
}

TEST(HistoryFormatTest, AFlippedByteIsRejected) {
  const std::string text = EncodeHistory(Sample(), kParams);
  for (size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] ^= 0x04;
    EXPECT_FALSE(DecodeHistory(bad, "f").ok()) << "accepted a flip at byte " << i;
  }
}

TEST(HistoryFormatTest, AnotherVersionIsNamed) {
  std::string text = EncodeHistory(Sample(), kParams);
  text.replace(text.find(" 1 "), 3, " 2 ");
  EXPECT_EQ(DecodeHistory(text, "f").error().message, "f: format version 2, expected 1");
  EXPECT_EQ(DecodeHistory("something else\n", "f").error().message,
            "f: not a kai usage history (no header)");
}

TEST(HistoryFormatTest, ABadRecordWithAGoodChecksumIsNamedByItsNumber) {
  const std::string body = "sample 5\nqueue a 1 -2 0 0 0\n";
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(Fnv1a64(body)));
  auto r = DecodeHistory("kai-usage-history 1 2 " + std::string(sum) + "\n" + body, "f");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "f: record 2 field 4: must not be negative");
}

}  // namespace
}  // namespace kai::usage
