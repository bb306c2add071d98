// GB200 ComputeDomains (NVIDIA's DRA driver, resource.nvidia.com/v1beta1) through a session: the
// IMEX pod of KAI's docs/dra/gpu-imex-pod.yaml takes a channel of its domain on a node of the
// domain, and its BindRequest's allocation carries the driver configuration as Kubernetes'
// structured allocator writes it (the classes' FromClass entries, then the claim's FromClaim).
#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/decode.h"
#include "kai/daemons/scheduler/decisions.h"
#include "kai/testing/manifest.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// The ComputeDomain imex-channel-injection (uid 5b0f...) spans gb200-0: the driver publishes its
// IMEX channels there (and a daemon device); gb200-1 is outside it. The domain's controller made
// the claim template imex-channel-0, and the resource claim controller the pod's claim from it.
constexpr const char* kDomain = R"(
apiVersion: v1
kind: Node
metadata: {name: gb200-0}
status: {allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '4'}}
---
apiVersion: v1
kind: Node
metadata: {name: gb200-1}
status: {allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '4'}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: compute-domain-default-channel.nvidia.com}
spec:
  selectors:
  - cel:
      expression: "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gb200-0-compute-domain.nvidia.com-x2x5c}
spec:
  driver: compute-domain.nvidia.com
  pool: {name: gb200-0, generation: 1, resourceSliceCount: 1}
  nodeName: gb200-0
  devices:
  - {name: channel-0, attributes: {type: {string: channel}, id: {int: 0}}}
  - {name: channel-1, attributes: {type: {string: channel}, id: {int: 1}}}
  - {name: daemon-0, attributes: {type: {string: daemon}, id: {int: 0}}}
---
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
            domainID: 5b0f6f4e-2c43-4a8e-9d2b-7f1e0c9a3d11
)";

// The pod's claim, as the resource claim controller made it from the template.
constexpr const char* kImexClaim = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu-imex-pod-imex-channel-0-x7k2p, namespace: default}
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
          domainID: 5b0f6f4e-2c43-4a8e-9d2b-7f1e0c9a3d11
)";

constexpr const char* kImexPod = R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: default-queue}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg-gpu-imex-pod, namespace: default}
spec: {queue: default-queue, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: gpu-imex-pod
  namespace: default
  labels: {kai.scheduler/queue: default-queue}
  annotations: {pod-group-name: pg-gpu-imex-pod}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: main
    image: ubuntu
    resources:
      limits: {nvidia.com/gpu: '1'}
      claims: [{name: imex-channel-0}]
  resourceClaims:
  - {name: imex-channel-0, resourceClaimTemplateName: imex-channel-0}
status:
  phase: Pending
  resourceClaimStatuses:
  - {name: imex-channel-0, resourceClaimName: gpu-imex-pod-imex-channel-0-x7k2p}
)";

// The world, the claim with `claim_status` (YAML of its status, or "").
std::string World(const std::string& claim_status = "", const std::string& more = "") {
  return std::string(kDomain) + "---\n" + kImexClaim + claim_status + "---\n" + kImexPod +
         (more.empty() ? "" : "---\n" + more);
}

constexpr const char* kDomainConfig =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"ComputeDomainChannelConfig",)"
    R"("domainID":"5b0f6f4e-2c43-4a8e-9d2b-7f1e0c9a3d11"})";

SchedulerConfig DraConfig() {
  SchedulerConfig c;
  c.plugins = {{"dynamicresources", 0, {}}};
  return c;
}

NodeId NodeNamed(const Session& s, std::string_view name) { return s.snap().node_by_name.at(name); }

PodId PodNamed(const Session& s, std::string_view name) {
  for (PodId i = 0; i < static_cast<PodId>(s.snap().pods.size()); ++i) {
    if (s.snap().pods[i].name == name) return i;
  }
  return kNone;
}

