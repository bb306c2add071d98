#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/encode.h"

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

// Kubernetes 1.26 to 1.30 wrote a pod's claim reference under `source`.
TEST(DecodeDra, PodClaimsReadTheOlderSourceForm) {
  ClusterState state;
  const std::string text = R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: test}
spec:
  containers: [{name: c}]
  resourceClaims:
  - {name: gpu, source: {resourceClaimTemplateName: gpu-template}}
  - {name: shared, source: {resourceClaimName: shared-claim}}
status:
  phase: Pending
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: p-gpu-abcde}
)";
  ASSERT_TRUE(Decode(text, state).empty());
  const auto& claims = state.pods[0].resource_claims;
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].template_name, "gpu-template");
  EXPECT_EQ(claims[0].claim_name, "p-gpu-abcde");
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

// NVIDIA's DRA driver for a ComputeDomain (resource.nvidia.com/v1beta1) makes a claim template
// whose request takes an IMEX channel of the domain and whose config names the domain.
constexpr const char* kComputeDomainTemplate = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: imex-channel-0, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: channel
        exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}
      config:
      - requests: [channel]
        opaque:
          driver: compute-domain.nvidia.com
          parameters:
            apiVersion: resource.nvidia.com/v1beta1
            kind: ComputeDomainChannelConfig
            domainID: 0f8e1c52-5d1e-4c39-9b7e-1e2d3c4b5a69
            allocationMode: Single
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  config:
  - opaque:
      driver: gpu.example.com
      parameters: {kind: GpuConfig, sharing: {strategy: TimeSlicing, replicas: 4}, mps: false}
)";

TEST(DecodeDra, ReadsOpaqueConfigOfTemplatesAndClassesAsJson) {
  ClusterState state;
  ASSERT_TRUE(Decode(kComputeDomainTemplate, state).empty());
  ASSERT_EQ(state.dra.templates.size(), 1u);
  const std::vector<DeviceConfig>& t = state.dra.templates[0].config;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].requests, std::vector<std::string>{"channel"});
  EXPECT_EQ(t[0].driver, "compute-domain.nvidia.com");
  EXPECT_EQ(t[0].parameters,
            R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"ComputeDomainChannelConfig",)"
            R"("domainID":"0f8e1c52-5d1e-4c39-9b7e-1e2d3c4b5a69","allocationMode":"Single"})");
  const std::vector<DeviceConfig>& c = state.dra.classes[0].config;
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].requests.empty());
  EXPECT_EQ(
      c[0].parameters,
      R"({"kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","replicas":4},"mps":false})");
}

// The API server's JSON: a claim's spec config and the allocation the binder wrote, parameters
// exactly as written (a string "4" stays a string, 1.50 keeps its text).
TEST(DecodeDra, ReadsAClaimsConfigAndItsAllocationsConfigFromJson) {
  ClusterState state;
  const std::string json = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"c","namespace":"default"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}],
      "config":[{"opaque":{"driver":"gpu.example.com","parameters":{"n":"4","f":1.50}}}]}},
    "status":{"allocation":{"devices":{
      "results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}],
      "config":[{"source":"FromClass","requests":["gpu"],
                 "opaque":{"driver":"gpu.example.com","parameters":{"kind":"GpuConfig"}}},
                {"source":"FromClaim",
                 "opaque":{"driver":"gpu.example.com","parameters":{"n":"4","f":1.50}}}]}}}})";
  const Status s = DecodeJsonText(json, "api", state);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ResourceClaimObject& c = state.dra.claims.at(0);
  ASSERT_EQ(c.config.size(), 1u);
  EXPECT_EQ(c.config[0].parameters, R"({"n":"4","f":1.50})");
  ASSERT_EQ(c.allocation_config.size(), 2u);
  EXPECT_EQ(c.allocation_config[0].source, DeviceConfigSource::kClass);
  EXPECT_EQ(c.allocation_config[0].requests, std::vector<std::string>{"gpu"});
  EXPECT_EQ(c.allocation_config[1].source, DeviceConfigSource::kClaim);
  EXPECT_EQ(c.allocation_config[1].parameters, c.config[0].parameters);
}

TEST(DecodeDra, BindRequestAllocationsCarryTheirConfig) {
  ClusterState state;
  const std::string text = R"(
apiVersion: scheduling.run.ai/v1alpha2
kind: BindRequest
metadata: {name: p, namespace: default}
spec:
  podName: p
  selectedNode: n1
  resourceClaimAllocations:
  - name: imex-channel-0
    allocation:
      devices:
        results: [{request: channel, driver: compute-domain.nvidia.com, pool: n1, device: channel-0}]
        config:
        - source: FromClaim
          requests: [channel]
          opaque: {driver: compute-domain.nvidia.com, parameters: {domainID: d-1}}
)";
  ASSERT_TRUE(Decode(text, state).empty());
  const ClaimAllocation& a = state.bind_requests.at(0).claim_allocations.at(0);
  ASSERT_EQ(a.config.size(), 1u);
  EXPECT_EQ(a.config[0].source, DeviceConfigSource::kClaim);
  EXPECT_EQ(a.config[0].parameters, R"({"domainID":"d-1"})");
}

