#include "kai/core/snapshot/numa.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/reasons.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

std::string Nrt(const std::string& policy, const std::string& scope, const std::string& zone0,
                const std::string& zone1) {
  return R"(
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n1}
attributes:
- {name: topologyManagerPolicy, value: )" +
         policy + R"(}
- {name: topologyManagerScope, value: )" +
         scope + R"(}
zones:
- name: node-1
  type: Node
  resources: [)" +
         zone1 + R"(]
- {name: socket-0, type: Socket}
- name: node-0
  type: Node
  resources: [)" +
         zone0 + R"(]
)";
}

std::vector<std::string> Decode(const std::string& text, ClusterState& state) {
  return ProblemsOf(DecodeManifestText(text, "t.yaml", state));
}

TEST(NumaDecode, AttributesZonesAndAvailableDefault) {
  ClusterState state;
  const auto errors =
      Decode(Nrt("restricted", "pod", "{name: cpu, allocatable: '4', available: '1'}",
                 "{name: nvidia.com/gpu, allocatable: '2'}"),
             state);
  ASSERT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(state.node_topologies.size(), 1u);
  const NodeTopologyObject& t = state.node_topologies[0];
  EXPECT_EQ(t.policy, NumaPolicy::kRestricted);
  EXPECT_EQ(t.scope, NumaScope::kPod);
  ASSERT_EQ(t.zones.size(), 2u);  // the socket is dropped
  EXPECT_EQ(t.zones[1].name, "node-0");
  EXPECT_EQ(t.zones[1].allocatable.milli_cpu, 4000);
  EXPECT_EQ(t.zones[1].available.milli_cpu, 1000);
  EXPECT_EQ(t.zones[0].available.milli_gpu, 2000);  // available defaults to allocatable
}

TEST(NumaDecode, LegacyTopologyPolicies) {
  ClusterState state;
  const auto errors = Decode(R"(
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n1}
topologyPolicies: [SingleNUMANodePodLevel]
zones: [{name: node-0, type: Node, resources: [{name: cpu, allocatable: '4'}]}]
)",
                             state);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(state.node_topologies[0].policy, NumaPolicy::kSingleNumaNode);
  EXPECT_EQ(state.node_topologies[0].scope, NumaScope::kPod);
}

void ExpectError(const std::string& text, const std::string& field) {
  ClusterState state;
  const auto errors = Decode(text, state);
  ASSERT_FALSE(errors.empty()) << "expected an error on " << field;
  EXPECT_NE(errors.front().find(field), std::string::npos) << errors.front();
}

TEST(NumaDecode, MalformedObjectsNameTheField) {
  const std::string cpu = "{name: cpu, allocatable: '4'}";
  ExpectError(Nrt("sometimes", "pod", cpu, cpu),
              "NodeResourceTopology n1: attributes.topologyManagerPolicy");
  ExpectError(Nrt("restricted", "node", cpu, cpu), "attributes.topologyManagerScope");
  ExpectError(Nrt("restricted", "pod", "{name: cpu}", cpu), "zones[2].resources[0].allocatable");
  ExpectError(Nrt("restricted", "pod", "{name: cpu, allocatable: 'x4'}", cpu),
              "zones[2].resources[0].allocatable");
  ExpectError(Nrt("restricted", "pod", "{allocatable: '4'}", cpu), "zones[2].resources[0].name");
  ExpectError(R"(
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n1}
zones: [{name: node-0, type: Node}, {name: node-0, type: Node}]
)",
              "zones[1].name");
}

constexpr const char* kPodHead = R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
)";

TEST(NumaDecode, MalformedPlacementAnnotation) {
  ExpectError(std::string(kPodHead) + R"(    kai.scheduler/numa-placement-observed: 'zone-0'
spec: {containers: [{name: c}]}
)",
              "Pod default/p: metadata.annotations.kai.scheduler/numa-placement-observed");
  ExpectError(std::string(kPodHead) +
                  R"(    kai.scheduler/numa-placement-predicted: '[{"amount": {"cpu": "1"}}]'
spec: {containers: [{name: c}]}
)",
              "kai.scheduler/numa-placement-predicted[0].zone");
}

