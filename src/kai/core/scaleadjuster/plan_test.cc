#include "kai/core/scaleadjuster/plan.h"

#include <gtest/gtest.h>

#include <map>

#include "kai/core/scaleadjuster/test_pods.h"

namespace kai::scaleadjuster {
namespace {

using testing::FractionPod;
using testing::FromYaml;
using testing::MemoryPod;
using testing::ScalingPod;
using testing::Unschedulable;

constexpr UnixSeconds kNow = 1'000'000;

AdjustPlan Plan(const std::vector<PodFacts>& pods, const std::vector<PodFacts>& scaling,
                int64_t cool_down = 60, std::optional<UnixSeconds> last = std::nullopt) {
  AdjusterConfig c;
  c.cool_down_seconds = cool_down;
  return PlanAdjustment(c, pods, scaling, kNow, last);
}

// name -> devices of the scaling pods created.
std::map<std::string, int64_t> Created(const AdjustPlan& p) {
  std::map<std::string, int64_t> out;
  for (const auto& c : p.creates) out[c.name] = c.devices;
  return out;
}

std::vector<std::string> Deleted(const AdjustPlan& p) {
  std::vector<std::string> out;
  for (const auto& d : p.deletes) out.push_back(d.name);
  return out;
}

using Devices = std::map<std::string, int64_t>;

TEST(PlanAdjustment, NoPodsNothingToDo) {
  auto p = Plan({}, {});
  EXPECT_TRUE(p.creates.empty());
  EXPECT_TRUE(p.deletes.empty());
  EXPECT_FALSE(p.in_cool_down);
}

TEST(PlanAdjustment, EnoughScalingGpusCreateNoMore) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1),
                 FractionPod("ns3", "pod3", "0.1", 1)},
                {ScalingPod("ns1", "pod1", 1), ScalingPod("ns2", "pod2", 1)});
  EXPECT_TRUE(p.creates.empty());
  EXPECT_TRUE(p.deletes.empty());
  EXPECT_FALSE(p.in_cool_down);
}

TEST(PlanAdjustment, UnneededScalingPodIsDeletedAndStartsTheCoolDown) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1)},
                {ScalingPod("ns1", "pod1", 1), ScalingPod("ns2", "pod2", 1)});
  EXPECT_EQ(Deleted(p), std::vector<std::string>{"ns2-pod2"});
  EXPECT_TRUE(p.in_cool_down);
  EXPECT_EQ(p.cool_down_ends, kNow + 60);
}

TEST(PlanAdjustment, UnschedulableFractionPodGetsAScalingPod) {
  EXPECT_EQ(Created(Plan({FractionPod("ns1", "pod1", "0.7", 1)}, {})), (Devices{{"ns1-pod1", 1}}));
}

TEST(PlanAdjustment, UnschedulableGpuMemoryPodGetsAScalingPod) {
  EXPECT_EQ(Created(Plan({MemoryPod("ns1", "pod1", "1024", 1)}, {})), (Devices{{"ns1-pod1", 1}}));
}

TEST(PlanAdjustment, FractionsThatShareAGpuGetOneScalingPod) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.1", 1)}, {});
  EXPECT_EQ(Created(p), (Devices{{"ns1-pod1", 1}}));
  ASSERT_EQ(p.log.size(), 1u);
  EXPECT_NE(p.log[0].find("ns2/pod2: already scaling up"), std::string::npos) << p.log[0];
}

TEST(PlanAdjustment, FractionsThatDoNotShareAGpuGetOneScalingPodEach) {
  EXPECT_EQ(Created(Plan(
                {FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1)}, {})),
            (Devices{{"ns1-pod1", 1}, {"ns2-pod2", 1}}));
}

TEST(PlanAdjustment, ExistingScalingPodShortOfTheNeedGetsAnotherOne) {
  EXPECT_EQ(
      Created(Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1)},
                   {ScalingPod("ns1", "pod1", 1)})),
      (Devices{{"ns2-pod2", 1}}));
}

TEST(PlanAdjustment, MultiDevicePodGetsAScalingPodWithAllItsDevices) {
  EXPECT_EQ(Created(Plan({FractionPod("ns1", "pod1", "0.2", 2)}, {})), (Devices{{"ns1-pod1", 2}}));
  EXPECT_EQ(Created(Plan({FractionPod("ns1", "pod1", "0.9", 2)}, {})), (Devices{{"ns1-pod1", 2}}));
}

