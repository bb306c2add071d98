#include "kai/core/k8s/selector.h"

#include <gtest/gtest.h>

namespace kai::k8s {
namespace {

doc::Document Pod(std::string_view json) {
  auto d = doc::ParseJson(json);
  EXPECT_TRUE(d.ok());
  return std::move(*d);
}

bool Selects(std::string_view query, std::string_view json) {
  auto s = ParseQuerySelector(query);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  const doc::Document d = Pod(json);
  return Matches(*s, d.Roots().at(0));
}

constexpr std::string_view kPod = R"({"metadata":{"name":"p","namespace":"team-a",
  "labels":{"app":"train","tier":"gpu"}},"spec":{"schedulerName":"kai-scheduler","nodeName":""},
  "status":{"phase":"Pending"}})";

TEST(Selector, LabelEqualityAndInequality) {
  EXPECT_TRUE(Selects("labelSelector=app%3Dtrain", kPod));
  EXPECT_TRUE(Selects("labelSelector=app%3D%3Dtrain", kPod));
  EXPECT_FALSE(Selects("labelSelector=app%3Dserve", kPod));
  EXPECT_TRUE(Selects("labelSelector=app!%3Dserve", kPod));
  EXPECT_FALSE(Selects("labelSelector=app!%3Dtrain", kPod));
  EXPECT_TRUE(Selects("labelSelector=missing!%3Dx", kPod));  // absent label: != holds
}

TEST(Selector, LabelExistenceAndSets) {
  EXPECT_TRUE(Selects("labelSelector=tier", kPod));
  EXPECT_FALSE(Selects("labelSelector=%21tier", kPod));
  EXPECT_TRUE(Selects("labelSelector=%21pool", kPod));
  EXPECT_TRUE(Selects("labelSelector=app+in+(serve,train)", kPod));
  EXPECT_FALSE(Selects("labelSelector=app%20notin%20(serve,train)", kPod));
  EXPECT_TRUE(Selects("labelSelector=app%3Dtrain,tier%3Dgpu", kPod));
  EXPECT_FALSE(Selects("labelSelector=app%3Dtrain,tier%3Dcpu", kPod));
}

TEST(Selector, FieldsReadTheObjectAndAnAbsentFieldIsEmpty) {
  EXPECT_TRUE(Selects("fieldSelector=status.phase!%3DFailed", kPod));
  EXPECT_FALSE(Selects("fieldSelector=status.phase%3DRunning", kPod));
  EXPECT_TRUE(Selects("fieldSelector=spec.schedulerName%3Dkai-scheduler,spec.nodeName%3D", kPod));
  EXPECT_TRUE(Selects("fieldSelector=metadata.namespace%3Dteam-a&labelSelector=app%3Dtrain", kPod));
  EXPECT_TRUE(Selects("fieldSelector=spec.nodeName%3D", R"({"metadata":{"name":"q"},"spec":{}})"));
  EXPECT_FALSE(Selects("fieldSelector=metadata.name%3Dq", kPod));
}

TEST(Selector, AnEmptyQuerySelectsEverything) { EXPECT_TRUE(Selects("", kPod)); }

TEST(Selector, UnsupportedInputIsAnErrorNamingIt) {
  auto field = ParseQuerySelector("fieldSelector=spec.priority%3D3");
  ASSERT_FALSE(field.ok());
  EXPECT_NE(field.error().message.find("spec.priority"), std::string::npos);
  auto param = ParseQuerySelector("limit=5");
  ASSERT_FALSE(param.ok());
  EXPECT_NE(param.error().message.find("limit"), std::string::npos);
  EXPECT_FALSE(ParseQuerySelector("labelSelector=a%3").ok());
  EXPECT_FALSE(ParseQuerySelector("labelSelector=a+in+b").ok());
  EXPECT_FALSE(ParseQuerySelector("fieldSelector=spec.nodeName").ok());
}

}  // namespace
}  // namespace kai::k8s
