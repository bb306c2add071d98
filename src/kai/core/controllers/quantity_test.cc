#include "kai/core/controllers/quantity.h"

#include <gtest/gtest.h>

namespace kai::controllers {
namespace {

std::string Canon(std::string_view text) { return CanonicalText(ParseKubeQuantity(text).value()); }

TEST(KubeQuantity, CanonicalFormsAreApimachinerys) {
  EXPECT_EQ(Canon("0.5"), "500m");
  EXPECT_EQ(Canon("2000"), "2k");
  EXPECT_EQ(Canon("1500m"), "1500m");
  EXPECT_EQ(Canon("1000m"), "1");
  EXPECT_EQ(Canon("1024Mi"), "1Gi");
  EXPECT_EQ(Canon("1536Mi"), "1536Mi");
  EXPECT_EQ(Canon("1000Mi"), "1000Mi");
  EXPECT_EQ(Canon("512"), "512");
  EXPECT_EQ(Canon("1e3"), "1e3");
  EXPECT_EQ(Canon("1G"), "1G");
  EXPECT_EQ(Canon("0"), "0");
  EXPECT_EQ(Canon("-2"), "-2");
}

TEST(KubeQuantity, ParsedValuesRoundUpToNano) {
  EXPECT_EQ(Canon("0.3333333333333333"), "333333334n");
  EXPECT_EQ(Canon("0.0000000001"), "1n");
}

TEST(KubeQuantity, BinaryWithFractionOrUnder1024IsWrittenDecimal) {
  KubeQuantity q = ParseKubeQuantity("1Ki").value();
  q.nano -= 1000000000;  // 1023 bytes
  EXPECT_EQ(CanonicalText(q), "1023");
  q.nano += 500000000;  // 1023.5
  EXPECT_EQ(CanonicalText(q), "1023500m");
}

TEST(KubeQuantity, SumKeepsTheLeftFormatUnlessItIsZero) {
  ResourceList left{{"memory", ParseKubeQuantity("1Gi").value()}};
  ResourceList right{{"memory", ParseKubeQuantity("1024").value()},
                     {"cpu", ParseKubeQuantity("500m").value()}};
  auto s = Texts(Sum(left, right));
  EXPECT_EQ(s.at("memory"), "1048577Ki");
  EXPECT_EQ(s.at("cpu"), "500m");
  EXPECT_EQ(Texts(Sum(right, left)).at("memory"), "1073742848");
  ResourceList zero{{"memory", ParseKubeQuantity("0").value()}};
  ResourceList gib{{"memory", ParseKubeQuantity("2Gi").value()}};
  EXPECT_EQ(Texts(Sum(zero, gib)).at("memory"), "2Gi");
}

TEST(KubeQuantity, BadTextIsAnErrorQuotingIt) {
  auto q = ParseKubeQuantity("1Gb");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("\"1Gb\""), std::string::npos);
  EXPECT_FALSE(ParseKubeQuantity("").ok());
  EXPECT_FALSE(ParseKubeQuantity("abc").ok());
}

TEST(KubeQuantity, RoundsTo4DecimalsForMetrics) {
  EXPECT_DOUBLE_EQ(RoundedTo4Decimals(ParseKubeQuantity("333333334n").value()), 0.3333);
  EXPECT_DOUBLE_EQ(RoundedTo4Decimals(ParseKubeQuantity("1500m").value()), 1.5);
  EXPECT_DOUBLE_EQ(RoundedTo4Decimals(ParseKubeQuantity("1Gi").value()), 1073741824.0);
}

}  // namespace
}  // namespace kai::controllers
