#include "kai/core/framework/subgroups.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/testing.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;

constexpr const char* kQueue = R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
)";

// root (minSubGroup 1) -> {decode (minMember 2), prefill (set) -> {p1 (minMember 1), p2}}
constexpr const char* kTreeGroup = R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: default}
spec:
  queue: q1
  minMember: 7
  minSubGroup: 1
  topologyConstraint: {topology: t, requiredTopologyLevel: rack}
  subGroups:
  - {name: decode, minMember: 2}
  - name: prefill
    topologyConstraint: {topology: t, preferredTopologyLevel: zone}
  - {name: p1, parent: prefill, minMember: 1}
  - {name: p2, parent: prefill}
)";

std::string PodYaml(const std::string& name, const std::string& sub_group,
                    const std::string& phase = "Pending") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\n  namespace: default\n  annotations: {pod-group-name: pg}\n";
  if (!sub_group.empty()) y += "  labels: {kai.scheduler/subgroup-name: " + sub_group + "}\n";
  y += "spec:\n  schedulerName: kai-scheduler\n";
  if (phase == "Running") y += "  nodeName: n1\n";
  y += "  containers: [{name: c}]\nstatus: {phase: " + phase + "}\n";
  return y;
}

constexpr const char* kNode = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110'}
)";

ClusterState Load(const std::vector<std::string>& docs) { return testing::LoadDocs(docs); }