// Places the pod on `node` and returns its BindRequest's decision.
scheduler::BindDecision BindOn(const ClusterState& state, Session& session, std::string_view pod,
                               std::string_view node) {
  const std::vector<PodStatus> initial = scheduler::InitialStatuses(session.snap());
  Statement st(session);
  st.Allocate(PodNamed(session, pod), NodeNamed(session, node));
  st.Commit();
  const scheduler::Decisions d = scheduler::ExtractDecisions(session, initial, state);
  EXPECT_EQ(d.binds.size(), 1u);
  return d.binds.empty() ? scheduler::BindDecision{} : d.binds[0];
}

TEST(DraComputeDomain, TheImexPodFitsOnlyNodesOfItsDomain) {
  const ClusterState state = testutil::LoadManifest(World().c_str());
  Session session(BuildSnapshot(state, kNow), DraConfig());
  ASSERT_TRUE(session.OpenPlugins().ok());
  const PodId pod = PodNamed(session, "gpu-imex-pod");
  EXPECT_TRUE(session.CheckPredicates(pod, NodeNamed(session, "gb200-0")).Fits());
  const NodeVerdict outside = session.CheckPredicates(pod, NodeNamed(session, "gb200-1"));
  EXPECT_FALSE(outside.Fits());
  EXPECT_NE(outside.detail.find("compute-domain-default-channel.nvidia.com"), std::string::npos)
      << outside.detail;
}

TEST(DraComputeDomain, TheBindRequestCarriesTheChannelAndTheDomainConfig) {
  const ClusterState state = testutil::LoadManifest(World().c_str());
  Session session(BuildSnapshot(state, kNow), DraConfig());
  ASSERT_TRUE(session.OpenPlugins().ok());
  const scheduler::BindDecision b = BindOn(state, session, "gpu-imex-pod", "gb200-0");
  ASSERT_EQ(b.claims.size(), 1u);
  const DraClaimResult& c = b.claims[0];
  EXPECT_EQ(c.name, "imex-channel-0");
  EXPECT_EQ(c.node, "gb200-0");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0],
            (AllocatedDevice{"channel", "compute-domain.nvidia.com", "gb200-0", "channel-0"}));
  ASSERT_EQ(c.config.size(), 1u);
  EXPECT_EQ(
      c.config[0],
      (DeviceConfig{
          DeviceConfigSource::kClaim, {"channel"}, "compute-domain.nvidia.com", kDomainConfig}));
}

// A claim asking a GPU of a class an admin configured (time-slicing), the domain's channel, and a
// second GPU of the same class: the class's config once, for both GPU requests, first; then the
// claim's entries in their order.
constexpr const char* kGpuClassAndClaim = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
  config:
  - opaque:
      driver: gpu.nvidia.com
      parameters:
        apiVersion: resource.nvidia.com/v1beta1
        kind: GpuConfig
        sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: Long}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gb200-0-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  pool: {name: gb200-0}
  nodeName: gb200-0
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: trainer-devices, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
    - {name: channel, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}
    - {name: gpu-b, exactly: {deviceClassName: gpu.nvidia.com}}
    config:
    - requests: [channel]
      opaque:
        driver: compute-domain.nvidia.com
        parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: ComputeDomainChannelConfig, domainID: 5b0f6f4e-2c43-4a8e-9d2b-7f1e0c9a3d11}
    - opaque:
        driver: gpu.nvidia.com
        parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: MPS}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg-trainer, namespace: default}
spec: {queue: default-queue, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: default
  annotations: {pod-group-name: pg-trainer}
spec:
  schedulerName: kai-scheduler
  containers: [{name: main, resources: {claims: [{name: devices}]}}]
  resourceClaims: [{name: devices, resourceClaimName: trainer-devices}]
status: {phase: Pending}
)";

