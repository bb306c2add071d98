#include "kai/core/snapshot/dra.h"

#include <gtest/gtest.h>

#include "kai/core/k8s/testing.h"
#include "kai/core/snapshot/dra_cel.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {
namespace {

SliceDevice Gpu() {
  SliceDevice d;
  d.name = "gpu-0";
  d.attributes["model"].string_value = "H100";
  d.attributes["index"] = {DeviceAttribute::Kind::kInt, 3, false, ""};
  d.attributes["mig"] = {DeviceAttribute::Kind::kBool, 0, true, ""};
  d.capacity["memory"] = int64_t{80} << 30;
  return d;
}

TEST(DraCel, EvaluatesDriverAttributesAndCapacity) {
  const SliceDevice d = Gpu();
  const std::string drv = "gpu.nvidia.com";
  EXPECT_TRUE(EvalDeviceSelector("device.driver == \"gpu.nvidia.com\"", drv, d).matches);
  EXPECT_FALSE(EvalDeviceSelector("device.driver != \"gpu.nvidia.com\"", drv, d).matches);
  EXPECT_TRUE(EvalDeviceSelector("device.attributes[\"gpu.nvidia.com\"].model == \"H100\"", drv, d)
                  .matches);
  EXPECT_TRUE(EvalDeviceSelector("device.attributes[\"gpu.nvidia.com\"].index >= 2 && "
                                 "device.attributes[\"gpu.nvidia.com\"].mig == true",
                                 drv, d)
                  .matches);
  EXPECT_FALSE(
      EvalDeviceSelector("device.attributes[\"other.com\"].model == \"H100\"", drv, d).matches);
  EXPECT_TRUE(
      EvalDeviceSelector(
          "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0", drv, d)
          .matches);
  EXPECT_FALSE(
      EvalDeviceSelector(
          "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"96Gi\")) >= 0", drv, d)
          .matches);
}

TEST(DraCel, ReportsWhatItCannotEvaluate) {
  const SliceDevice d = Gpu();
  for (const char* e : {"device.driver.startsWith(\"gpu\")", "a || b",
                        "device.attributes[\"gpu.nvidia.com\"].model in [\"H100\"]"}) {
    const CelOutcome o = EvalDeviceSelector(e, "gpu.nvidia.com", d);
    EXPECT_FALSE(o.matches) << e;
    EXPECT_FALSE(o.unsupported.empty()) << e;
  }
}

constexpr const char* kNode = R"(
apiVersion: v1
kind: Node
metadata: {name: node0}
status: {allocatable: {cpu: '8', memory: 8G, pods: '110'}}
)";

constexpr const char* kSlice = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node0-gpu}
spec:
  driver: gpu.nvidia.com
  pool: {name: node0}
  nodeName: node0
  devices: [{name: '0'}, {name: '1'}]
)";

constexpr const char* kClass = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {}
)";

std::string Claim(const std::string& name, bool allocated) {
  std::string s = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
                  ", namespace: default}\nspec:\n  devices:\n    requests:\n    - name: r\n"
                  "      exactly: {deviceClassName: gpu.nvidia.com, count: 1}\n";
  if (allocated) {
    s += "status:\n  allocation:\n    devices:\n      results:\n"
         "      - {request: r, driver: gpu.nvidia.com, pool: node0, device: '0'}\n"
         "  reservedFor: [{resource: pods, name: p0, uid: p0}]\n";
  }
  return s;
}

std::string Pod(const std::string& name, const std::string& claim, bool running) {
  std::string s = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                  ", namespace: default}\nspec:\n  schedulerName: kai-scheduler\n" +
                  (running ? "  nodeName: node0\n" : "") +
                  "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
                  "  resourceClaims: [{name: gpu, resourceClaimName: " +
                  claim + "}]\nstatus: {phase: " + (running ? "Running" : "Pending") + "}\n";
  return s;
}

TEST(DraView, SliceGpusJoinTheNodeAndASharedClaimIsChargedOnce) {
  const ClusterState state =
      testing::LoadDocs({kNode, kSlice, kClass, Claim("shared", true), Pod("p0", "shared", true),
                         Pod("p1", "shared", false)});
  const Snapshot snap = BuildSnapshot(state, 0);
  ASSERT_TRUE(snap.dra);
  EXPECT_EQ(snap.nodes[0].allocatable.milli_gpu, 2000);
  EXPECT_EQ(snap.pods[0].request.milli_gpu, 1000);  // the running owner
  EXPECT_EQ(snap.pods[1].request.milli_gpu, 0);     // shares the owner's device
  EXPECT_EQ(snap.nodes[0].idle.milli_gpu, 1000);
  const DraClaim& c = snap.dra->claims[0];
  EXPECT_TRUE(c.held);
  EXPECT_EQ(c.nodes, std::vector<DraNodeId>{0});
}

TEST(DraView, DevicesOfHeldClaimsAreNotFree) {
  const ClusterState state =
      testing::LoadDocs({kNode, kSlice, kClass, Claim("held", true), Pod("p0", "held", true)});
  const Snapshot snap = BuildSnapshot(state, 0);
  DeviceRequestSpec two{"r", "gpu.nvidia.com", DeviceAllocationMode::kExactCount, 2, {}, false};
  EXPECT_FALSE(MatchDevices(*snap.dra, 0, two, {}).enough);
  DeviceRequestSpec one = two;
  one.count = 1;
  const DeviceMatch m = MatchDevices(*snap.dra, 0, one, {});
  ASSERT_TRUE(m.enough);
  EXPECT_EQ(m.devices, std::vector<int32_t>{1});
}

TEST(DraView, AnAllocationNobodyHoldsIsStale) {
  // p0 is named in reservedFor but is pending: the allocation is free to redo.
  const ClusterState state =
      testing::LoadDocs({kNode, kSlice, kClass, Claim("stale", true), Pod("p0", "stale", false)});
  const Snapshot snap = BuildSnapshot(state, 0);
  EXPECT_FALSE(snap.dra->claims[0].held);
  EXPECT_EQ(snap.pods[0].request.milli_gpu, 1000);
  DeviceRequestSpec all{"r", "gpu.nvidia.com", DeviceAllocationMode::kAll, 1, {}, false};
  EXPECT_EQ(MatchDevices(*snap.dra, 0, all, {}).devices.size(), 2u);
}

TEST(DraView, GpuClassNamesAsKai) {
  EXPECT_TRUE(IsGpuDeviceClassName("gpu.nvidia.com"));
  EXPECT_TRUE(IsGpuDeviceClassName("nvidia.com/GPU"));
  EXPECT_FALSE(IsGpuDeviceClassName("other-device-class"));
}

}  // namespace
}  // namespace kai
