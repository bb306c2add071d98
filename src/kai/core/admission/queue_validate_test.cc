#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::FakeLookup;
using testing::MakeReview;

std::string QueueYaml(const std::string& name, const std::string& parent,
                      const std::string& gpu = "{quota: 2, limit: 4, overQuotaWeight: 1}") {
  std::string y =
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: " + name + "\nspec:\n";
  if (!parent.empty()) y += "  parentQueue: " + parent + "\n";
  return y + "  resources:\n    gpu: " + gpu + "\n    cpu: {quota: -1, limit: -1}\n";
}

struct QueueTest : ::testing::Test {
  FakeLookup lookup;
  Options options;
  void SetUp() override { lookup.AddQueue(QueueYaml("org", "", "{quota: 8, limit: -1}")); }
  Verdict Create(const std::string& yaml) {
    auto r = MakeReview(Operation::kCreate, yaml, "", "");
    return ValidateQueue(r.request, options, lookup);
  }
};

TEST_F(QueueTest, CreateNeedsAnExistingParent) {
  EXPECT_TRUE(Create(QueueYaml("team", "org")).allowed);
  EXPECT_TRUE(Create(QueueYaml("top", "")).allowed);
  const Verdict v = Create(QueueYaml("team", "nope"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, "Queue team: spec.parentQueue: queue \"nope\" does not exist");
}

TEST_F(QueueTest, ResourcesMustBeStated) {
  const Verdict v = Create(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\n"
      "spec: {parentQueue: org}\n");
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, "Queue q: spec.resources: must be specified");
}

TEST_F(QueueTest, AmountsMustBeNumbersOrMinusOne) {
  EXPECT_TRUE(
      Create(QueueYaml("q", "org", "{quota: -1, limit: -1, overQuotaWeight: 0.5}")).allowed);
  const Verdict text = Create(QueueYaml("q", "org", "{quota: lots}"));
  ASSERT_FALSE(text.allowed);
  EXPECT_EQ(text.message.rfind("Queue q: spec.resources.gpu.quota: ", 0), 0u) << text.message;
  const Verdict negative = Create(QueueYaml("q", "org", "{quota: 1, limit: -2}"));
  ASSERT_FALSE(negative.allowed);
  EXPECT_EQ(negative.message,
            "Queue q: spec.resources.gpu.limit: must be -1 (unlimited) or a non-negative number, "
            "got -2");
}

