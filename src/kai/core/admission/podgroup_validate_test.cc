#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::FakeLookup;
using testing::MakeReview;

// A PodGroup with `spec` lines (indented 2) after its queue.
std::string PodGroupYaml(const std::string& spec, bool with_queue = true) {
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: job\n"
         "  namespace: team-a\nspec:\n" +
         std::string(with_queue ? "  queue: q\n" : "") + spec;
}

const char* kTree = R"(  minSubGroup: 2
  subGroups:
  - {name: decode, minSubGroup: 1}
  - {name: decode-0, parent: decode, minMember: 2}
  - {name: decode-1, parent: decode, minMember: 2}
  - {name: prefill, minMember: 1}
)";

struct PodGroupTest : ::testing::Test {
  FakeLookup lookup;
  Verdict Check(const std::string& yaml, Operation op = Operation::kCreate,
                const std::string& old = "") {
    auto r = MakeReview(op, yaml, old);
    return ValidatePodGroup(r.request, lookup);
  }
};

TEST_F(PodGroupTest, AWellFormedTreeIsAllowed) {
  const Verdict v = Check(PodGroupYaml(kTree));
  EXPECT_TRUE(v.allowed) << v.message;
  EXPECT_TRUE(v.warnings.empty());
  EXPECT_TRUE(Check(PodGroupYaml("  minMember: 3\n")).allowed);
  // KAI's PodGroup may leave the queue out, and a generateName PodGroup has no name yet.
  EXPECT_TRUE(Check(PodGroupYaml("  minMember: 3\n", false)).allowed);
  auto unnamed = MakeReview(Operation::kCreate,
                            "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\n"
                            "metadata: {generateName: job-}\nspec: {queue: q}\n");
  EXPECT_TRUE(ValidatePodGroup(unnamed.request, lookup).allowed);
}

TEST_F(PodGroupTest, NamesAreUniqueAndParentsExist) {
  const Verdict dup = Check(
      PodGroupYaml("  subGroups:\n  - {name: a, minMember: 1}\n  - {name: a, minMember: 2}\n"));
  ASSERT_FALSE(dup.allowed);
  EXPECT_EQ(dup.message,
            "PodGroup team-a/job: spec.subGroups[1].name: duplicate SubGroup name \"a\"");
  const Verdict orphan =
      Check(PodGroupYaml("  subGroups:\n  - {name: a, parent: b, minMember: 1}\n"));
  ASSERT_FALSE(orphan.allowed);
  EXPECT_EQ(orphan.message,
            "PodGroup team-a/job: spec.subGroups[0].parent: SubGroup \"b\" does not exist");
}

