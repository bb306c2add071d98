#include "kai/core/numaexporter/placement.h"

#include <gtest/gtest.h>

#include <limits>

#include "kai/core/k8s/decode.h"
#include "kai/core/model/cluster.h"

namespace kai::numaexporter {
namespace {

const CpuToNuma kCpus = {{0, 0}, {1, 0}, {2, 1}, {3, 1}};

PodAllocation GpuPod() {
  ContainerAllocation c;
  c.name = "main";
  c.devices = {{"nvidia.com/gpu", 2, {1}}};
  c.cpu_ids = {0, 1, 2};
  c.memory = {{"memory", 1 << 30, {0}}, {"hugepages-2Mi", 4 << 20, {1}}};
  return {"team-a", "trainer", {c}};
}

TEST(ComputePlacement, AttributesDevicesCpusAndMemoryToZones) {
  const Placement p = ComputePlacement(GpuPod(), kCpus);
  EXPECT_EQ(
      p, (Placement{{"node-0", {{"cpu", 2}, {"memory", 1 << 30}}},
                    {"node-1", {{"cpu", 1}, {"hugepages-2Mi", 4 << 20}, {"nvidia.com/gpu", 2}}}}));
}

TEST(ComputePlacement, SumsOverContainers) {
  PodAllocation pod = GpuPod();
  pod.containers.push_back(pod.containers.front());
  const Placement p = ComputePlacement(pod, kCpus);
  EXPECT_EQ(p.at("node-1").at("nvidia.com/gpu"), 4);
  EXPECT_EQ(p.at("node-0").at("cpu"), 4);
}

TEST(ComputePlacement, LeavesOutWhatHasNoSingleNode) {
  ContainerAllocation c;
  c.devices = {{"nvidia.com/gpu", 1, {}}, {"nvidia.com/gpu", 1, {0, 1}}, {"x/y", 0, {0}}};
  c.cpu_ids = {42};  // not in the topology
  c.memory = {{"", 0, {0}}, {"", 5, {0, 1}}};
  EXPECT_TRUE(ComputePlacement({"ns", "p", {c}}, kCpus).empty());
}

TEST(ComputePlacement, EmptyMemoryTypeIsMemory) {
  ContainerAllocation c;
  c.memory = {{"", 7, {3}}};
  EXPECT_EQ(ComputePlacement({"ns", "p", {c}}, kCpus), (Placement{{"node-3", {{"memory", 7}}}}));
}

TEST(ComputePlacement, HugeAmountsSaturate) {
  ContainerAllocation c;
  c.memory = {{"", std::numeric_limits<uint64_t>::max(), {0}}, {"", 5, {0}}};
  EXPECT_EQ(ComputePlacement({"ns", "p", {c}}, kCpus).at("node-0").at("memory"),
            std::numeric_limits<int64_t>::max());
}

TEST(PlacementText, IsKaisAnnotationFormat) {
  EXPECT_EQ(
      PlacementText(ComputePlacement(GpuPod(), kCpus)),
      R"([{"zone":"node-0","amount":{"cpu":"2","memory":"1073741824"}},)"
      R"({"zone":"node-1","amount":{"cpu":"1","hugepages-2Mi":"4194304","nvidia.com/gpu":"2"}}])");
  EXPECT_EQ(PlacementText({}), "[]");
}

// What the exporter writes is what the numa plugin reads: kai's pod decoder takes the text.
TEST(PlacementText, DecodesAsThePodsObservedRecord) {
  PodAllocation pod = GpuPod();
  pod.containers[0].cpu_ids = {0, 1, 2, 3};
  pod.containers[0].devices[0].device_count = 2000;  // "2k"
  const std::string manifest = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    kai.scheduler/numa-placement-observed: ')" +
                               PlacementText(ComputePlacement(pod, kCpus)) + R"('
spec: {containers: [{name: c, resources: {limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}]}
)";
  ClusterState state;
  const Status decoded = DecodeManifestText(manifest, "t.yaml", state);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(state.pods.size(), 1u);
  ASSERT_EQ(state.pods[0].numa.size(), 1u);
  const NumaPlacementRecord& r = state.pods[0].numa[0].observed;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].zone, "node-0");
  EXPECT_EQ(r[0].amount.milli_cpu, 2000);
  EXPECT_EQ(r[0].amount.memory, 1 << 30);
  EXPECT_EQ(r[1].zone, "node-1");
  EXPECT_EQ(r[1].amount.milli_cpu, 2000);
  EXPECT_EQ(r[1].amount.milli_gpu, 2000 * 1000);
  EXPECT_EQ(r[1].amount.Scalar(InternResource("hugepages-2Mi")), 4 << 20);
}

TEST(DecimalQuantity, IsCanonicalDecimalSi) {
  EXPECT_EQ(DecimalQuantity(0), "0");
  EXPECT_EQ(DecimalQuantity(8), "8");
  EXPECT_EQ(DecimalQuantity(1500), "1500");
  EXPECT_EQ(DecimalQuantity(2000), "2k");
  EXPECT_EQ(DecimalQuantity(1500000), "1500k");
  EXPECT_EQ(DecimalQuantity(1000000000), "1G");
  EXPECT_EQ(DecimalQuantity(1073741824), "1073741824");
  EXPECT_EQ(DecimalQuantity(std::numeric_limits<int64_t>::max()), "9223372036854775807");
}

}  // namespace
}  // namespace kai::numaexporter
