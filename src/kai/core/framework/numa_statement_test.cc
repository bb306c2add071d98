// The NUMA zone ledger through Statement operations and their rollback (snapshot/numa.h).
#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/statement.h"
#include "kai/core/k8s/decode.h"
#include "kai/daemons/scheduler/decisions.h"
#include "kai/testing/manifest.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Node n1 has two 4-CPU zones (single-numa-node, pod scope); r0 runs on node-0 (observed), r1 on
// node-1 (predicted only); p is a pending Guaranteed 3-CPU pod.
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '100', memory: 100Gi, pods: '110'}
---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n1}
attributes:
- {name: topologyManagerPolicy, value: single-numa-node}
- {name: topologyManagerScope, value: pod}
zones:
- {name: node-0, type: Node, resources: [{name: cpu, allocatable: '4', available: '4'}]}
- {name: node-1, type: Node, resources: [{name: cpu, allocatable: '4', available: '4'}]}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {queue: q1}
---
apiVersion: v1
kind: Pod
metadata:
  name: r0
  annotations:
    pod-group-name: g
    kai.scheduler/numa-placement-observed: '[{"zone": "node-0", "amount": {"cpu": "3"}}]'
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {limits: {cpu: '3', memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: r1
  annotations:
    pod-group-name: g
    kai.scheduler/numa-placement-predicted: '[{"zone": "node-1", "amount": {"cpu": "2"}}]'
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {limits: {cpu: '2', memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {limits: {cpu: '3', memory: 1Gi}}}]
)";

ClusterState Load() { return testutil::LoadManifest(kCluster); }

class NumaStatementTest : public ::testing::Test {
 protected:
  NumaStatementTest() : state_(Load()), session_(BuildSnapshot(state_, kNow), SchedulerConfig{}) {
    session_.snap().numa.place = true;  // what the numa plugin does when the session opens
  }
  PodId Pod(std::string_view name) const {
    for (PodId i = 0; i < static_cast<PodId>(session_.snap().pods.size()); ++i) {
      if (session_.snap().pods[i].name == name) return i;
    }
    return kNone;
  }
  // Free CPUs (millicores) of zone node-<z>.
  int64_t Free(int z) const {
    return session_.snap().numa.topologies[0].zones[static_cast<size_t>(z)].available.milli_cpu;
  }
  const PodNuma& Placement(std::string_view pod) const {
    return session_.snap().numa.pods[static_cast<size_t>(Pod(pod))];
  }

  ClusterState state_;
  Session session_;
};

TEST_F(NumaStatementTest, SnapshotReconstructsTheLedgerFromRecords) {
  EXPECT_EQ(Free(0), 1000);
  EXPECT_EQ(Free(1), 2000);
  EXPECT_TRUE(Placement("r0").charged);
  EXPECT_EQ(NumaRecordOf(session_.snap(), Pod("r1")).at(0).zone, "node-1");
}

TEST_F(NumaStatementTest, AllocateChargesAndRollbackFrees) {
  Statement st(session_);
  st.Evict(Pod("r0"));  // frees node-0
  EXPECT_EQ(Free(0), 4000);
  const size_t cp = st.Checkpoint();
  st.Allocate(Pod("p"), session_.snap().node_by_name.at("n1"));
  EXPECT_EQ(Free(0), 1000);
  ASSERT_EQ(Placement("p").charges.size(), 1u);
  EXPECT_EQ(Placement("p").charges[0].zone, 0);
  st.Rollback(cp);
  EXPECT_EQ(Free(0), 4000);
  EXPECT_TRUE(Placement("p").charges.empty());
  st.Discard();  // the eviction too: r0 holds node-0 again, with its observed placement
  EXPECT_EQ(Free(0), 1000);
  EXPECT_EQ(Free(1), 2000);
  EXPECT_TRUE(Placement("r0").charged);
  EXPECT_EQ(Placement("r0").charges.at(0).zone, 0);
}

TEST_F(NumaStatementTest, PipelineOnReleasingZoneAndUndo) {
  Statement st(session_);
  st.Evict(Pod("r0"));
  st.Pipeline(Pod("p"), session_.snap().node_by_name.at("n1"));
  EXPECT_EQ(session_.snap().pods[Pod("p")].status, PodStatus::kPipelined);
  EXPECT_EQ(Free(0), 1000);
  st.Evict(Pod("r1"));  // a second eviction frees node-1 only
  EXPECT_EQ(Free(1), 4000);
  st.Discard();
  EXPECT_EQ(Free(0), 1000);
  EXPECT_EQ(Free(1), 2000);
}

TEST_F(NumaStatementTest, BindRequestCarriesThePredictedZones) {
  const std::vector<PodStatus> initial = scheduler::InitialStatuses(session_.snap());
  Statement st(session_);
  st.Evict(Pod("r0"));
  st.Allocate(Pod("p"), session_.snap().node_by_name.at("n1"));
  st.Commit();
  const scheduler::Decisions d = scheduler::ExtractDecisions(session_, initial, state_);
  ASSERT_EQ(d.binds.size(), 1u);
  ASSERT_EQ(d.binds[0].numa_zones.size(), 1u);
  EXPECT_EQ(d.binds[0].numa_zones[0].zone, "node-0");
  EXPECT_EQ(d.binds[0].numa_zones[0].amount.milli_cpu, 3000);
}

}  // namespace
}  // namespace kai
