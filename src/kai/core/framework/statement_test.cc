#include "kai/core/framework/statement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Node n1 (10 cpu) runs r1 (2 cpu) and r2 (3 cpu); n2 (10 cpu) is empty; p1..p3 are pending.
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110'}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: running, namespace: default}
spec: {queue: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pending, namespace: default}
spec: {queue: q1}
---
apiVersion: v1
kind: Pod
metadata: {name: r1, annotations: {pod-group-name: running}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '2', memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: r2, annotations: {pod-group-name: running}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '3', memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, annotations: {pod-group-name: pending}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p2, annotations: {pod-group-name: pending}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '2', memory: 2Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p3, annotations: {pod-group-name: pending}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '4', memory: 1Gi}}}]
)";

ClusterState LoadCluster() {
  ClusterState state;
  const auto errors = ProblemsOf(DecodeManifestText(kCluster, "test.yaml", state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  EXPECT_TRUE(ValidateCluster(state).ok());
  return state;
}

// What a statement must restore: node accounting and pod placement.
struct NodeState {
  Resources idle, releasing, used;
  std::vector<PodId> pods;  // sorted
  friend bool operator==(const NodeState&, const NodeState&) = default;
};
struct PodState {
  PodStatus status;
  NodeId node;
  bool virtually_evicted;
  friend bool operator==(const PodState&, const PodState&) = default;
};
struct State {
  std::vector<NodeState> nodes;
  std::vector<PodState> pods;
  std::vector<int> active_allocated;
  std::vector<int32_t> pending;  // Session::PendingPods per job
  friend bool operator==(const State&, const State&) = default;
};

State Capture(const Session& s) {
  State out;
  for (const auto& n : s.snap().nodes) {
    NodeState ns{n.idle, n.releasing, n.used, n.pods};
    std::sort(ns.pods.begin(), ns.pods.end());
    out.nodes.push_back(std::move(ns));
  }
  for (const auto& p : s.snap().pods) out.pods.push_back({p.status, p.node, p.virtually_evicted});
  for (const auto& j : s.snap().jobs) out.active_allocated.push_back(j.active_allocated);
  for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
    out.pending.push_back(s.PendingPods(j));
  }
  return out;
}

// Session::PendingPods as recounted from the pods' statuses.
std::vector<int32_t> RecountPending(const Session& s) {
  std::vector<int32_t> out(s.snap().jobs.size(), 0);
  for (const SnapPod& p : s.snap().pods) {
    if (p.job != kNone && p.status == PodStatus::kPending) ++out[p.job];
  }
  return out;
}

class StatementTest : public ::testing::Test {
 protected:
  StatementTest()
      : state_(LoadCluster()), session_(BuildSnapshot(state_, kNow), SchedulerConfig{}) {}

  PodId Pod(std::string_view name) const {
    for (PodId i = 0; i < static_cast<PodId>(session_.snap().pods.size()); ++i) {
      if (session_.snap().pods[i].name == name) return i;
    }
    ADD_FAILURE() << "no pod " << name;
    return kNone;
  }
  NodeId Node(std::string_view name) const { return session_.snap().node_by_name.at(name); }
  const SnapPod& P(std::string_view name) const { return session_.snap().pods[Pod(name)]; }
  const SnapNode& N(std::string_view name) const { return session_.snap().nodes[Node(name)]; }
  JobId Job(std::string_view name) const {
    for (JobId i = 0; i < static_cast<JobId>(session_.snap().jobs.size()); ++i) {
      if (session_.snap().jobs[i].name == name) return i;
    }
    ADD_FAILURE() << "no job " << name;
    return kNone;
  }

  ClusterState state_;
  Session session_;
};

TEST_F(StatementTest, InitialAccounting) {
  EXPECT_EQ(N("n1").idle.milli_cpu, 5000);
  EXPECT_EQ(N("n1").used.milli_cpu, 5000);
  EXPECT_EQ(N("n1").releasing.milli_cpu, 0);
  EXPECT_EQ(P("r1").status, PodStatus::kRunning);
  EXPECT_EQ(P("p1").status, PodStatus::kPending);
}

TEST_F(StatementTest, AllocateTakesIdle) {
  Statement st(session_);
  st.Allocate(Pod("p1"), Node("n2"));
  EXPECT_EQ(P("p1").status, PodStatus::kAllocated);
  EXPECT_EQ(P("p1").node, Node("n2"));
  EXPECT_EQ(N("n2").idle.milli_cpu, 9000);
  EXPECT_EQ(N("n2").used.milli_cpu, 1000);
  EXPECT_EQ(N("n2").pods, std::vector<PodId>{Pod("p1")});
  EXPECT_EQ(session_.snap().jobs[Job("pending")].active_allocated, 1);
  EXPECT_EQ(st.AllocatedPods(), std::vector<PodId>{Pod("p1")});
}

TEST_F(StatementTest, EvictMovesResourcesToReleasing) {
  Statement st(session_);
  st.Evict(Pod("r1"));
  EXPECT_EQ(P("r1").status, PodStatus::kReleasing);
  EXPECT_EQ(P("r1").node, Node("n1"));
  EXPECT_EQ(N("n1").idle.milli_cpu, 5000);
  EXPECT_EQ(N("n1").releasing.milli_cpu, 2000);
  EXPECT_EQ(N("n1").used.milli_cpu, 5000);
  EXPECT_EQ(session_.snap().jobs[Job("running")].active_allocated, 1);
}

TEST_F(StatementTest, EvictionIsVirtualUntilCommitted) {
  Statement st(session_);
  EXPECT_FALSE(P("r1").virtually_evicted);
  st.Evict(Pod("r1"));
  EXPECT_TRUE(P("r1").virtually_evicted);
  const size_t cp = st.Checkpoint();
  st.Evict(Pod("r2"));
  st.Rollback(cp);
  EXPECT_TRUE(P("r1").virtually_evicted);
  EXPECT_FALSE(P("r2").virtually_evicted);
  st.Commit();
  EXPECT_FALSE(P("r1").virtually_evicted);
  EXPECT_EQ(P("r1").status, PodStatus::kReleasing);
}

TEST_F(StatementTest, PipelineTakesReleasing) {
  Statement st(session_);
  st.Evict(Pod("r2"));
  st.Pipeline(Pod("p2"), Node("n1"));
  EXPECT_EQ(P("p2").status, PodStatus::kPipelined);
  EXPECT_EQ(P("p2").node, Node("n1"));
  EXPECT_EQ(N("n1").releasing.milli_cpu, 1000);
  EXPECT_EQ(N("n1").idle.milli_cpu, 5000);
  EXPECT_EQ(N("n1").used.milli_cpu, 7000);
  EXPECT_TRUE(st.HasPipelined(Job("pending")));
  EXPECT_FALSE(st.HasPipelined(Job("running")));
}

TEST_F(StatementTest, RollbackToCheckpointRestoresExactly) {
  Statement st(session_);
  st.Allocate(Pod("p1"), Node("n2"));
  const State at_checkpoint = Capture(session_);
  const size_t cp = st.Checkpoint();
  st.Evict(Pod("r1"));
  st.Evict(Pod("r2"));
  st.Pipeline(Pod("p3"), Node("n1"));
  st.Allocate(Pod("p2"), Node("n1"));
  ASSERT_NE(Capture(session_), at_checkpoint);
  st.Rollback(cp);
  EXPECT_EQ(Capture(session_), at_checkpoint);
  EXPECT_EQ(P("p1").status, PodStatus::kAllocated);
  EXPECT_EQ(P("r1").status, PodStatus::kRunning);
  EXPECT_EQ(P("p3").status, PodStatus::kPending);
  EXPECT_EQ(P("p3").node, kNone);
  EXPECT_EQ(st.Checkpoint(), cp);
}

TEST_F(StatementTest, PendingCountsFollowEveryMoveAndRollback) {
  EXPECT_EQ(session_.PendingPods(Job("pending")), 3);
  EXPECT_EQ(session_.PendingPods(Job("running")), 0);
  Statement st(session_);
  st.Allocate(Pod("p1"), Node("n2"));
  EXPECT_EQ(session_.PendingPods(Job("pending")), 2);
  const size_t cp = st.Checkpoint();
  st.Evict(Pod("r1"));
  st.Pipeline(Pod("p3"), Node("n1"));
  EXPECT_EQ(Capture(session_).pending, RecountPending(session_));
  st.Rollback(cp);
  EXPECT_EQ(Capture(session_).pending, RecountPending(session_));
  EXPECT_EQ(session_.PendingPods(Job("pending")), 2);
  st.Discard();
  EXPECT_EQ(session_.PendingPods(Job("pending")), 3);
}

TEST_F(StatementTest, NestedCheckpoints) {
  Statement st(session_);
  const State s0 = Capture(session_);
  st.Evict(Pod("r1"));
  const size_t c1 = st.Checkpoint();
  const State s1 = Capture(session_);
  st.Pipeline(Pod("p1"), Node("n1"));
  const size_t c2 = st.Checkpoint();
  const State s2 = Capture(session_);
  st.Allocate(Pod("p2"), Node("n2"));
  st.Rollback(c2);
  EXPECT_EQ(Capture(session_), s2);
  st.Rollback(c1);
  EXPECT_EQ(Capture(session_), s1);
  st.Rollback(0);
  EXPECT_EQ(Capture(session_), s0);
}

TEST_F(StatementTest, DiscardUndoesEverything) {
  const State before = Capture(session_);
  Statement st(session_);
  st.Allocate(Pod("p1"), Node("n1"));
  st.Evict(Pod("r2"));
  st.Pipeline(Pod("p3"), Node("n1"));
  st.Allocate(Pod("p2"), Node("n2"));
  st.Discard();
  EXPECT_EQ(Capture(session_), before);
  EXPECT_EQ(st.Checkpoint(), 0u);
  EXPECT_TRUE(st.AllocatedPods().empty());
}

TEST_F(StatementTest, DestructorDiscardsUncommittedOperations) {
  const State before = Capture(session_);
  {
    Statement st(session_);
    st.Allocate(Pod("p1"), Node("n1"));
    st.Evict(Pod("r1"));
  }
  EXPECT_EQ(Capture(session_), before);
}

TEST_F(StatementTest, CommitTurnsAllocatedIntoBindingAndCounts) {
  {
    Statement st(session_);
    st.Allocate(Pod("p1"), Node("n2"));
    st.Allocate(Pod("p2"), Node("n2"));
    st.Evict(Pod("r2"));
    st.Pipeline(Pod("p3"), Node("n1"));
    st.Commit();
    EXPECT_EQ(st.Checkpoint(), 0u);
  }
  // The destructor of a committed statement changes nothing.
  EXPECT_EQ(P("p1").status, PodStatus::kBinding);
  EXPECT_EQ(P("p2").status, PodStatus::kBinding);
  EXPECT_EQ(P("r2").status, PodStatus::kReleasing);
  EXPECT_EQ(P("p3").status, PodStatus::kPipelined);
  EXPECT_EQ(session_.counters().binds, 2);
  EXPECT_EQ(session_.counters().evictions, 1);
  EXPECT_EQ(session_.counters().pipelines, 1);
  // Binding keeps Allocated's accounting.
  EXPECT_EQ(N("n2").idle.milli_cpu, 7000);
  EXPECT_EQ(N("n2").used.milli_cpu, 3000);
  EXPECT_EQ(N("n1").releasing.milli_cpu, -1000);  // p3 (4) pipelined onto r2's 3 releasing
}

TEST_F(StatementTest, CommitDoesNotCountRolledBackOperations) {
  Statement st(session_);
  st.Allocate(Pod("p1"), Node("n2"));
  const size_t cp = st.Checkpoint();
  st.Evict(Pod("r1"));
  st.Pipeline(Pod("p2"), Node("n1"));
  st.Rollback(cp);
  st.Commit();
  EXPECT_EQ(session_.counters().binds, 1);
  EXPECT_EQ(session_.counters().evictions, 0);
  EXPECT_EQ(session_.counters().pipelines, 0);
}

TEST_F(StatementTest, CountersAccumulateOverStatements) {
  {
    Statement st(session_);
    st.Allocate(Pod("p1"), Node("n2"));
    st.Commit();
  }
  {
    Statement st(session_);
    st.Allocate(Pod("p2"), Node("n2"));
    st.Commit();
  }
  EXPECT_EQ(session_.counters().binds, 2);
}

TEST_F(StatementTest, PipelineEvictedPodBackOnItsNodeUnEvictsIt) {
  const State before = Capture(session_);
  Statement st(session_);
  st.Evict(Pod("r1"));
  EXPECT_EQ(P("r1").status, PodStatus::kReleasing);
  st.Pipeline(Pod("r1"), Node("n1"));
  EXPECT_EQ(P("r1").status, PodStatus::kRunning);
  EXPECT_EQ(P("r1").node, Node("n1"));
  EXPECT_EQ(Capture(session_), before);
  EXPECT_FALSE(st.HasPipelined(Job("running")));
  st.Commit();
  EXPECT_EQ(P("r1").status, PodStatus::kRunning);
  EXPECT_EQ(session_.counters().evictions, 0);
  EXPECT_EQ(session_.counters().pipelines, 0);
  EXPECT_EQ(Capture(session_), before);
}

TEST_F(StatementTest, UnEvictionRollsBackToEvicted) {
  Statement st(session_);
  st.Evict(Pod("r1"));
  const size_t cp = st.Checkpoint();
  const State evicted = Capture(session_);
  st.Pipeline(Pod("r1"), Node("n1"));
  st.Rollback(cp);
  EXPECT_EQ(Capture(session_), evicted);
  EXPECT_EQ(P("r1").status, PodStatus::kReleasing);
}

TEST_F(StatementTest, PipelineEvictedPodOnAnotherNodeIsAPipeline) {
  Statement st(session_);
  st.Evict(Pod("r1"));
  st.Pipeline(Pod("r1"), Node("n2"));
  EXPECT_EQ(P("r1").status, PodStatus::kPipelined);
  EXPECT_EQ(P("r1").node, Node("n2"));
  EXPECT_EQ(N("n1").used.milli_cpu, 3000);
  EXPECT_EQ(N("n1").releasing.milli_cpu, 0);
  EXPECT_EQ(N("n2").releasing.milli_cpu, -2000);
  st.Discard();
  EXPECT_EQ(P("r1").status, PodStatus::kRunning);
  EXPECT_EQ(P("r1").node, Node("n1"));
}

// A pod placed back on its node, then restarted with its gang: it keeps its place (pipelined
// there, the node's accounting as before), is counted once as evicted and once as pipelined, and
// a rollback gives back the un-evicted pod.
TEST_F(StatementTest, RestartKeepsThePlaceAndCountsOnce) {
  const State before = Capture(session_);
  Statement st(session_);
  st.Evict(Pod("r1"));
  st.Pipeline(Pod("r1"), Node("n1"));  // un-evicted
  const size_t cp = st.Checkpoint();
  st.Restart(Pod("r1"));
  EXPECT_EQ(P("r1").status, PodStatus::kPipelined);
  EXPECT_EQ(P("r1").node, Node("n1"));
  // Room for others on n1 is what it was: 5 cpu (a pipelined pod takes from releasing).
  EXPECT_EQ(N("n1").idle.milli_cpu + N("n1").releasing.milli_cpu, 5000);
  EXPECT_EQ(session_.snap().jobs[Job("running")].active_allocated, 2);
  st.Rollback(cp);
  EXPECT_EQ(Capture(session_), before);
  st.Restart(Pod("r1"));
  st.Commit();
  EXPECT_EQ(P("r1").status, PodStatus::kPipelined);
  EXPECT_EQ(session_.counters().evictions, 1);
  EXPECT_EQ(session_.counters().pipelines, 1);
}

}  // namespace
}  // namespace kai
