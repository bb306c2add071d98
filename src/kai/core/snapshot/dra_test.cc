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

// NVIDIA's compute-domain classes write their literals in single quotes.
TEST(DraCel, SingleQuotedLiteralsAsNvidiasClassesWriteThem) {
  SliceDevice channel;
  channel.name = "channel-0";
  channel.attributes["type"].string_value = "channel";
  channel.attributes["id"] = {DeviceAttribute::Kind::kInt, 0, false, ""};
  const std::string drv = "compute-domain.nvidia.com";
  const std::string cls =
      "device.driver == 'compute-domain.nvidia.com' && "
      "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
      "device.attributes['compute-domain.nvidia.com'].id == 0";
  EXPECT_TRUE(EvalDeviceSelector(cls, drv, channel).matches);
  channel.attributes["id"].int_value = 1;
  EXPECT_FALSE(EvalDeviceSelector(cls, drv, channel).matches);
  EXPECT_FALSE(EvalDeviceSelector(cls, "gpu.nvidia.com", channel).matches);
  // A literal kai cannot rewrite is reported as written.
  const CelOutcome o = EvalDeviceSelector("device.driver == 'a\"b'", drv, channel);
  EXPECT_EQ(o.unsupported, "device.driver == 'a\"b'");
}

DeviceConfig Config(std::string driver, std::vector<std::string> requests = {}) {
  return {DeviceConfigSource::kClaim, std::move(requests), std::move(driver), "{}"};
}

// Kubernetes' structured allocator (1.35): per request, its class's configs once (naming every
// request of the class), then the claim's, an entry naming requests once per request it names.
TEST(DraAllocationConfig, ClassConfigsOncePerClassThenTheClaimsPerRequest) {
  DeviceClassObject gpu, nic, plain;
  gpu.meta.name = "gpu";
  gpu.config = {Config("gpu.example.com"), Config("gpu.example.com/extra")};
  nic.meta.name = "nic";
  nic.config = {Config("nic.example.com")};
  plain.meta.name = "plain";
  const std::vector<DeviceRequestSpec> requests = {
      {"a", "gpu", DeviceAllocationMode::kExactCount, 1, {}, false},
      {"b", "plain", DeviceAllocationMode::kExactCount, 1, {}, false},
      {"c", "nic", DeviceAllocationMode::kExactCount, 1, {}, false},
      {"d", "gpu", DeviceAllocationMode::kAll, 1, {}, false},
      {"e", "", DeviceAllocationMode::kExactCount, 1, {}, true}};
  const std::vector<const DeviceClassObject*> classes = {&gpu, &plain, &nic, &gpu, nullptr};
  const std::vector<DeviceConfig> claim = {Config("x", {"c", "a"}), Config("y"),
                                           Config("z", {"e/sub"})};
  const std::vector<DeviceConfig> got = AllocationConfig(requests, classes, claim);
  std::vector<std::string> text;
  for (const DeviceConfig& c : got) {
    std::string line = (c.source == DeviceConfigSource::kClass ? "class " : "claim ") + c.driver;
    for (const std::string& r : c.requests) line += " " + r;
    text.push_back(line);
  }
  EXPECT_EQ(text, (std::vector<std::string>{
                      "class gpu.example.com a d", "class gpu.example.com/extra a d",
                      "class nic.example.com c", "claim x c a", "claim x c a", "claim y"}));
}

}  // namespace
}  // namespace kai