TEST(PlanAdjustment, MultiDevicePodsFittingItsGpusShareOneScalingPod) {
  EXPECT_EQ(Created(Plan(
                {FractionPod("ns1", "pod1", "0.2", 2), FractionPod("ns2", "pod2", "0.1", 2)}, {})),
            (Devices{{"ns1-pod1", 2}}));
  EXPECT_EQ(Created(Plan(
                {FractionPod("ns1", "pod1", "0.5", 2), FractionPod("ns2", "pod2", "0.1", 2)}, {})),
            (Devices{{"ns1-pod1", 2}}));
}

TEST(PlanAdjustment, MultiDevicePodsNeedingMoreGpusGetTwoScalingPods) {
  EXPECT_EQ(Created(Plan(
                {FractionPod("ns1", "pod1", "0.5", 2), FractionPod("ns2", "pod2", "0.8", 2)}, {})),
            (Devices{{"ns1-pod1", 2}, {"ns2-pod2", 2}}));
}

TEST(PlanAdjustment, PodAskingMoreDevicesThanAnyScalingPodGetsItsOwn) {
  // One GPU in all is needed, but pod2 needs 3 devices on one node and the scaling pod has 2.
  EXPECT_EQ(Created(Plan(
                {FractionPod("ns1", "pod1", "0.2", 2), FractionPod("ns2", "pod2", "0.1", 3)}, {})),
            (Devices{{"ns1-pod1", 2}, {"ns2-pod2", 3}}));
}

TEST(PlanAdjustment, DeletionHoldsCreationsDuringTheDefaultCoolDown) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1)},
                {ScalingPod("non-existing", "pod", 1)});
  EXPECT_EQ(Deleted(p), std::vector<std::string>{"non-existing-pod"});
  EXPECT_TRUE(p.creates.empty());
  EXPECT_TRUE(p.in_cool_down);
}

TEST(PlanAdjustment, WithoutACoolDownDeletionAndCreationHappenTogether) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1)},
                {ScalingPod("non-existing", "pod", 1)}, 0);
  EXPECT_EQ(Deleted(p), std::vector<std::string>{"non-existing-pod"});
  EXPECT_EQ(Created(p), (Devices{{"ns1-pod1", 1}, {"ns2-pod2", 1}}));
  EXPECT_FALSE(p.in_cool_down);
}

TEST(PlanAdjustment, DeleteOneAndCreateOne) {
  auto p = Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1),
                 FractionPod("ns3", "pod3", "0.2", 1)},
                {ScalingPod("ns1", "pod1", 1), ScalingPod("non-existing", "pod", 1)}, 0);
  EXPECT_EQ(Deleted(p), std::vector<std::string>{"non-existing-pod"});
  EXPECT_EQ(Created(p), (Devices{{"ns2-pod2", 1}}));
}

TEST(PlanAdjustment, CoolDownFromAnEarlierDeletionHoldsCreationsUntilItEnds) {
  std::vector<PodFacts> pods = {FractionPod("ns1", "pod1", "0.7", 1)};
  auto during = Plan(pods, {}, 60, kNow - 59);
  EXPECT_TRUE(during.in_cool_down);
  EXPECT_TRUE(during.creates.empty());
  EXPECT_EQ(during.cool_down_ends, kNow + 1);
  auto after = Plan(pods, {}, 60, kNow - 60);
  EXPECT_FALSE(after.in_cool_down);
  EXPECT_EQ(Created(after), (Devices{{"ns1-pod1", 1}}));
}

TEST(PlanAdjustment, InvalidPodsAreSkippedAndOthersStillScale) {
  auto p = Plan(
      {Unschedulable("ns1", "pod1", {"gpu-fraction: \"0.7\"", "gpu-fraction-num-devices: a3"}),
       Unschedulable("ns1", "pod3", {"gpu-fraction: a4f"}), FractionPod("ns2", "pod2", "0.7", 1)},
      {});
  EXPECT_EQ(Created(p), (Devices{{"ns2-pod2", 1}}));
  EXPECT_EQ(p.log.size(), 2u);
}

