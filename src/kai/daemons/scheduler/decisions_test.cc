// The status events a cycle's decisions carry: KAI's NotReady, StaleJob and Pipelined.
#include "kai/daemons/scheduler/decisions.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/actions/common/background.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/decode.h"
#include "kai/testing/manifest.h"

namespace kai::scheduler {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Node n1 (8 CPUs). "short" wants 3 pods and has 2 (one gated); "stale" wants 2, runs 1 and
// carries the stale stamp; "big" runs r (6 CPUs) and "next" has a pending 4-CPU pod p.
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '8', memory: 100Gi, pods: '110'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: short, namespace: default}
spec: {queue: q1, minMember: 3}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: stale
  namespace: default
  annotations: {kai.scheduler/stale-podgroup-timestamp: '2025-01-01T11:59:00Z'}
spec: {queue: q1, minMember: 2}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: big, namespace: default}
spec: {queue: q1, minMember: 1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: next, namespace: default}
spec: {queue: q1, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: s0, uid: u-s0, annotations: {pod-group-name: short}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: s1, uid: u-s1, annotations: {pod-group-name: short}}
spec:
  schedulerName: kai-scheduler
  schedulingGates: [{name: wait}]
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: t0, uid: u-t0, annotations: {pod-group-name: stale}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: r, uid: u-r, annotations: {pod-group-name: big}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '6'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: p, uid: u-p, annotations: {pod-group-name: next}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '4'}}}]
status: {phase: Pending}
)";

ClusterState Load() { return testutil::LoadManifest(kCluster); }

class StatusEventsTest : public ::testing::Test {
 protected:
  StatusEventsTest()
      : state_(Load()),
        session_(BuildSnapshot(state_, kNow), SchedulerConfig{}),
        initial_(InitialStatuses(session_.snap())) {}
  PodId Pod(std::string_view name) const {
    for (PodId i = 0; i < static_cast<PodId>(session_.snap().pods.size()); ++i) {
      if (session_.snap().pods[i].name == name) return i;
    }
    return kNone;
  }
  const PodGroupDecision* Group(const Decisions& d, std::string_view name) const {
    for (const auto& g : d.pod_groups) {
      if (g.pod_group.name == name) return &g;
    }
    return nullptr;
  }

  ClusterState state_;
  Session session_;
  std::vector<PodStatus> initial_;
};

TEST_F(StatusEventsTest, AGangWithTooFewPodsIsNotReadyAndItsPodsGetNoUnschedulableEvent) {
  const Decisions d = ExtractDecisions(session_, initial_, state_);
  const PodGroupDecision* g = Group(d, "short");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->not_ready.has_value());
  EXPECT_EQ(*g->not_ready,
            "Job is not ready for scheduling. Waiting for 3 pods, currently 2 exist, 1 are gated");
  EXPECT_FALSE(g->unschedulable.has_value());
  for (const auto& p : d.pending) EXPECT_NE(p.pod_group.name, "short") << p.pod.name;
}

TEST_F(StatusEventsTest, AStampedGangBelowItsMinimumIsStale) {
  const Decisions d = ExtractDecisions(session_, initial_, state_);
  const PodGroupDecision* g = Group(d, "stale");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->stale.has_value());
  EXPECT_EQ(*g->stale, "Job is stale. 1 pods are active, minMember is 2");
  EXPECT_FALSE(g->not_ready.has_value());
  EXPECT_EQ(Group(d, "big"), nullptr);  // running at its minimum: nothing to say
}

TEST_F(StatusEventsTest, APodPipelinedOntoAReleasingNodeIsReported) {
  Statement st(session_);
  st.Evict(Pod("r"));
  st.Pipeline(Pod("p"), session_.snap().node_by_name.at("n1"));
  st.Commit();
  const Decisions d = ExtractDecisions(session_, initial_, state_);
  ASSERT_EQ(d.pipelined.size(), 1u);
  EXPECT_EQ(d.pipelined[0].pod.name, "p");
  EXPECT_EQ(d.pipelined[0].node, "n1");
  ASSERT_EQ(d.nominations.size(), 1u);  // and nominated, as before
  EXPECT_EQ(d.nominations[0].node, "n1");
}

// A background pod on n1 (its last CPU, another scheduler's) whose place "p" takes: its eviction is
// the scheduler's to write, with no PodGroup, as action "background".
TEST(BackgroundDecisionsTest, ADisplacedBackgroundPodIsEvictedWithItsReason) {
  std::string text = kCluster;
  text += R"(---
apiVersion: v1
kind: Pod
metadata: {name: health, uid: u-h, labels: {kai.scheduler/background: 'true'}}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
status: {phase: Running}
)";
  const ClusterState state = testutil::LoadManifest(text.c_str());
  Session session(BuildSnapshot(state, kNow), SchedulerConfig{});
  const std::vector<PodStatus> initial = InitialStatuses(session.snap());
  const std::vector<PodId> set_aside = actions::SetAsideBackgroundPods(session);
  ASSERT_EQ(set_aside.size(), 1u);
  PodId p = kNone;
  for (PodId i = 0; i < static_cast<PodId>(session.snap().pods.size()); ++i) {
    if (session.snap().pods[i].name == "p") p = i;
  }
  Statement st(session);
  st.Pipeline(p, session.snap().node_by_name.at("n1"));  // as if r were leaving too
  st.Commit();
  actions::SettleBackgroundPods(session, set_aside);
  const Decisions d = ExtractDecisions(session, initial, state);
  ASSERT_EQ(d.evictions.size(), 1u);
  const EvictDecision& e = d.evictions[0];
  EXPECT_EQ(e.pod.name, "health");
  EXPECT_EQ(e.pod_group.name, "");
  EXPECT_EQ(e.action, "background");
  EXPECT_EQ(e.preemptor.name, "next");
  EXPECT_EQ(e.message,
            "background for default/next: a background pod, its place taken (its resources on node "
            "n1 went to pod default/p)");
}

}  // namespace
}  // namespace kai::scheduler