TEST(NumaDecode, PodRequestAndQos) {
  ClusterState state;
  const auto errors = Decode(
      std::string(kPodHead) +
          R"(    kai.scheduler/numa-placement-observed: '[{"zone": "node-0", "amount": {"cpu": "3"}}]'
spec:
  initContainers:
  - {name: init, resources: {limits: {cpu: '8', memory: 1Gi}}}
  - {name: side, restartPolicy: Always, resources: {limits: {cpu: '1', memory: 1Gi}}}
  containers:
  - {name: a, resources: {limits: {cpu: '2', memory: 1Gi, nvidia.com/gpu: '1'}}}
  - {name: b, resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 500m, memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: burstable}
spec: {containers: [{name: a, resources: {requests: {cpu: '2', nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: a, resources: {requests: {cpu: '2'}}}]}
)",
      state);
  ASSERT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(state.pods[0].numa.size(), 1u);
  const PodNumaRequest& g = state.pods[0].numa[0];
  EXPECT_TRUE(g.guaranteed);
  ASSERT_EQ(g.concurrent.size(), 3u);  // the sidecar and both app containers
  ASSERT_EQ(g.serial.size(), 1u);
  EXPECT_EQ(g.concurrent[2].milli_cpu, 0);  // 500m stays in the shared pool
  EXPECT_EQ(g.pod_scope.milli_cpu, 8000);   // max(1 + 2 + 0, the init container before the sidecar)
  EXPECT_EQ(g.pod_scope.milli_gpu, 1000);
  ASSERT_EQ(g.observed.size(), 1u);
  EXPECT_EQ(g.observed[0].amount.milli_cpu, 3000);
  ASSERT_EQ(state.pods[1].numa.size(), 1u);  // a device: aligned at any QoS
  EXPECT_FALSE(state.pods[1].numa[0].guaranteed);
  EXPECT_EQ(state.pods[1].numa[0].pod_scope.milli_cpu, 0);
  EXPECT_TRUE(state.pods[2].numa.empty());
}

// ---- admission ----

NodeNuma Topology(NumaPolicy policy, NumaScope scope, std::vector<int64_t> zone_cpus) {
  NodeTopologyObject obj;
  obj.policy = policy;
  obj.scope = scope;
  for (size_t z = 0; z < zone_cpus.size(); ++z) {
    NumaZoneObject zone{"node-" + std::to_string(z), {}, {}};
    zone.allocatable.milli_cpu = zone_cpus[z];
    zone.available.milli_cpu = zone_cpus[z];
    obj.zones.push_back(zone);
  }
  ClusterState state;
  NodeObject node;
  node.meta.name = "n1";
  state.nodes.push_back(node);
  obj.meta.name = "n1";
  state.node_topologies.push_back(obj);
  Snapshot snap = BuildSnapshot(state, kNow);
  NodeNuma t = snap.numa.topologies.at(0);
  for (NumaZone& z : t.zones) z.name = "";  // the names view `state`
  return t;
}

PodNumaRequest Guaranteed(std::vector<int64_t> container_cpus) {
  PodNumaRequest r;
  r.guaranteed = true;
  for (int64_t c : container_cpus) {
    Resources res;
    res.milli_cpu = c;
    r.concurrent.push_back(res);
    r.pod_scope.milli_cpu += c;
  }
  return r;
}

TEST(NumaFit, SingleNumaNodeTakesTheLowestFittingZone) {
  NodeNuma t = Topology(NumaPolicy::kSingleNumaNode, NumaScope::kPod, {4000, 4000});
  t.zones[0].available.milli_cpu = 2000;
  std::vector<NumaCharge> charges;
  const NumaFit fit = EvaluateNuma(t, Guaranteed({3000}), false, &charges);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.span, 1);
  ASSERT_EQ(charges.size(), 1u);
  EXPECT_EQ(charges[0].zone, 1);
  EXPECT_EQ(charges[0].amount.milli_cpu, 3000);
}

TEST(NumaArguments, IgnoreListDropsAResourceAndReportedAvailabilityCanBeTrusted) {
  NodeNuma t = Topology(NumaPolicy::kSingleNumaNode, NumaScope::kPod, {4000, 4000});
  t.zones[0].reported.milli_cpu = 1000;  // the exporter saw zone 0 nearly full
  NumaState numa;
  numa.topologies.push_back(t);
  ApplyNumaArguments(numa, {}, false);
  EXPECT_EQ(numa.topologies[0].zones[0].available.milli_cpu, 1000);
  EXPECT_EQ(numa.topologies[0].zones[1].available.milli_cpu, 4000);
  std::vector<NumaCharge> charges;
  ASSERT_TRUE(EvaluateNuma(numa.topologies[0], Guaranteed({3000}), false, &charges).fits);
  EXPECT_EQ(charges.at(0).zone, 1);
  // cpu ignored: nothing the pod asks is aligned, so any zone holds it.
  ApplyNumaArguments(numa, {"cpu"}, true);
  EXPECT_TRUE(numa.topologies[0].aware.empty());
  EXPECT_TRUE(EvaluateNuma(numa.topologies[0], Guaranteed({6000}), false, nullptr).fits);
}

