#include "kai/core/scaleadjuster/calculator.h"

#include <gtest/gtest.h>

#include "kai/core/scaleadjuster/test_pods.h"

namespace kai::scaleadjuster {
namespace {

using testing::FractionPod;
using testing::MemoryPod;
using testing::Ptrs;
using testing::ScalingPod;
using testing::Unschedulable;

constexpr int64_t kRatio = 10;  // KAI's default gpu-memory-to-fraction ratio, 0.1

NeededDevices Count(const std::vector<PodFacts>& pods) {
  return CountNeededDevices(Ptrs(pods), kRatio);
}

TEST(ScalingDevices, SumsAndMaximaOfNoScalingPodsAreZero) {
  EXPECT_EQ(SumScalingDevices({}), 0);
  EXPECT_EQ(MaxScalingDevices({}), 0);
}

TEST(ScalingDevices, SinglePodCountsItsDevices) {
  std::vector<PodFacts> s = {ScalingPod("ns1", "pod1", 2)};
  EXPECT_EQ(SumScalingDevices(Ptrs(s)), 2);
  EXPECT_EQ(MaxScalingDevices(Ptrs(s)), 2);
}

TEST(ScalingDevices, SimilarPodsAddUpAndTheMaxIsOne) {
  std::vector<PodFacts> s = {ScalingPod("ns1", "pod1", 2), ScalingPod("ns2", "pod2", 2),
                             ScalingPod("ns3", "pod3", 2)};
  EXPECT_EQ(SumScalingDevices(Ptrs(s)), 6);
  EXPECT_EQ(MaxScalingDevices(Ptrs(s)), 2);
}

TEST(ScalingDevices, DifferentPodsAddUpAndTheMaxIsTheLargest) {
  std::vector<PodFacts> s = {ScalingPod("ns1", "pod1", 1), ScalingPod("ns2", "pod2", 2),
                             ScalingPod("ns3", "pod3", 4), ScalingPod("ns4", "pod4", 3)};
  EXPECT_EQ(SumScalingDevices(Ptrs(s)), 10);
  EXPECT_EQ(MaxScalingDevices(Ptrs(s)), 4);
}

TEST(NeededDevices, NoPodsNeedNothing) {
  auto n = Count({});
  EXPECT_EQ(n.devices, 0);
  EXPECT_TRUE(n.to_scale.empty());
}

TEST(NeededDevices, FractionTimesDevicesRoundsUpToWholeGpus) {
  EXPECT_EQ(Count({FractionPod("ns1", "pod1", "0.2", 2)}).devices, 1);
  EXPECT_EQ(Count({FractionPod("ns1", "pod1", "0.5", 2)}).devices, 1);  // exactly 1
  EXPECT_EQ(Count({FractionPod("ns1", "pod1", "0.6", 2)}).devices, 2);
}

TEST(NeededDevices, SeveralPodsShareOneGpu) {
  EXPECT_EQ(
      Count({FractionPod("ns1", "pod1", "0.1", 2), FractionPod("ns2", "pod2", "0.5", 1)}).devices,
      1);
  EXPECT_EQ(
      Count({FractionPod("ns1", "pod1", "0.2", 2), FractionPod("ns2", "pod2", "0.1", 3)}).devices,
      1);
  std::vector<PodFacts> five;
  for (int i = 1; i <= 5; ++i) {
    five.push_back(FractionPod("ns" + std::to_string(i), "pod" + std::to_string(i), "0.1", 2));
  }
  auto n = Count(five);
  EXPECT_EQ(n.devices, 1);
  EXPECT_EQ(n.to_scale.size(), 5u);
}

TEST(NeededDevices, SeveralPodsNeedSeveralGpus) {
  auto n = Count({FractionPod("ns1", "pod1", "0.3", 2), FractionPod("ns2", "pod2", "0.5", 1)});
  EXPECT_EQ(n.devices, 2);
  EXPECT_EQ(n.to_scale.size(), 2u);
}

TEST(NeededDevices, GpuMemoryPodsCountAsTheConfiguredRatio) {
  EXPECT_EQ(Count({MemoryPod("ns1", "pod1", "1024", 1)}).devices, 1);
  std::vector<PodFacts> eleven;
  for (int i = 1; i <= 11; ++i)
    eleven.push_back(MemoryPod("ns1", "pod" + std::to_string(i), "1024", 1));
  auto n = Count(eleven);
  EXPECT_EQ(n.devices, 2);  // 11 x 0.1
  EXPECT_EQ(n.to_scale.size(), 11u);
}

TEST(NeededDevices, FractionAndMemoryPodsAddUp) {
  auto n =
      Count({FractionPod("ns1", "fraction-pod1", "0.9", 2), MemoryPod("ns1", "mem-pod1", "1024", 1),
             MemoryPod("ns1", "mem-pod2", "1024", 1), MemoryPod("ns1", "mem-pod3", "1024", 1)});
  EXPECT_EQ(n.devices, 3);  // 1.8 + 0.3
  EXPECT_EQ(n.to_scale.size(), 4u);
}

TEST(NeededDevices, AnNvFractionsPodCountsAsAMemoryPod) {
  const PodFacts nv =
      Unschedulable("ns1", "nv-pod", {"nvidia.com/container.c.gpu-memory.request: 4Gi"});
  EXPECT_TRUE(nv.AnnotatedFractional());
  auto n = Count({nv, MemoryPod("ns1", "mem-pod", "1024", 1)});
  EXPECT_EQ(n.to_scale.size(), 2u);
  EXPECT_EQ(n.devices, 1);  // 0.1 + 0.1
}

TEST(NeededDevices, PodWithoutAnnotationIsSkippedNamingIt) {
  auto n = Count({Unschedulable("ns1", "pod1", {})});
  EXPECT_EQ(n.devices, 0);
  EXPECT_TRUE(n.to_scale.empty());
  ASSERT_EQ(n.skipped.size(), 1u);
  EXPECT_NE(n.skipped[0].find("ns1/pod1"), std::string::npos) << n.skipped[0];
}

TEST(NeededDevices, InvalidAnnotationsAreSkippedNamingTheField) {
  auto n = Count(
      {Unschedulable("ns1", "pod1", {"gpu-fraction: abc"}),
       Unschedulable("ns1", "pod2", {"gpu-fraction: \"0.5\"", "gpu-fraction-num-devices: \"0.5\""}),
       Unschedulable("ns1", "pod3", {"gpu-memory: b4f"})});
  EXPECT_EQ(n.devices, 0);
  EXPECT_TRUE(n.to_scale.empty());
  ASSERT_EQ(n.skipped.size(), 3u);
  EXPECT_NE(n.skipped[0].find("gpu-fraction"), std::string::npos) << n.skipped[0];
  EXPECT_NE(n.skipped[1].find("gpu-fraction-num-devices"), std::string::npos) << n.skipped[1];
  EXPECT_NE(n.skipped[2].find("gpu-memory"), std::string::npos) << n.skipped[2];
}

TEST(NeededDevices, ValidPodsCountBesideInvalidOnes) {
  auto n = Count({Unschedulable("ns1", "pod1", {}), FractionPod("ns2", "pod2", "0.5", 1)});
  EXPECT_EQ(n.devices, 1);
  ASSERT_EQ(n.to_scale.size(), 1u);
  EXPECT_EQ(n.to_scale[0], 1u);
}

TEST(NeededDevices, FractionsRoundToHundredthsHalfUpAsKai) {
  // 0.125 -> 0.13 (KAI rounds each fraction to hundredths): 8 x 0.13 = 1.04 -> 2 GPUs, where
  // exact eighths would make 1.
  std::vector<PodFacts> eight;
  for (int i = 1; i <= 8; ++i)
    eight.push_back(FractionPod("ns1", "p" + std::to_string(i), "0.125", 1));
  EXPECT_EQ(Count(eight).devices, 2);
}

TEST(ParseFractionCenti, ReadsDecimalsAndRejectsOthersNamingTheFlag) {
  EXPECT_EQ(*ParseFractionCenti("0.1", "--r"), 10);
  EXPECT_EQ(*ParseFractionCenti("0.255", "--r"), 26);
  auto bad = ParseFractionCenti("abc", "--gpu-memory-to-fraction-ratio");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--gpu-memory-to-fraction-ratio"), std::string::npos);
  EXPECT_FALSE(ParseFractionCenti("1.5", "--r").ok());
}

}  // namespace
}  // namespace kai::scaleadjuster
