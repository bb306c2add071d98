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
  options.queue_quota_warnings = true;
  const Verdict v = Create(big);
  ASSERT_TRUE(v.allowed);
  const std::vector<std::string> want = {
      "Queue big: spec.resources.gpu.quota: 9 exceeds the quota of parent queue \"org\" (8)",
      "Queue big: spec.resources.gpu.quota: the child queues' quotas together (15) exceeds the "
      "quota of parent queue \"org\" (8)"};
  EXPECT_EQ(v.warnings, want);
  EXPECT_TRUE(Create(QueueYaml("small", "org", "{quota: 2, limit: -1}")).warnings.empty());
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