TEST_F(QueueTest, LimitMayNotBeBelowTheQuota) {
  const Verdict v = Create(QueueYaml("q", "org", "{quota: 2.5, limit: 1}"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue q: spec.resources.gpu.limit: 1 is below the quota 2.5 (use -1 for no limit)");
  EXPECT_TRUE(Create(QueueYaml("q", "org", "{quota: 2, limit: 2}")).allowed);
  EXPECT_TRUE(Create(QueueYaml("q", "org", "{quota: 2, limit: -1}")).allowed);
  EXPECT_TRUE(Create(QueueYaml("q", "org", "{quota: -1, limit: 3}")).allowed);
  EXPECT_TRUE(Create(QueueYaml("q", "org", "{quota: 2}")).allowed);  // limit not stated
}

TEST_F(QueueTest, DeleteIsRefusedWhileTheQueueHasChildren) {
  lookup.AddQueue(QueueYaml("team", "org"));
  auto with_child = MakeReview(Operation::kDelete, "", QueueYaml("org", ""), "");
  const Verdict v = ValidateQueue(with_child.request, options, lookup);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue org: status.childQueues: a queue with child queues cannot be deleted (team)");
  // status.childQueues counts even before the lookup sees the child.
  auto listed = MakeReview(Operation::kDelete, "",
                           QueueYaml("solo", "") + "status:\n  childQueues: [a, b]\n", "");
  const Verdict s = ValidateQueue(listed.request, options, lookup);
  ASSERT_FALSE(s.allowed);
  EXPECT_NE(s.message.find("cannot be deleted (a, b)"), std::string::npos);
  auto leaf = MakeReview(Operation::kDelete, "", QueueYaml("team", "org"), "");
  EXPECT_TRUE(ValidateQueue(leaf.request, options, lookup).allowed);
}

TEST_F(QueueTest, UpdateMayNotMakeTheHierarchyACycle) {
  lookup.AddQueue(QueueYaml("team", "org"));
  lookup.AddQueue(QueueYaml("squad", "team"));
  auto r = MakeReview(Operation::kUpdate, QueueYaml("org", "squad"), QueueYaml("org", ""), "");
  const Verdict v = ValidateQueue(r.request, options, lookup);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue org: spec.parentQueue: queue \"squad\" would make the queue hierarchy a cycle");
  auto self = MakeReview(Operation::kUpdate, QueueYaml("org", "org"), QueueYaml("org", ""), "");
  EXPECT_FALSE(ValidateQueue(self.request, options, lookup).allowed);
  // An unchanged parent is not looked up again (it may be gone; the scheduler reports that).
  auto kept = MakeReview(Operation::kUpdate, QueueYaml("x", "gone"), QueueYaml("x", "gone"), "");
  EXPECT_TRUE(ValidateQueue(kept.request, options, lookup).allowed);
}

TEST_F(QueueTest, QuotaAboveTheParentsOnlyWarnsWhenAskedTo) {
  lookup.AddQueue(QueueYaml("team", "org", "{quota: 6, limit: -1}"));
  const std::string big = QueueYaml("big", "org", "{quota: 9, limit: -1}");
  EXPECT_TRUE(Create(big).warnings.empty());
  options.descendants_over_subscription = OverSubscription::kWarning;
  const Verdict v = Create(big);
  ASSERT_TRUE(v.allowed);
  const std::vector<std::string> want = {
      "Queue big: spec.resources.gpu.quota: child queue GPU quota (9) exceeds parent queue org "
      "GPU quota (8)",
      "Queue big: spec.resources.gpu.quota: total children GPU quota (15) exceeds parent queue "
      "org GPU quota (8)"};
  EXPECT_EQ(v.warnings, want);
  EXPECT_TRUE(Create(QueueYaml("small", "org", "{quota: 2, limit: -1}")).warnings.empty());
  // -1 is unlimited: above any finite parent quota, never above an unlimited one.
  const Verdict unlimited = Create(QueueYaml("any", "org", "{quota: -1, limit: -1}"));
  ASSERT_EQ(unlimited.warnings.size(), 2u);
  EXPECT_EQ(unlimited.warnings[0],
            "Queue any: spec.resources.gpu.quota: child queue GPU quota (unlimited) exceeds parent "
            "queue org GPU quota (8)");
}

TEST_F(QueueTest, BlockRefusesChildrenAboveTheirParent) {
  options.descendants_over_subscription = OverSubscription::kBlock;
  lookup.AddQueue(QueueYaml("team", "org", "{quota: 6, limit: -1}"));
  EXPECT_TRUE(Create(QueueYaml("fits", "org", "{quota: 2, limit: -1}")).allowed);
  const Verdict v = Create(QueueYaml("more", "org", "{quota: 3, limit: -1}"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue more: spec.resources.gpu.quota: total children GPU quota (9) exceeds parent "
            "queue org GPU quota (8)");
  EXPECT_EQ(v.reason, "quota_over_subscription");
  // Fractions of a GPU add up exactly: 6 + 1.5 + 0.5 is the parent's 8.
  lookup.AddQueue(QueueYaml("half", "org", "{quota: 1.5, limit: -1}"));
  EXPECT_TRUE(Create(QueueYaml("rest", "org", "{quota: 0.5, limit: -1}")).allowed);
}

TEST_F(QueueTest, BlockRefusesAParentLoweredBelowItsChildren) {
  options.descendants_over_subscription = OverSubscription::kBlock;
  lookup.AddQueue(QueueYaml("a", "org", "{quota: 5, limit: -1}"));
  lookup.AddQueue(QueueYaml("b", "org", "{quota: 3, limit: -1}"));
  const std::string before = QueueYaml("org", "", "{quota: 8, limit: -1}");
  auto lowered =
      MakeReview(Operation::kUpdate, QueueYaml("org", "", "{quota: 4, limit: -1}"), before, "");
  const Verdict v = ValidateQueue(lowered.request, options, lookup);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue org: spec.resources.gpu.quota: child queue a GPU quota (5) exceeds parent GPU "
            "quota (4); Queue org: spec.resources.gpu.quota: total children GPU quota (8) exceeds "
            "parent GPU quota (4)");
  auto kept = MakeReview(Operation::kUpdate, before, before, "");
  EXPECT_TRUE(ValidateQueue(kept.request, options, lookup).allowed);
}

TEST_F(QueueTest, BlockLetsAnUnrelatedEditThroughWithWarnings) {
  lookup.AddQueue(QueueYaml("a", "org", "{quota: 9, limit: -1}"));  // made before the check
  options.descendants_over_subscription = OverSubscription::kBlock;
  const std::string a = QueueYaml("a", "org", "{quota: 9, limit: -1}");
  auto relabel = MakeReview(Operation::kUpdate, a + "  displayName: A\n", a, "");
  const Verdict v = ValidateQueue(relabel.request, options, lookup);
  ASSERT_TRUE(v.allowed) << v.message;
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("child queue GPU quota (9) exceeds parent queue org"),
            std::string::npos);
  auto raise =
      MakeReview(Operation::kUpdate, QueueYaml("a", "org", "{quota: 10, limit: -1}"), a, "");
  EXPECT_FALSE(ValidateQueue(raise.request, options, lookup).allowed);
}

TEST_F(QueueTest, AFailedLookupDenies) {
  lookup.FailWith("connection refused");
  const Verdict v = Create(QueueYaml("team", "org"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Queue team: spec.parentQueue: cannot read queue \"org\": connection refused");
}

}  // namespace
}  // namespace kai::admission
