// Background pods (label kai.scheduler/background=true): their places count as free, a workload
// that takes one evicts its pod with a verdict naming it, and the pods nobody displaced keep
// their places with the node's accounting as it was.
#include "kai/core/actions/common/background.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/cache.h"
#include "kai/core/snapshot/compare.h"
#include "kai/testing/manifest.h"

namespace kai::actions {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// n1 and n2 have 4 GPUs each. On n1 a background pod holds 2 GPUs (`health`, placed by another
// scheduler); on n2 another holds 1 (`probe`) next to a 3-GPU job. `train` wants 4 GPUs.
std::string World(const std::string& health_label) {
  return R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '32', memory: 100Gi, nvidia.com/gpu: '4', pods: '110'}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: '32', memory: 100Gi, nvidia.com/gpu: '4', pods: '110'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
spec:
  resources:
    gpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: busy, namespace: default}
spec: {queue: q1, minMember: 1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: train, namespace: default}
spec: {queue: q1, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: health
  namespace: default
  labels: {kai.scheduler/background: ')" +
         health_label + R"('}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '2'}, limits: {nvidia.com/gpu: '2'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: probe
  namespace: default
  labels: {kai.scheduler/background: 'true'}
spec:
  nodeName: n2
  containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: busy-0, namespace: default, annotations: {pod-group-name: busy}}
spec:
  schedulerName: kai-scheduler
  nodeName: n2
  containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '3'}, limits: {nvidia.com/gpu: '3'}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: default, annotations: {pod-group-name: train}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {requests: {cpu: '1', nvidia.com/gpu: '4'}, limits: {nvidia.com/gpu: '4'}}}]
status: {phase: Pending}
)";
}

class BackgroundTest : public ::testing::Test {
 protected:
  // One session of `actions` on the world, whose `health` pod carries `health_label`.
  const Session& Run(const std::string& health_label, std::vector<std::string> actions) {
    world_ = testutil::LoadManifest(World(health_label).c_str());
    SchedulerConfig config = ConfigFromShard(world_.shard).value();
    config.actions = std::move(actions);
    sim::SimulateOptions options;
    options.now = kNow;
    auto run = sim::RunSession(sim::BuildSimSnapshot(world_, options), config, {});
    EXPECT_TRUE(run.ok());
    session_ = std::move(run.value());
    return *session_;
  }
  PodId Pod(std::string_view name) const {
    const auto& pods = session_->snap().pods;
    for (PodId i = 0; i < static_cast<PodId>(pods.size()); ++i) {
      if (pods[i].name == name) return i;
    }
    ADD_FAILURE() << "no pod " << name;
    return kNone;
  }
  const SnapPod& PodNamed(std::string_view name) const { return session_->snap().pods[Pod(name)]; }
  const SnapNode& Node(std::string_view name) const {
    return session_->snap().nodes[session_->snap().node_by_name.at(name)];
  }

  ClusterState world_;
  std::unique_ptr<Session> session_;
};

TEST_F(BackgroundTest, AWorkloadTakesABackgroundPlaceAndTheVerdictNamesIt) {
  const Session& s = Run("true", {"allocate"});
  EXPECT_EQ(PodNamed("train-0").status, PodStatus::kPipelined);
  EXPECT_EQ(PodNamed("train-0").node, s.snap().node_by_name.at("n1"));
  EXPECT_EQ(PodNamed("health").status, PodStatus::kReleasing);
  EXPECT_EQ(s.Eviction(Pod("health")).kind, EvictionKind::kDisplaced);
  EXPECT_EQ(s.EvictionReason(Pod("health")),
            "background for default/train: a background pod, its place taken (its resources on "
            "node n1 went to pod default/train-0)");
  EXPECT_EQ(s.counters().evictions, 1);
  EXPECT_EQ(s.counters().pipelines, 1);
}

TEST_F(BackgroundTest, ABackgroundPodNobodyDisplacedKeepsItsPlaceAndItsNodeAsItWas) {
  const Session& s = Run("true", {"allocate"});
  const SnapPod& probe = PodNamed("probe");
  EXPECT_EQ(probe.status, PodStatus::kRunning);
  EXPECT_TRUE(s.Eviction(Pod("probe")).empty());
  const SnapNode& n2 = Node("n2");
  EXPECT_EQ(n2.idle.milli_gpu, 0);
  EXPECT_EQ(n2.releasing.milli_gpu, 0);
  EXPECT_EQ(n2.used.milli_gpu, 4000);
}

TEST_F(BackgroundTest, WithNoActionEveryBackgroundPodIsBackInPlace) {
  const Session& s = Run("true", {});
  EXPECT_EQ(PodNamed("health").status, PodStatus::kRunning);
  EXPECT_EQ(Node("n1").idle.milli_gpu, 2000);
  EXPECT_EQ(Node("n1").releasing.milli_gpu, 0);
  EXPECT_EQ(s.counters().evictions, 0);
}

TEST_F(BackgroundTest, BackgroundPlacesAreInTheFairShareAndInNoJob) {
  const Session& s = Run("true", {"allocate"});
  EXPECT_EQ(s.snap().fair_share_capacity.milli_gpu, 8000);  // the other scheduler's pods free
  EXPECT_TRUE(PodNamed("health").background);
  EXPECT_EQ(PodNamed("health").job, kNone);
}

TEST_F(BackgroundTest, AnotherLabelValueIsAnOrdinaryPodOfAnotherScheduler) {
  const Session& s = Run("false", {"allocate"});
  EXPECT_FALSE(PodNamed("health").background);
  EXPECT_EQ(PodNamed("health").status, PodStatus::kRunning);
  EXPECT_EQ(PodNamed("train-0").status, PodStatus::kPending);  // no room: n1 keeps 2 GPUs
  EXPECT_EQ(s.snap().fair_share_capacity.milli_gpu, 6000);
  EXPECT_EQ(s.counters().evictions, 0);
}

// The incremental snapshot keeps its list of background pods as a full build makes it, as pods
// gain and lose the label.
TEST(BackgroundSnapshotTest, TheCacheKeepsTheBackgroundPodsAsAFullBuild) {
  ClusterState world = testutil::LoadManifest(World("false").c_str());
  SnapshotCache cache;
  size_t health = 0, probe = 0;
  for (size_t i = 0; i < world.pods.size(); ++i) {
    if (world.pods[i].meta.name == "health") health = i;
    if (world.pods[i].meta.name == "probe") probe = i;
  }
  EXPECT_EQ(cache.Update(world, kNow, {}).background_pods,
            std::vector<PodId>{static_cast<PodId>(probe)});
  auto relabel = [&](size_t pod, const char* value) {
    world.pods[pod].meta.labels.insert_or_assign(InternedString("kai.scheduler/background"), value);
    ReadTypedLabels(world.pods[pod]);
    ClusterChanges changes;
    changes.pods = {pod};
    const Snapshot& got = cache.Update(world, kNow, changes);
    EXPECT_EQ(SnapshotDifference(BuildSnapshot(world, kNow), got), "");
    return got.background_pods;
  };
  const auto both = relabel(health, "true");
  EXPECT_EQ(both.size(), 2u);
  EXPECT_EQ(relabel(probe, "false"), std::vector<PodId>{static_cast<PodId>(health)});
}

}  // namespace
}  // namespace kai::actions
