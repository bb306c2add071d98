#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"

namespace kai {
namespace {

std::vector<std::string> Decode(const std::string& text, ClusterState& state) {
  return ProblemsOf(DecodeManifestText(text, "dra.yaml", state));
}

constexpr const char* kClaim = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu-claim, namespace: test, labels: {kai.scheduler/queue: q1}}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu.nvidia.com
        allocationMode: ExactCount
        count: 2
        selectors:
        - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
status:
  allocation:
    devices:
      results:
      - {request: gpus, driver: gpu.nvidia.com, pool: node0, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node0]}]
  reservedFor:
  - {resource: pods, name: p0, uid: p0}
)";

TEST(DecodeDra, ReadsAClaimWithItsAllocation) {
  ClusterState state;
  ASSERT_TRUE(Decode(kClaim, state).empty());
  ASSERT_EQ(state.dra.claims.size(), 1u);
  const ResourceClaimObject& c = state.dra.claims[0];
  ASSERT_EQ(c.requests.size(), 1u);
  EXPECT_EQ(c.requests[0].device_class, "gpu.nvidia.com");
  EXPECT_EQ(c.requests[0].count, 2);
  EXPECT_EQ(c.requests[0].selectors.size(), 1u);
  EXPECT_TRUE(c.allocated);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].device, "gpu-0");
  EXPECT_EQ(c.selector_nodes, std::vector<std::string>{"node0"});
  EXPECT_FALSE(c.selector_any_node);
  ASSERT_EQ(c.reserved_for.size(), 1u);
  EXPECT_EQ(c.reserved_for[0].name, "p0");
}

TEST(DecodeDra, ReadsV1beta1FlatRequestsAndBasicDevices) {
  ClusterState state;
  const std::string text = R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: test}
spec:
  devices:
    requests:
    - {name: r, deviceClassName: gpu.nvidia.com, allocationMode: All}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  pool: {name: node0, resourceSliceCount: 1}
  nodeName: node0
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: H100}, index: {int: 0}}
      capacity: {memory: {value: 80Gi}}
)";
  ASSERT_TRUE(Decode(text, state).empty());
  EXPECT_EQ(state.dra.claims[0].requests[0].mode, DeviceAllocationMode::kAll);
  const SliceDevice& d = state.dra.slices[0].devices[0];
  EXPECT_EQ(d.attributes.at("model").string_value, "H100");
  EXPECT_EQ(d.attributes.at("index").kind, DeviceAttribute::Kind::kInt);
  EXPECT_EQ(d.capacity.at("memory"), int64_t{80} << 30);
}

TEST(DecodeDra, PodClaimsResolveTemplateNamesFromStatus) {
  ClusterState state;
  const std::string text = R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: test}
spec:
  containers: [{name: c}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: gpu-template}
  - {name: shared, resourceClaimName: shared-claim}
status:
  phase: Pending
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: p-gpu-abcde}
)";
  ASSERT_TRUE(Decode(text, state).empty());
  const auto& claims = state.pods[0].resource_claims;
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].claim_name, "p-gpu-abcde");
  EXPECT_TRUE(claims[0].FromTemplate());
  EXPECT_EQ(claims[1].claim_name, "shared-claim");
}

void ExpectError(const std::string& text, const std::string& needle) {
  ClusterState state;
  const auto errors = Decode(text, state);
  ASSERT_FALSE(errors.empty()) << "expected an error containing " << needle;
  EXPECT_NE(errors[0].find(needle), std::string::npos) << errors[0];
}

TEST(DecodeDra, MalformedObjectsNameTheObjectAndField) {
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: test}
spec: {devices: {requests: [{name: r, exactly: {allocationMode: ExactCount}}]}}
)",
              "ResourceClaim test/bad: spec.devices.requests[0].exactly.deviceClassName: missing");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: test}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x, allocationMode: Some}}]}}
)",
              "allocationMode: unknown mode \"Some\"");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: test}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x, count: 0}}]}}
)",
              "count: must be an integer of at least 1");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {pool: {name: p}, nodeName: n, devices: [{name: d}]}
)",
              "ResourceSlice s: spec.driver: missing");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, pool: {name: p}, devices: [{name: d, capacity: {memory: {value: lots}}}]}
)",
              "spec.devices[0].capacity.memory.value");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {}}]}
)",
              "DeviceClass gpu: spec.selectors[0].cel.expression: missing");
  ExpectError(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: test}
spec:
  containers: [{name: c}]
  resourceClaims: [{name: gpu}]
)",
              "Pod test/p: spec.resourceClaims[0]: needs exactly one of");
  ExpectError(R"(
apiVersion: resource.k8s.io/v2
kind: ResourceClaim
metadata: {name: c, namespace: test}
spec: {}
)",
              "unsupported apiVersion");
}

}  // namespace
}  // namespace kai
