#include "kai/core/resource/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace kai {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The parsed value, or nullopt on error.
std::optional<int64_t> Value(std::string_view text, int scale = 0) {
  const Result<int64_t> result = ParseQuantity(text, scale);
  if (result.ok()) return result.value();
  return std::nullopt;
}

int64_t Milli(std::string_view text) { return Value(text, 3).value_or(-424242); }

// The error message, or "" when parsing succeeded.
std::string ErrorOf(std::string_view text, int scale = 0) {
  const Result<int64_t> result = ParseQuantity(text, scale);
  if (!result.ok()) return result.error().message;
  return "";
}

bool Fails(std::string_view text, int scale = 0) { return !Value(text, scale).has_value(); }

TEST(ParseQuantityTest, PlainIntegers) {
  EXPECT_EQ(Value("0"), 0);
  EXPECT_EQ(Value("2"), 2);
  EXPECT_EQ(Value("1000"), 1000);
  EXPECT_EQ(Value("007"), 7);
  EXPECT_EQ(Milli("2"), 2000);
}

TEST(ParseQuantityTest, SignedNumbers) {
  EXPECT_EQ(Value("+1"), 1);
  EXPECT_EQ(Value("-2"), -2);
  EXPECT_EQ(Milli("-1"), -1000);
  EXPECT_EQ(Value("-0"), 0);
  EXPECT_EQ(Value("+0.0"), 0);
}

TEST(ParseQuantityTest, DecimalPointForms) {
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Value("5."), 5);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("-.25"), -250);
  EXPECT_EQ(Value("5.G"), 5'000'000'000);
}