TEST(DraComputeDomain, ClassConfigsComeFirstThenTheClaimsInKubernetesOrder) {
  const ClusterState state = testutil::LoadManifest(World("", kGpuClassAndClaim).c_str());
  Session session(BuildSnapshot(state, kNow), DraConfig());
  ASSERT_TRUE(session.OpenPlugins().ok());
  const scheduler::BindDecision b = BindOn(state, session, "trainer", "gb200-0");
  ASSERT_EQ(b.claims.size(), 1u);
  const DraClaimResult& c = b.claims[0];
  ASSERT_EQ(c.devices.size(), 3u);
  EXPECT_EQ(c.devices[1].device, "channel-0");
  ASSERT_EQ(c.config.size(), 3u);
  EXPECT_EQ(c.config[0],
            (DeviceConfig{DeviceConfigSource::kClass,
                          {"gpu", "gpu-b"},
                          "gpu.nvidia.com",
                          R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig",)"
                          R"("sharing":{"strategy":"TimeSlicing","timeSlicingConfig":)"
                          R"({"interval":"Long"}}})"}));
  EXPECT_EQ(
      c.config[1],
      (DeviceConfig{
          DeviceConfigSource::kClaim, {"channel"}, "compute-domain.nvidia.com", kDomainConfig}));
  EXPECT_EQ(c.config[2].source, DeviceConfigSource::kClaim);
  EXPECT_TRUE(c.config[2].requests.empty());
  EXPECT_EQ(c.config[2].parameters,
            R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig",)"
            R"("sharing":{"strategy":"MPS"}})");
}

// A claim allocated before keeps the configuration its allocation has (KAI copies the claim's
// status.allocation into the BindRequest of a pod joining it).
TEST(DraComputeDomain, AnAllocatedClaimKeepsItsAllocationsConfig) {
  const std::string world = World(R"(status:
  allocation:
    devices:
      results: [{request: channel, driver: compute-domain.nvidia.com, pool: gb200-0, device: channel-0}]
      config:
      - source: FromClaim
        requests: [channel]
        opaque: {driver: compute-domain.nvidia.com, parameters: {domainID: written-before}}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [gb200-0]}]}]
  reservedFor: [{resource: pods, name: elsewhere, uid: u-elsewhere}]
)");
  const ClusterState state = testutil::LoadManifest(world.c_str());
  ASSERT_TRUE(state.dra.claims.at(0).allocated);
  Session session(BuildSnapshot(state, kNow), DraConfig());
  ASSERT_TRUE(session.OpenPlugins().ok());
  const scheduler::BindDecision b = BindOn(state, session, "gpu-imex-pod", "gb200-0");
  ASSERT_EQ(b.claims.size(), 1u);
  ASSERT_EQ(b.claims[0].config.size(), 1u);
  EXPECT_EQ(b.claims[0].config[0].parameters, R"({"domainID":"written-before"})");
}

// DRA-backed extended resources: the claim the binder makes gets its class's configuration
// (FromClass, naming the requests of the class), as the allocator gives it.
constexpr const char* kExtended = R"(
apiVersion: v1
kind: Node
metadata: {name: node0}
status: {allocatable: {cpu: '8', memory: 8G, pods: '110'}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.com}
spec:
  extendedResourceName: example.com/nic
  config:
  - opaque: {driver: nic.example.com, parameters: {kind: NicConfig, mtu: 9000}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node0-nics}
spec:
  driver: nic.example.com
  pool: {name: node0}
  nodeName: node0
  devices: [{name: nic-0}, {name: nic-1}]
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {queue: q, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  containers:
  - {name: a, resources: {limits: {example.com/nic: '1'}}}
  - {name: b, resources: {limits: {example.com/nic: '1'}}}
)";

TEST(DraExtendedConfig, TheBindersClaimGetsItsClassConfig) {
  const ClusterState state = testutil::LoadManifest(kExtended);
  Session session(BuildSnapshot(state, kNow), DraConfig());
  ASSERT_TRUE(session.OpenPlugins().ok());
  const scheduler::BindDecision b = BindOn(state, session, "p", "node0");
  ASSERT_TRUE(b.extended);
  ASSERT_EQ(b.extended->requests.size(), 2u);
  ASSERT_EQ(b.extended->config.size(), 1u);
  EXPECT_EQ(b.extended->config[0], (DeviceConfig{DeviceConfigSource::kClass,
                                                 {"container-0-request-0", "container-1-request-0"},
                                                 "nic.example.com",
                                                 R"({"kind":"NicConfig","mtu":9000})"}));
}

}  // namespace
}  // namespace kai