TEST_F(PodGroupTest, TheTreeHasNoCycle) {
  const Verdict v =
      Check(PodGroupYaml("  subGroups:\n  - {name: a, parent: b, minSubGroup: 1}\n"
                         "  - {name: b, parent: a, minSubGroup: 1}\n"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "PodGroup team-a/job: spec.subGroups[0].parent: the SubGroups form a cycle through "
            "\"a\"");
}

TEST_F(PodGroupTest, MinMemberAndMinSubGroupAreExclusive) {
  const Verdict root = Check(PodGroupYaml("  minMember: 1\n  minSubGroup: 1\n"));
  ASSERT_FALSE(root.allowed);
  EXPECT_EQ(root.message,
            "PodGroup team-a/job: spec: minMember and minSubGroup are mutually exclusive "
            "(minMember counts pods, minSubGroup child SubGroups)");
  const Verdict sub = Check(PodGroupYaml(
      "  subGroups:\n  - {name: a, minMember: 1, minSubGroup: 1}\n  - {name: b, parent: a, "
      "minMember: 1}\n"));
  ASSERT_FALSE(sub.allowed);
  EXPECT_EQ(
      sub.message.rfind("PodGroup team-a/job: spec.subGroups[0]: minMember and minSubGroup", 0),
      0u);
}

TEST_F(PodGroupTest, LeavesStateMinMemberAndOnlyParentsMinSubGroup) {
  const Verdict v =
      Check(PodGroupYaml("  subGroups:\n  - {name: a}\n  - {name: b, minSubGroup: 1}\n"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "PodGroup team-a/job: spec.subGroups[0].minMember: required on the leaf SubGroup "
            "\"a\"; PodGroup team-a/job: spec.subGroups[1].minSubGroup: SubGroup \"b\" has no "
            "child SubGroups (a leaf states minMember); PodGroup team-a/job: "
            "spec.subGroups[1].minMember: required on the leaf SubGroup \"b\"");
}

TEST_F(PodGroupTest, AMidLevelMinMemberIsDeniedOnCreateAndWarnedOnUpdate) {
  const std::string yaml = PodGroupYaml(
      "  subGroups:\n  - {name: a, minMember: 2}\n  - {name: b, parent: a, minMember: 1}\n");
  const Verdict create = Check(yaml);
  ASSERT_FALSE(create.allowed);
  EXPECT_EQ(create.message,
            "PodGroup team-a/job: spec.subGroups[0].minMember: SubGroup \"a\" has child "
            "SubGroups; it states minSubGroup instead");
  const Verdict update = Check(yaml, Operation::kUpdate, yaml);
  EXPECT_TRUE(update.allowed) << update.message;
  ASSERT_EQ(update.warnings.size(), 1u);
  EXPECT_EQ(update.warnings[0], create.message);
}

TEST_F(PodGroupTest, MinSubGroupAboveTheChildCountWarns) {
  const Verdict v =
      Check(PodGroupYaml("  minSubGroup: 3\n  subGroups:\n  - {name: a, minSubGroup: 2}\n"
                         "  - {name: b, parent: a, minMember: 1}\n"));
  ASSERT_TRUE(v.allowed) << v.message;
  const std::vector<std::string> want = {
      "PodGroup team-a/job: spec.subGroups[0].minSubGroup: 2 exceeds the number of child "
      "SubGroups of \"a\" (1)",
      "PodGroup team-a/job: spec.minSubGroup: 3 exceeds the number of top-level SubGroups (1)"};
  EXPECT_EQ(v.warnings, want);
}

TEST_F(PodGroupTest, FieldsAreReadByTheDecoder) {
  const Verdict v = Check(PodGroupYaml("  minMember: many\n"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, "PodGroup team-a/job: spec.minMember: expected an integer, got \"many\"");
}

TEST_F(PodGroupTest, RunningSemiPreemptibleGroupsMayNotRaiseTheirMinimum) {
  const std::string before = PodGroupYaml("  preemptibility: semi-preemptible\n  minMember: 2\n");
  const std::string after = PodGroupYaml("  preemptibility: semi-preemptible\n  minMember: 3\n");
  EXPECT_TRUE(Check(after, Operation::kUpdate, before).allowed);  // nothing runs yet
  lookup.SetRunning(true);
  const Verdict v = Check(after, Operation::kUpdate, before);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "PodGroup team-a/job: spec.minMember: may not be raised (2 to 3) on a running "
            "semi-preemptible PodGroup");
  EXPECT_TRUE(Check(before, Operation::kUpdate, after).allowed);  // lowering is fine
  lookup.FailWith("timeout");
  const Verdict failed = Check(after, Operation::kUpdate, before);
  ASSERT_FALSE(failed.allowed);
  EXPECT_EQ(failed.message, "PodGroup team-a/job: cannot read its pods: timeout");
}

TEST_F(PodGroupTest, AnUpdateThatRaisesNoMinimumReadsNoPods) {
  // Listing the namespace's pods on every PodGroup update (the pod grouper's and the status
  // controller's) made the webhook cost grow with the square of the pods.
  lookup.FailWith("must not be called");
  const std::string semi = PodGroupYaml("  preemptibility: semi-preemptible\n  minMember: 2\n");
  EXPECT_TRUE(Check(semi, Operation::kUpdate, semi).allowed);
  const std::string low = PodGroupYaml("  minMember: 2\n");
  const std::string high = PodGroupYaml("  minMember: 3\n");
  EXPECT_TRUE(Check(high, Operation::kUpdate, low).allowed);  // not semi-preemptible
  EXPECT_EQ(lookup.pod_lookups, 0);
}

}  // namespace
}  // namespace kai::admission
