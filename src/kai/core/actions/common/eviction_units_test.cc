#include "kai/core/actions/common/eviction_units.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "kai/core/actions/common/solver.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/decode.h"

namespace kai::actions {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Gang g (minMember 2): g-0 runs on n1, g-1 is pending.
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110', nvidia.com/gpu: '2'}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110', nvidia.com/gpu: '2'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {queue: q1, minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: g-0, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: g-1, annotations: {pod-group-name: g}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]
)";

class EvictionUnitsTest : public ::testing::Test {
 protected:
  EvictionUnitsTest() : state_(Load()), session_(BuildSnapshot(state_, kNow), SchedulerConfig{}) {}

  static ClusterState Load() {
    ClusterState state;
    const auto errors = ProblemsOf(DecodeManifestText(kCluster, "test.yaml", state));
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
    return state;
  }
  PodId Pod(std::string_view name) const {
    for (PodId i = 0; i < static_cast<PodId>(session_.snap().pods.size()); ++i) {
      if (session_.snap().pods[i].name == name) return i;
    }
    ADD_FAILURE() << "no pod " << name;
    return kNone;
  }
  NodeId Node(std::string_view name) const { return session_.snap().node_by_name.at(name); }

  ClusterState state_;
  Session session_;
};

// A gang placed by an earlier solution of the same action (one pod Pipelined, one Running) is a
// victim with both pods, as KAI's GetTasksToEvict takes every active-allocated pod: evicting it
// leaves no lone pod running and no reservation behind.
TEST_F(EvictionUnitsTest, PipelinedPodOfAVictimGangLeavesWithTheGang) {
  Statement placed(session_);
  placed.Pipeline(Pod("g-1"), Node("n2"));
  placed.Commit();
  const JobId g = session_.snap().pods[Pod("g-0")].job;

  std::vector<PodId> evictable = EvictablePods(session_, g);
  std::sort(evictable.begin(), evictable.end());
  EXPECT_EQ(evictable, (std::vector<PodId>{Pod("g-0"), Pod("g-1")}));

  VictimJobPods victim(session_, g);
  std::vector<PodId> unit = victim.TakeUnit();
  std::sort(unit.begin(), unit.end());
  EXPECT_EQ(unit, evictable) << "a gang at its minimum leaves whole";
  EXPECT_TRUE(victim.Empty());

  Statement evict(session_);
  for (PodId p : unit) evict.Evict(p);
  EXPECT_EQ(session_.snap().jobs[g].active_allocated, 0);
  EXPECT_EQ(session_.snap().pods[Pod("g-1")].status, PodStatus::kPending);
  EXPECT_EQ(session_.snap().pods[Pod("g-0")].status, PodStatus::kReleasing);
}

// A job that gives all it runs in its first unit stands, before its pods are listed, at the gang
// level its pods would give; one the caller does not want is dropped unlisted and does not return.
TEST_F(EvictionUnitsTest, WholeJobUnitIsDroppedUnlistedWhenNotWanted) {
  Statement placed(session_);
  placed.Pipeline(Pod("g-1"), Node("n2"));
  placed.Commit();
  const JobId g = session_.snap().pods[Pod("g-0")].job;
  EXPECT_EQ(JobGangLevel(session_.snap().jobs[g]), VictimJobPods(session_, g).Level());

  VictimQueue dropping(session_, {g});
  EXPECT_TRUE(dropping.WholeAtOnce(g));
  std::vector<JobId> asked;
  const EvictionUnit none = dropping.Next([&](JobId j) {
    asked.push_back(j);
    return false;
  });
  EXPECT_EQ(asked, std::vector<JobId>{g});
  EXPECT_TRUE(none.dropped && none.job_done && none.pods.empty());
  EXPECT_TRUE(dropping.Empty());

  VictimQueue taking(session_, {g});
  EvictionUnit unit = taking.Next([](JobId) { return true; });
  // Listed without a VictimJobPods, in the order one gives (appended after what a buffer holds).
  EXPECT_EQ(unit.pods, VictimJobPods(session_, g).TakeUnit());
  std::vector<PodId> buffer = {kNone};
  VictimJobPods(session_, g).TakeUnit(buffer);
  EXPECT_EQ(std::vector<PodId>(buffer.begin() + 1, buffer.end()), unit.pods);
  std::sort(unit.pods.begin(), unit.pods.end());
  EXPECT_FALSE(unit.dropped);
  EXPECT_TRUE(unit.job_done);
  EXPECT_EQ(unit.pods, (std::vector<PodId>{Pod("g-0"), Pod("g-1")}));
  EXPECT_TRUE(taking.Empty());
}

}  // namespace
}  // namespace kai::actions