TEST(PlanAdjustment, PodsThatNeedNoScalingPodAreIgnored) {
  const std::string finished = "status:\n  phase: Succeeded\n";
  const std::string failed = "status:\n  phase: Failed\n";
  const std::string pending = "status:\n  phase: Pending\n";  // not (yet) unschedulable
  std::vector<PodFacts> pods = {
      Unschedulable("ns1", "no-annotation", {}),
      Unschedulable("ns1", "succeeded", {"gpu-fraction: \"0.5\""}, finished),
      Unschedulable("ns1", "failed", {"gpu-fraction: \"0.5\""}, failed),
      Unschedulable("ns1", "pending", {"gpu-fraction: \"0.5\""}, pending),
  };
  PodFacts other = FractionPod("ns1", "other-scheduler", "0.5", 1);
  other.scheduler_name = "default-scheduler";
  pods.push_back(other);
  PodFacts bound = FractionPod("ns1", "bound", "0.5", 1);
  bound.node_name = "node-1";
  pods.push_back(bound);
  auto p = Plan(pods, {});
  EXPECT_TRUE(p.creates.empty());
}

TEST(UnneededBecause, ScalingPodOfAnUnschedulablePodIsNeeded) {
  EXPECT_EQ(UnneededBecause(ScalingPod("ns1", "pod1", 1), {FractionPod("ns1", "pod1", "0.5", 1)}),
            "");
}

TEST(UnneededBecause, PodWithoutConditionKeepsItsScalingPod) {
  auto pod = Unschedulable("ns1", "pod1", {"gpu-fraction: \"0.5\""}, "status:\n  phase: Pending\n");
  EXPECT_EQ(UnneededBecause(ScalingPod("ns1", "pod1", 1), {pod}), "");
}

TEST(UnneededBecause, ScheduledPodNoLongerNeedsIt) {
  auto pod = Unschedulable("ns1", "pod1", {"gpu-fraction: \"0.5\""},
                           "status:\n  conditions:\n  - {type: PodScheduled, status: \"True\"}\n");
  EXPECT_NE(UnneededBecause(ScalingPod("ns1", "pod1", 1), {pod}), "");
}

TEST(UnneededBecause, BoundPodNoLongerNeedsIt) {
  auto pod = FractionPod("ns1", "pod1", "0.5", 1);
  pod.node_name = "node-1";
  EXPECT_NE(UnneededBecause(ScalingPod("ns1", "pod1", 1), {pod}).find("bound to node-1"),
            std::string::npos);
}

TEST(UnneededBecause, GonePodNoLongerNeedsIt) {
  EXPECT_NE(UnneededBecause(ScalingPod("ns1", "pod1", 1), {}).find("ns1/pod1 is gone"),
            std::string::npos);
}

TEST(UnneededBecause, CompletedScalingPodIsNotNeeded) {
  EXPECT_EQ(UnneededBecause(ScalingPod("ns1", "pod1", 1, "Succeeded"),
                            {FractionPod("ns1", "pod1", "0.5", 1)}),
            "it completed");
}

TEST(UnneededBecause, ScalingPodWithoutItsLabelsIsAnOrphan) {
  PodFacts s = ScalingPod("ns1", "pod1", 1);
  s.labels.erase(std::string(kSharedGpuPodName));
  EXPECT_NE(UnneededBecause(s, {FractionPod("ns1", "pod1", "0.5", 1)}), "");
}

TEST(PlanAdjustment, TerminatingScalingPodIsNeitherDeletedAgainNorCounted) {
  PodFacts gone = ScalingPod("ns9", "gone", 1);
  gone.terminating = true;
  auto p = Plan({}, {gone}, 60, kNow - 600);
  EXPECT_TRUE(p.deletes.empty());
  EXPECT_FALSE(p.in_cool_down);  // no new deletion: the old cool-down is over
  // A terminating scaling pod of a pod that needs one: its GPU is not counted, but its name is
  // taken until it is gone, so nothing is created under it.
  PodFacts leaving = ScalingPod("ns1", "pod1", 1);
  leaving.terminating = true;
  auto q =
      Plan({FractionPod("ns1", "pod1", "0.7", 1), FractionPod("ns2", "pod2", "0.7", 1)}, {leaving});
  EXPECT_EQ(Created(q), (Devices{{"ns2-pod2", 1}}));
}

TEST(PlanAdjustment, ScalingPodWithoutPodScheduledConditionGetsItsStatus) {
  PodFacts s = ScalingPod("ns1", "pod1", 1);
  s.scheduled.reset();
  auto p = Plan({FractionPod("ns1", "pod1", "0.5", 1)}, {s});
  EXPECT_EQ(p.status_patches, std::vector<std::string>{"ns1-pod1"});
  EXPECT_TRUE(Plan({FractionPod("ns1", "pod1", "0.5", 1)}, {ScalingPod("ns1", "pod1", 1)})
                  .status_patches.empty());
}

}  // namespace
}  // namespace kai::scaleadjuster