TEST(NumaFit, SingleNumaNodeRejectsWhatNoZoneHolds) {
  const NodeNuma t = Topology(NumaPolicy::kSingleNumaNode, NumaScope::kPod, {4000, 4000});
  const NumaFit fit = EvaluateNuma(t, Guaranteed({6000}), false, nullptr);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.need, 6000);
  EXPECT_EQ(fit.best, 4000);
  EXPECT_EQ(fit.short_resource.Name(), "cpu");
}

TEST(NumaFit, RestrictedSplitsAcrossTheNarrowestMask) {
  const NodeNuma t = Topology(NumaPolicy::kRestricted, NumaScope::kPod, {4000, 4000, 4000});
  std::vector<NumaCharge> charges;
  const NumaFit fit = EvaluateNuma(t, Guaranteed({6000}), false, &charges);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.span, 2);
  ASSERT_EQ(charges.size(), 2u);
  EXPECT_EQ(charges[0].zone, 0);
  EXPECT_EQ(charges[0].amount.milli_cpu, 4000);
  EXPECT_EQ(charges[1].zone, 1);
  EXPECT_EQ(charges[1].amount.milli_cpu, 2000);
}

TEST(NumaFit, RestrictedRejectsWhenTheNarrowestMaskIsBusy) {
  NodeNuma t = Topology(NumaPolicy::kRestricted, NumaScope::kPod, {4000, 4000});
  t.zones[0].available.milli_cpu = 1000;
  t.zones[1].available.milli_cpu = 1000;
  // Width 1 is preferred (a zone's allocatable holds 3 CPUs), but no zone has 3 free now.
  EXPECT_FALSE(EvaluateNuma(t, Guaranteed({3000}), false, nullptr).fits);
  EXPECT_TRUE(EvaluateNuma(t, Guaranteed({3000}), true, nullptr).fits);  // the empty node
}

TEST(NumaFit, BestEffortCountsTheSpan) {
  const NodeNuma t = Topology(NumaPolicy::kBestEffort, NumaScope::kPod, {4000, 4000});
  EXPECT_EQ(EvaluateNuma(t, Guaranteed({6000}), false, nullptr).span, 2);
  EXPECT_EQ(EvaluateNuma(t, Guaranteed({3000}), false, nullptr).span, 1);
  EXPECT_FALSE(EvaluateNuma(t, Guaranteed({9000}), false, nullptr).fits);
}

TEST(NumaFit, ContainerScopeAlignsEachContainer) {
  const NodeNuma pod = Topology(NumaPolicy::kSingleNumaNode, NumaScope::kPod, {4000, 4000});
  const NodeNuma container =
      Topology(NumaPolicy::kSingleNumaNode, NumaScope::kContainer, {4000, 4000});
  EXPECT_FALSE(EvaluateNuma(pod, Guaranteed({3000, 3000}), false, nullptr).fits);
  std::vector<NumaCharge> charges;
  const NumaFit fit = EvaluateNuma(container, Guaranteed({3000, 3000}), false, &charges);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.span, 2);  // the second container finds zone 0 short and takes zone 1
  EXPECT_FALSE(EvaluateNuma(container, Guaranteed({3000, 3000, 3000}), false, nullptr).fits);
}

TEST(NumaFit, BurstablePodsAlignOnlyDevices) {
  const NodeNuma t = Topology(NumaPolicy::kSingleNumaNode, NumaScope::kPod, {4000, 4000});
  PodNumaRequest burstable = Guaranteed({6000});
  burstable.guaranteed = false;
  EXPECT_FALSE(NumaFiltered(t, burstable));
  EXPECT_TRUE(NumaFiltered(t, Guaranteed({6000})));
}

TEST(NumaReason, NamesTheBestZoneAcrossNodes) {
  const auto verdict = [](int64_t best, const char* node) {
    NodeVerdict v{FitCode::kNumaUnaligned, {}, node};
    v.shortage = {true, CoreResource::kGpu, 0, 4000, best};
    return v;
  };
  const std::vector<Reason> reasons = SummariseVerdicts(
      {verdict(1000, "node-3"), verdict(2000, "node-7"), verdict(2000, "node-9")});
  ASSERT_EQ(reasons.size(), 1u);
  const NodesReason* numa = reasons[0].As<NodesReason>();
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->nodes, 3);
  EXPECT_EQ(FitCodeName(numa->code), "NumaUnaligned");
  EXPECT_EQ(numa->best_node, "node-7");
  EXPECT_EQ(reasons[0].Message(),
            "no node has 4 nvidia.com/gpu in one NUMA zone (best: 2 on node-7)");
}

}  // namespace
}  // namespace kai