// Validation errors of a PodGroup with these spec.subGroups (a YAML flow sequence).
std::vector<std::string> Invalid(const std::string& sub_groups) {
  const std::string group =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: "
      "default}\nspec:\n  queue: q1\n  subGroups: " +
      sub_groups + "\n";
  ClusterState state;
  const auto errors =
      ProblemsOf(DecodeManifestText(std::string(kQueue) + "---\n" + group, "t.yaml", state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  return ProblemsOf(ValidateCluster(state));
}

SubGroupIndex Named(const SnapJob& job, std::string_view name) {
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    if (job.sub_groups[i].name == name) return static_cast<SubGroupIndex>(i);
  }
  ADD_FAILURE() << "no SubGroup " << name;
  return kNone;
}

TEST(SubGroupTreeTest, FlatPodGroupHasOneDefaultPodSet) {
  const ClusterState state = Load({kQueue, kNode, R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: default}
spec: {queue: q1, minMember: 3}
)",
                                   PodYaml("a", ""), PodYaml("b", "", "Running")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapJob& job = snap.jobs[0];
  ASSERT_EQ(job.sub_groups.size(), 2u);
  EXPECT_FALSE(job.sub_groups[kRootSubGroup].pod_set);
  EXPECT_EQ(job.sub_groups[kRootSubGroup].MembersToSatisfy(), 1);
  const SnapSubGroup& flat = job.sub_groups[1];
  EXPECT_TRUE(flat.pod_set);
  EXPECT_EQ(flat.name, "default");
  EXPECT_EQ(flat.min_member, 3);
  EXPECT_EQ(job.PodsOf(1).size(), 2u);
  EXPECT_EQ(flat.active_allocated, 1);
  EXPECT_EQ(snap.pods[0].sub_group, 1);
  EXPECT_EQ(job.MinAvailable(), 3);
}

TEST(SubGroupTreeTest, FlatPodGroupWithoutMinMemberNeedsOnePod) {
  const ClusterState state = Load({kQueue, R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: default}
spec: {queue: q1}
)"});
  EXPECT_EQ(BuildSnapshot(state, kNow).jobs[0].sub_groups[1].min_member, 1);
}

TEST(SubGroupTreeTest, TreeFollowsSpecAndIgnoresRootMinMember) {
  const ClusterState state =
      Load({kQueue, kNode, kTreeGroup, PodYaml("d1", "decode", "Running"), PodYaml("d2", "decode"),
            PodYaml("x1", "p1"), PodYaml("x2", "p2")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapJob& job = snap.jobs[0];
  ASSERT_EQ(job.sub_groups.size(), 5u);
  const SnapSubGroup& root = job.sub_groups[kRootSubGroup];
  EXPECT_EQ(root.MembersToSatisfy(), 1);
  ASSERT_NE(root.topology, nullptr);
  EXPECT_EQ(root.topology->required_level, "rack");
  const SnapSubGroup& prefill = job.sub_groups[Named(job, "prefill")];
  EXPECT_FALSE(prefill.pod_set);
  EXPECT_EQ(prefill.MembersToSatisfy(), 2);  // minSubGroup unset: all members
  ASSERT_NE(prefill.topology, nullptr);
  EXPECT_EQ(prefill.topology->preferred_level, "zone");
  EXPECT_EQ(prefill.member_count, 2);
  const SnapSubGroup& p2 = job.sub_groups[Named(job, "p2")];
  EXPECT_TRUE(p2.pod_set);
  EXPECT_EQ(p2.min_member, 0);  // a leaf without minMember needs no pod
  EXPECT_EQ(p2.parent, Named(job, "prefill"));
  EXPECT_EQ(job.sub_groups[Named(job, "decode")].active_allocated, 1);
  EXPECT_EQ(job.MinAvailable(), 3);  // 2 + 1 + 0; the root's minMember 7 is ignored
  EXPECT_EQ(job.pods.size(), 4u);
}

TEST(SubGroupTreeTest, PodNamingAnUnknownSubGroupIsLeftOutOfTheJob) {
  const ClusterState state =
      Load({kQueue, kNode, kTreeGroup, PodYaml("a", "decode"), PodYaml("b", "nope"),
            PodYaml("c", ""), PodYaml("d", "prefill")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapJob& job = snap.jobs[0];
  EXPECT_EQ(job.pods.size(), 1u);
  // "nope" does not exist; "" means "default", absent with SubGroups; "prefill" is not a PodSet.
  EXPECT_EQ(job.invalid_sub_group_pods.size(), 3u);
  EXPECT_EQ(snap.pods[1].job, kNone);
}

TEST(SubGroupGangTest, SatisfactionFollowsMinSubGroup) {
  const ClusterState state = Load({kQueue, kNode, kTreeGroup, PodYaml("d1", "decode", "Running"),
                                   PodYaml("d2", "decode"), PodYaml("x1", "p1", "Running")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapJob& job = snap.jobs[0];
  EXPECT_FALSE(IsSubGroupSatisfied(job, Named(job, "decode")));  // 1 of 2
  EXPECT_TRUE(IsSubGroupSatisfied(job, Named(job, "p1")));
  EXPECT_TRUE(IsSubGroupSatisfied(job, Named(job, "p2")));  // needs 0
  EXPECT_TRUE(IsSubGroupSatisfied(job, Named(job, "prefill")));
  EXPECT_EQ(SatisfiedMembers(job, kRootSubGroup), 1);
  EXPECT_TRUE(IsJobSatisfied(job));                 // minSubGroup 1
  EXPECT_EQ(JobGangLevel(job), GangLevel::kBelow);  // decode is below its minimum
  EXPECT_TRUE(IsReadyForScheduling(snap, job));
  EXPECT_FALSE(IsGangSatisfied(snap, job));
  EXPECT_TRUE(IsStaleGang(snap, job));  // a PodSet below its floor, minSubGroup notwithstanding
  EXPECT_FALSE(IsElasticJob(job));      // decode 2 pods for 2, p1 1 for 1, p2 none for 0
}

TEST(SubGroupGangTest, ElasticLevels) {
  const ClusterState state =
      Load({kQueue, kNode, kTreeGroup, PodYaml("d1", "decode", "Running"),
            PodYaml("d2", "decode", "Running"), PodYaml("d3", "decode", "Running"),
            PodYaml("x1", "p1", "Running")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(JobGangLevel(snap.jobs[0]), GangLevel::kAbove);
  EXPECT_TRUE(IsGangSatisfied(snap, snap.jobs[0]));
  EXPECT_FALSE(IsStaleGang(snap, snap.jobs[0]));
}

TEST(SubGroupValidationTest, RejectsMalformedTrees) {
  const auto dup = Invalid("[{name: a, minMember: 1}, {name: a, minMember: 1}]");
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_NE(dup[0].find("spec.subGroups[1].name: duplicate SubGroup \"a\""), std::string::npos);
  const auto parent = Invalid("[{name: a, parent: zz, minMember: 1}]");
  ASSERT_EQ(parent.size(), 1u);
  EXPECT_NE(parent[0].find("spec.subGroups[0].parent: SubGroup \"zz\" not found"),
            std::string::npos);
  const auto cycle = Invalid("[{name: a, parent: b}, {name: b, parent: a}]");
  ASSERT_FALSE(cycle.empty());
  EXPECT_NE(cycle[0].find("cycle"), std::string::npos);
  const auto both = Invalid("[{name: a, minMember: 1, minSubGroup: 1}]");
  ASSERT_EQ(both.size(), 2u);  // exclusive fields, and minSubGroup on a leaf
}

}  // namespace
}  // namespace kai