TEST(ParseQuantityTest, EveryDecimalSuffix) {
  EXPECT_EQ(Value("100n", 9), 100);
  EXPECT_EQ(Value("7u", 6), 7);
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Value("3"), 3);
  EXPECT_EQ(Value("1k"), 1'000);
  EXPECT_EQ(Value("1M"), 1'000'000);
  EXPECT_EQ(Value("20G"), 20'000'000'000);
  EXPECT_EQ(Value("1T"), 1'000'000'000'000);
  EXPECT_EQ(Value("1P"), 1'000'000'000'000'000);
  EXPECT_EQ(Value("1E"), 1'000'000'000'000'000'000);
}

TEST(ParseQuantityTest, EveryBinarySuffix) {
  EXPECT_EQ(Value("1Ki"), int64_t{1} << 10);
  EXPECT_EQ(Value("1Mi"), int64_t{1} << 20);
  EXPECT_EQ(Value("1Gi"), int64_t{1} << 30);
  EXPECT_EQ(Value("1Ti"), int64_t{1} << 40);
  EXPECT_EQ(Value("1Pi"), int64_t{1} << 50);
  EXPECT_EQ(Value("1Ei"), int64_t{1} << 60);
}

TEST(ParseQuantityTest, FractionalBinarySuffixes) {
  EXPECT_EQ(Value("1.5Ki"), 1536);
  EXPECT_EQ(Value("1.5Gi"), 1'610'612'736);
  EXPECT_EQ(Value("0.5Ki"), 512);
  EXPECT_EQ(Value("0.001Ki"), 2);  // 1.024 rounds up
  EXPECT_EQ(Milli("0.001Ki"), 1024);
  EXPECT_EQ(Value("7.5Ei"), int64_t{15} << 59);
}

TEST(ParseQuantityTest, SuffixesScaleToMilliUnits) {
  EXPECT_EQ(Milli("1k"), 1'000'000);
  EXPECT_EQ(Milli("1Ki"), 1'024'000);
  EXPECT_EQ(Milli("100n"), 1);
  EXPECT_EQ(Milli("1u"), 1);
}

TEST(ParseQuantityTest, NegativeAndPositiveScales) {
  EXPECT_EQ(Value("1500", -3), 2);  // ceil(1.5)
  EXPECT_EQ(Value("1Gi", -3), 1'073'742);
  EXPECT_EQ(Value("1", 18), 1'000'000'000'000'000'000);
  EXPECT_EQ(Value("1n", 18), 1'000'000'000);
  EXPECT_EQ(Value("1E", -18), 1);
  EXPECT_EQ(Value("1", -18), 1);  // 1e-18 rounds up
  EXPECT_EQ(Value("0", -18), 0);
}

TEST(ParseQuantityTest, RoundsUpToNextUnit) {
  EXPECT_EQ(Value("1.0001"), 2);
  EXPECT_EQ(Milli("0.1m"), 1);
  EXPECT_EQ(Milli("0.0001"), 1);
  EXPECT_EQ(Value("0.5"), 1);
  EXPECT_EQ(Value("1.0000"), 1);  // exact: no rounding
  EXPECT_EQ(Value("0.000000000000000000001"), 1);
}

TEST(ParseQuantityTest, NegativeValuesRoundTowardPositiveInfinity) {
  EXPECT_EQ(Value("-0.5"), 0);
  EXPECT_EQ(Value("-1.5"), -1);
  EXPECT_EQ(Value("-1.0001"), -1);
  EXPECT_EQ(Milli("-0.1m"), 0);
  EXPECT_EQ(Milli("-1.5m"), -1);
  EXPECT_EQ(Value("-1.5Ki"), -1536);
}

TEST(ParseQuantityTest, Exponents) {
  EXPECT_EQ(Value("1e3"), 1000);
  EXPECT_EQ(Value("1E3"), 1000);
  EXPECT_EQ(Value("2e+2"), 200);
  EXPECT_EQ(Value("1E-3", 3), 1);
  EXPECT_EQ(Value("1e-3"), 1);  // 0.001 rounds up
  EXPECT_EQ(Value("-1e-3"), 0);
  EXPECT_EQ(Value("1.5e1"), 15);
  EXPECT_EQ(Value("15e-1"), 2);
  EXPECT_EQ(Value("1e0018"), 1'000'000'000'000'000'000);
  EXPECT_EQ(Value(".5e1"), 5);
}

TEST(ParseQuantityTest, HugeExponents) {
  EXPECT_TRUE(Fails("1e19"));
  EXPECT_TRUE(Fails("1e99999999999999999999999999"));
  EXPECT_EQ(Value("0e99999999999999999999999999"), 0);
  EXPECT_EQ(Value("1e-99999999999999999999999999"), 1);
  EXPECT_EQ(Value("-1e-99999999999999999999999999"), 0);
}

TEST(ParseQuantityTest, LongMantissas) {
  EXPECT_EQ(Value("0000000000000000000000000000000000000001"), 1);
  EXPECT_EQ(Value("1000000000000000000000000000000000000000e-39"), 1);
  EXPECT_EQ(Value("1000000000000000000000000000000000000001e-39"), 2);
  EXPECT_EQ(Value("1234567890123456789.0000000000000000000000000000001"), 1234567890123456790);
  EXPECT_EQ(Milli("0.000000000000000000000000000000000000001Ei"), 1);
  EXPECT_EQ(Value(std::string(5000, '0') + "12" + "e-1"), 2);
  EXPECT_EQ(Value("0." + std::string(5000, '0') + "1"), 1);
}

TEST(ParseQuantityTest, Int64Limits) {
  EXPECT_EQ(Value("9223372036854775807"), kMax);
  EXPECT_EQ(Value("-9223372036854775808"), kMin);
  EXPECT_EQ(Value("9223372036854775806.5"), kMax);
  EXPECT_EQ(Value("-9223372036854775808.9"), kMin);  // ceil(-...8.9) is -...8
  EXPECT_EQ(Value("7Ei"), int64_t{7} << 60);
  EXPECT_EQ(Value("9.223372036854775807E"), kMax);
  EXPECT_EQ(Value("9223372036854775807m", 3), kMax);
}

TEST(ParseQuantityTest, OverflowIsOutOfRange) {
  EXPECT_TRUE(Fails("8Ei"));
  EXPECT_TRUE(Fails("-8.1Ei"));
  EXPECT_EQ(Value("-8Ei"), kMin);
  EXPECT_TRUE(Fails("9223372036854775808"));
  EXPECT_TRUE(Fails("-9223372036854775809"));
  EXPECT_TRUE(Fails("9223372036854775807.01"));
  EXPECT_TRUE(Fails("10E"));
  EXPECT_TRUE(Fails("9223372036854775807", 3));
  EXPECT_TRUE(Fails("99999999999999999999999999999999999999999"));
  EXPECT_NE(ErrorOf("8Ei").find("out of range"), std::string::npos) << ErrorOf("8Ei");
}

TEST(ParseQuantityTest, RejectsEmptyString) {
  EXPECT_TRUE(Fails(""));
  EXPECT_EQ(ErrorOf(""), "invalid quantity \"\": empty string");
}

TEST(ParseQuantityTest, RejectsBadSyntax) {
  for (std::string_view text :
       {"abc", "1.2.3", "--1", "+-1", "-", "+", ".", "-.", "1..", "0x10", "1/2", "1,5", "∞"}) {
    EXPECT_TRUE(Fails(text)) << text;
  }
  EXPECT_EQ(ErrorOf("1.2.3"), "invalid quantity \"1.2.3\": unexpected character '.'");
}

TEST(ParseQuantityTest, RejectsSpaces) {
  for (std::string_view text : {"1 Gi", " 1", "1 ", "1Gi ", "- 1", "1e 3", "\t1"}) {
    EXPECT_TRUE(Fails(text)) << text;
  }
  EXPECT_EQ(ErrorOf("1 Gi"), "invalid quantity \"1 Gi\": unexpected character ' '");
}

TEST(ParseQuantityTest, RejectsUnknownSuffixes) {
  for (std::string_view text : {"1Gb", "1K", "1ki", "1KiB", "1mi", "1EE", "1Ee3", "1g", "1ee"}) {
    EXPECT_TRUE(Fails(text)) << text;
  }
  EXPECT_EQ(ErrorOf("1Gb"), "invalid quantity \"1Gb\": unknown suffix \"Gb\"");
}

TEST(ParseQuantityTest, RejectsMalformedExponents) {
  for (std::string_view text : {"1e", "1E+", "1e-", "1e+-3", "1e3.5", "1e3Ki", "1e3m", "1e.5"}) {
    EXPECT_TRUE(Fails(text)) << text;
  }
  EXPECT_EQ(ErrorOf("1e"), "invalid quantity \"1e\": missing exponent digits");
}

TEST(ParseQuantityTest, RejectsSuffixWithoutNumber) {
  for (std::string_view text : {"Ki", "m", "e3", "-Gi", "E"}) EXPECT_TRUE(Fails(text)) << text;
}

TEST(ParseQuantityTest, RejectsScaleOutsideRange) {
  EXPECT_TRUE(Fails("1", 19));
  EXPECT_TRUE(Fails("1", -19));
  EXPECT_NE(ErrorOf("1", 19).find("scale"), std::string::npos);
}

TEST(ParseQuantityTest, ErrorMessagesEscapeUnprintableBytes) {
  EXPECT_EQ(ErrorOf(std::string_view("1\0", 2)),
            "invalid quantity \"1\\x00\": unexpected character '\\x00'");
  EXPECT_EQ(ErrorOf("1\"x"), "invalid quantity \"1\\\"x\": unexpected character '\"'");
}

TEST(FormatMilliTest, DropsTrailingZeros) {
  EXPECT_EQ(FormatMilli(1500), "1.5");
  EXPECT_EQ(FormatMilli(2000), "2");
  EXPECT_EQ(FormatMilli(1250), "1.25");
  EXPECT_EQ(FormatMilli(1), "0.001");
  EXPECT_EQ(FormatMilli(10), "0.01");
  EXPECT_EQ(FormatMilli(0), "0");
}

TEST(FormatMilliTest, FormatsNegativeValues) {
  EXPECT_EQ(FormatMilli(-1000), "-1");
  EXPECT_EQ(FormatMilli(-1), "-0.001");
  EXPECT_EQ(FormatMilli(-2500), "-2.5");
}

TEST(FormatMilliTest, FormatsInt64Extremes) {
  EXPECT_EQ(FormatMilli(kMax), "9223372036854775.807");
  EXPECT_EQ(FormatMilli(kMin), "-9223372036854775.808");
}

TEST(FormatMilliTest, RoundTripsThroughParseQuantity) {
  for (int64_t milli : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999}, int64_t{1001},
                        int64_t{-123456}, kMax, kMin}) {
    EXPECT_EQ(Value(FormatMilli(milli), 3), milli) << milli;
  }
}

}  // namespace
}  // namespace kai