std::string ClaimWithConfig(const std::string& config) {
  return R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: test}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: x}}]
    config: )" +
         config + "\n";
}

TEST(DecodeDra, MalformedConfigNamesTheObjectAndField) {
  ExpectError(ClaimWithConfig("[{opaque: {parameters: {a: 1}}}]"),
              "ResourceClaim test/bad: spec.devices.config[0].opaque.driver: missing");
  ExpectError(ClaimWithConfig("[{opaque: {driver: d}}]"),
              "ResourceClaim test/bad: spec.devices.config[0].opaque.parameters: missing");
  ExpectError(ClaimWithConfig("[{opaque: {driver: d, parameters: [1, 2]}}]"),
              "spec.devices.config[0].opaque.parameters: must be a JSON object");
  ExpectError(ClaimWithConfig("[{opaque: {driver: d, parameters: text}}]"),
              "spec.devices.config[0].opaque.parameters: must be a JSON object");
  ExpectError(
      ClaimWithConfig("[{requests: [r]}]"),
      "spec.devices.config[0].opaque: missing (kai reads opaque driver configuration only)");
  ExpectError(ClaimWithConfig("[{requests: [other], opaque: {driver: d, parameters: {}}}]"),
              "spec.devices.config[0].requests[0]: \"other\" is not a request of the claim");
  ExpectError(ClaimWithConfig("{opaque: {driver: d}}"), "spec.devices.config: expected a list");
  ExpectError(ClaimWithConfig("[{opaque: {driver: d, parameters: {blob: '" +
                              std::string(kMaxOpaqueParametersBytes, 'x') + "'}}}]"),
              "spec.devices.config[0].opaque.parameters: longer than the limit of 10240 bytes");
  std::string many = "[";
  for (size_t i = 0; i <= kMaxDeviceConfigs; ++i) many += "{opaque: {driver: d, parameters: {}}},";
  ExpectError(ClaimWithConfig(many + "]"),
              "spec.devices.config: 33 entries, more than the limit of 32");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: test}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x}}]}}
status:
  allocation:
    devices:
      results: []
      config: [{source: FromElsewhere, opaque: {driver: d, parameters: {}}}]
)",
              "status.allocation.devices.config[0].source: unknown source \"FromElsewhere\"");
  ExpectError(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {config: [{opaque: {driver: '', parameters: {}}}]}
)",
              "DeviceClass gpu: spec.config[0].opaque.driver: missing");
}

// /debug/snapshot's dump and `kai explain` read back the configuration as it was: a claim's spec
// and allocation, a template's, a class's and a BindRequest's allocation.
TEST(DecodeDra, DriverConfigRoundTripsThroughTheEncoder) {
  ClusterState a;
  const std::string text = std::string(kComputeDomainTemplate) + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests: [{name: channel, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}]
    config:
    - requests: [channel]
      opaque: {driver: compute-domain.nvidia.com, parameters: {s: '1', n: 1, f: 2.50, b: true, z: null, l: [x, 1]}}
status:
  allocation:
    devices:
      results: [{request: channel, driver: compute-domain.nvidia.com, pool: n1, device: channel-0}]
      config:
      - source: FromClaim
        requests: [channel]
        opaque: {driver: compute-domain.nvidia.com, parameters: {s: '1', n: 1}}
---
apiVersion: scheduling.run.ai/v1alpha2
kind: BindRequest
metadata: {name: p, namespace: default}
spec:
  podName: p
  selectedNode: n1
  resourceClaimAllocations:
  - name: imex-channel-0
    allocation:
      devices:
        results: [{request: channel, driver: compute-domain.nvidia.com, pool: n1, device: channel-0}]
        config:
        - {source: FromClass, requests: [channel], opaque: {driver: d, parameters: {k: v}}}
      nodeSelector:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
)";
  ASSERT_TRUE(Decode(text, a).empty());
  EXPECT_EQ(a.dra.claims[0].config[0].parameters,
            R"({"s":"1","n":1,"f":2.50,"b":true,"z":null,"l":["x",1]})");
  ClusterState b;
  const std::string encoded = EncodeManifests(a);
  ASSERT_TRUE(Decode(encoded, b).empty()) << encoded;
  EXPECT_EQ(b.dra.claims.at(0).config, a.dra.claims[0].config);
  EXPECT_EQ(b.dra.claims[0].allocation_config, a.dra.claims[0].allocation_config);
  EXPECT_EQ(b.dra.templates.at(0).config, a.dra.templates[0].config);
  EXPECT_EQ(b.dra.classes.at(0).config, a.dra.classes[0].config);
  ASSERT_EQ(b.bind_requests.size(), 1u);
  EXPECT_EQ(b.bind_requests[0].claim_allocations, a.bind_requests[0].claim_allocations);
  EXPECT_EQ(b.bind_requests[0].claim_allocations.at(0).node, "n1");
}

}  // namespace
}  // namespace kai
