#include "kai/core/snapshot/cache.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/testing.h"
#include "kai/core/snapshot/compare.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Two GPU nodes, a CPU node, two queues; a semi-preemptible gang, a SubGroup gang with a pod of an
// unknown SubGroup, shared-GPU pods in one GPU group, a pod being deleted.
constexpr const char* kWorld = R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.memory: '40000'}}
status: {allocatable: {cpu: '16', memory: 64Gi, nvidia.com/gpu: '4', pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {nvidia.com/gpu.memory: '40000'}}
status: {allocatable: {cpu: '16', memory: 64Gi, nvidia.com/gpu: '4', pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu}
status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110'}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 4, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec: {resources: {gpu: {quota: 4, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: semi, namespace: default}
spec: {queue: a, minMember: 1, preemptibility: semi-preemptible}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: tree, namespace: default}
spec:
  queue: b
  minMember: 2
  subGroups:
  - {name: x, minMember: 1}
  - {name: y, minMember: 1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: shared, namespace: default}
spec: {queue: b, minMember: 1}
)";

std::string Pod(const std::string& name, const std::string& group, const std::string& phase,
                const std::string& node, const std::string& extra_meta = "",
                const std::string& gpu = "1") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\n  namespace: default\n  creationTimestamp: '2025-01-01T10:00:00Z'\n" +
                  "  annotations: {pod-group-name: " + group + "}\n" + extra_meta +
                  "spec:\n  schedulerName: kai-scheduler\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  y += "  containers:\n  - name: c\n    resources:\n      requests: {cpu: '1'}\n";
  if (!gpu.empty()) y += "      limits: {nvidia.com/gpu: '" + gpu + "'}\n";
  return y + "status: {phase: " + phase + "}\n";
}

std::string SharedPod(const std::string& name, const std::string& phase, const std::string& node,
                      const std::string& group) {
  std::string meta = "  labels: {runai-gpu-group: " + group + "}\n";
  std::string y = Pod(name, "shared", phase, node, meta, "");
  const std::string key = "annotations: {pod-group-name: shared}";
  y.replace(y.find(key), key.size(), "annotations: {pod-group-name: shared, gpu-fraction: '0.5'}");
  return y;
}

ClusterState World() {
  return testing::LoadDocs({
      kWorld,
      Pod("semi-0", "semi", "Running", "n1"),
      Pod("semi-1", "semi", "Running", "n1"),
      Pod("semi-2", "semi", "Pending", ""),
      Pod("tree-x", "tree", "Running", "n2", "  labels: {kai.scheduler/subgroup-name: x}\n"),
      Pod("tree-y", "tree", "Pending", "", "  labels: {kai.scheduler/subgroup-name: y}\n"),
      Pod("tree-z", "tree", "Pending", "", "  labels: {kai.scheduler/subgroup-name: z}\n"),
      SharedPod("half-0", "Running", "n2", "g1"),
      SharedPod("half-1", "Running", "n2", "g1"),
      SharedPod("half-2", "Pending", "", ""),
      Pod("leaving", "shared", "Running", "n1", "  deletionTimestamp: '2025-01-01T11:59:00Z'\n"),
      Pod("cpu-0", "shared", "Running", "cpu", "", ""),
  });
}

// One object decoded on its own (no cross-object validation: its PodGroup or queue is elsewhere).
ClusterState Decoded(const std::string& doc) {
  ClusterState state;
  const auto errors = ProblemsOf(DecodeManifestText(doc, "test.yaml", state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  return state;
}

size_t PodIndex(const ClusterState& s, const std::string& name) {
  for (size_t i = 0; i < s.pods.size(); ++i) {
    if (s.pods[i].meta.name == name) return i;
  }
  ADD_FAILURE() << "no pod " << name;
  return 0;
}

// The cache's snapshot equals a full build of the same state.
void ExpectFresh(SnapshotCache& cache, const ClusterState& state, UnixSeconds now,
                 const ClusterChanges& changes) {
  const Snapshot& got = cache.Update(state, now, changes);
  EXPECT_EQ(SnapshotDifference(BuildSnapshot(state, now), got), "");
}

TEST(SnapshotCache, FirstUpdateBuildsInFullThenChangedPodsOnly) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 1);
  // A running pod finishes, a pending one starts on n2, a shared pod leaves its group.
  state.pods[PodIndex(state, "semi-0")].phase = "Succeeded";
  state.pods[PodIndex(state, "tree-y")].phase = "Running";
  state.pods[PodIndex(state, "tree-y")].node_name = "n2";
  state.pods[PodIndex(state, "half-0")].phase = "Succeeded";
  ClusterChanges changes;
  changes.pods = {PodIndex(state, "semi-0"), PodIndex(state, "tree-y"), PodIndex(state, "half-0")};
  ExpectFresh(cache, state, kNow, changes);
  EXPECT_EQ(cache.stats().full_builds, 1);
  EXPECT_EQ(cache.stats().incremental_updates, 1);
  EXPECT_EQ(cache.stats().pods_rederived, 3);
}

TEST(SnapshotCache, SemiPreemptibleFloorMovesToTheNextOldestPod) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  const size_t first = PodIndex(state, "semi-0");
  EXPECT_TRUE(cache.Update(state, kNow, {}).pods[first].in_floor);
  state.pods[first].phase = "Failed";
  ClusterChanges changes;
  changes.pods = {first};
  ExpectFresh(cache, state, kNow, changes);
  EXPECT_TRUE(cache.Update(state, kNow, {}).pods[PodIndex(state, "semi-1")].in_floor);
}

TEST(SnapshotCache, AppendedPodJoinsAPodGroupAppendedLater) {
  ClusterState state = World();
  state.pods.reserve(state.pods.size() + 4);
  state.pod_groups.reserve(state.pod_groups.size() + 4);
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  state.pods.push_back(Decoded(Pod("late-0", "late", "Pending", "")).pods.front());
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.Update(state, kNow, {}).pods.back().job, kNone);
  ClusterState pg = Decoded(R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: late, namespace: default}
spec: {queue: a, minMember: 1}
)");
  state.pod_groups.push_back(pg.pod_groups.front());
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.Update(state, kNow, {}).pods.back().job,
            static_cast<JobId>(state.pod_groups.size() - 1));
  EXPECT_EQ(cache.stats().full_builds, 1);
}

TEST(SnapshotCache, PodsVectorReallocatedIsRepointed) {
  ClusterState state = World();
  state.pods.shrink_to_fit();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  const auto* before = state.pods.data();
  for (int i = 0; i < 40; ++i) {
    state.pods.push_back(
        Decoded(Pod("more-" + std::to_string(i), "shared", "Pending", "")).pods.front());
  }
  ASSERT_NE(before, state.pods.data());
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 1);
}

TEST(SnapshotCache, BindRequestsMakeAPodBindingAndBack) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  ClusterState bind = Decoded(R"(
apiVersion: scheduling.run.ai/v1alpha2
kind: BindRequest
metadata: {name: semi-2-bind, namespace: default}
spec: {podName: semi-2, selectedNode: n2, receivedResourceType: Regular}
)");
  state.bind_requests = bind.bind_requests;
  ClusterChanges changes;
  changes.bind_requests = true;
  ExpectFresh(cache, state, kNow, changes);
  EXPECT_EQ(cache.Update(state, kNow, {}).pods[PodIndex(state, "semi-2")].status,
            PodStatus::kBinding);
  state.bind_requests.clear();
  ExpectFresh(cache, state, kNow, changes);
}

TEST(SnapshotCache, ClockMakesADeletedPodStuckInReleasing) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  const UnixSeconds later = kNow + keys::kStuckInReleasingSeconds + 60;
  ExpectFresh(cache, state, later, {});
  EXPECT_EQ(cache.Update(state, later, {}).pods[PodIndex(state, "leaving")].status,
            PodStatus::kStuckInReleasing);
}

TEST(SnapshotCache, ReturnedSnapshotForgetsTheSessionsChanges) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  Session session(cache.Lend(), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(session.OpenPlugins().ok());
  for (const char* a : {"allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"}) {
    FindAction(a)->make()->Execute(session);
  }
  ASSERT_GT(session.MovedPods().size(), 0u);
  cache.Return(session.TakeSnapshot(), session.MovedPods(), session.NodeChanges());
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 1);
}

TEST(SnapshotCache, StructuralChangesRebuild) {
  ClusterState state = World();
  SnapshotCache cache;
  ExpectFresh(cache, state, kNow, {});
  state.nodes.push_back(state.nodes.front());
  state.nodes.back().meta.name = "n3";
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 2);
  state.pods.pop_back();
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 3);
  ClusterChanges changes;
  changes.rebuild = true;
  ExpectFresh(cache, state, kNow, changes);
  EXPECT_EQ(cache.stats().full_builds, 4);
  // Lent and never returned: the next update cannot trust what it has.
  Snapshot lent = cache.Lend();
  ExpectFresh(cache, state, kNow, {});
  EXPECT_EQ(cache.stats().full_builds, 5);
}

int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// One random in-place change to a pod: what the object model of a live cluster sees.
void MutatePod(std::mt19937_64& rng, PodObject& pod) {
  static const char* const kPhases[] = {"Pending", "Running", "Succeeded", "Failed"};
  static const char* const kNodes[] = {"", "n1", "n2", "cpu", "gone"};
  static const char* const kGroups[] = {"semi", "tree", "shared", "late", "nowhere", ""};
  static const char* const kSets[] = {"", "x", "y", "z"};
  switch (Uniform(rng, 0, 6)) {
    case 0:
      pod.phase = kPhases[Uniform(rng, 0, 3)];
      break;
    case 1:
      pod.node_name = kNodes[Uniform(rng, 0, 4)];
      break;
    case 2:
      if (pod.meta.deletion) {
        pod.meta.deletion.reset();
      } else {
        pod.meta.deletion = kNow - Uniform(rng, 0, 3600);
      }
      break;
    case 3:
      pod.gpu_groups = {Uniform(rng, 0, 1) ? "g1" : "g2"};
      if (Uniform(rng, 0, 2) == 0) pod.gpu_groups.push_back("g3");
      break;
    case 4:
      pod.pod_group = kGroups[Uniform(rng, 0, 5)];
      break;
    case 5:
      pod.sub_group = kSets[Uniform(rng, 0, 3)];
      break;
    default:
      pod.scheduler_name = Uniform(rng, 0, 3) ? "kai-scheduler" : "default-scheduler";
      break;
  }
}

// Random sequences of pod changes, appended pods and PodGroups, BindRequests, clock moves and
// sessions lent and returned: after every step the cache equals a full build.
TEST(SnapshotCache, RandomChangesKeepItEqualToAFullBuild) {
  const ClusterState late_group = Decoded(R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: late, namespace: default}
spec: {queue: a, minMember: 2}
)");
  const ClusterState bind = Decoded(R"(
apiVersion: scheduling.run.ai/v1alpha2
kind: BindRequest
metadata: {name: b, namespace: default}
spec: {podName: semi-2, selectedNode: n1, selectedGPUGroups: [g2], receivedResourceType: Regular}
)");
  const SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  for (int seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    ClusterState state = World();
    state.pods.reserve(64);
    state.pod_groups.reserve(8);
    SnapshotCache cache;
    UnixSeconds now = kNow;
    for (int step = 0; step < 30; ++step) {
      ClusterChanges changes;
      const int kind = Uniform(rng, 0, 9);
      if (kind <= 4) {
        for (int n = Uniform(rng, 1, 3); n > 0; --n) {
          const auto i =
              static_cast<size_t>(Uniform(rng, 0, static_cast<int>(state.pods.size()) - 1));
          MutatePod(rng, state.pods[i]);
          changes.pods.push_back(i);
        }
      } else if (kind == 5 && state.pods.size() < 60) {
        PodObject pod = state.pods[Uniform(rng, 0, 10)];
        pod.meta.name = pod.meta.uid = "extra-" + std::to_string(step);
        state.pods.push_back(std::move(pod));
      } else if (kind == 6 && state.pod_groups.size() == 3) {
        state.pod_groups.push_back(late_group.pod_groups.front());
      } else if (kind == 7) {
        state.bind_requests =
            state.bind_requests.empty() ? bind.bind_requests : std::vector<BindRequestObject>{};
        changes.bind_requests = true;
      } else if (kind == 8) {
        now += Uniform(rng, 0, 1) * keys::kStuckInReleasingSeconds;
      } else {
        cache.Update(state, now, changes);
        Session session(cache.Lend(), config);
        ASSERT_TRUE(session.OpenPlugins().ok());
        for (const char* a : {"allocate", "reclaim", "preempt", "consolidation"}) {
          FindAction(a)->make()->Execute(session);
        }
        cache.Return(session.TakeSnapshot(), session.MovedPods(), session.NodeChanges());
        changes = {};
      }
      const Snapshot& got = cache.Update(state, now, changes);
      ASSERT_EQ(SnapshotDifference(BuildSnapshot(state, now), got), "")
          << "seed " << seed << " step " << step;
    }
    EXPECT_GE(cache.stats().incremental_updates, 25) << "seed " << seed;
  }
}

// A shared pod leaving its GPU group gives the node room for another pod on that GPU at once
// (max_group_room was only refreshed when pods were added, so a node looked fuller than it was).
TEST(SnapshotAccounting, SharedPodLeavingGivesItsGroupRoom) {
  const ClusterState state = World();
  Snapshot snap = BuildSnapshot(state, kNow);
  SnapNode& n2 = snap.nodes[snap.node_by_name.at("n2")];
  EXPECT_EQ(n2.max_group_room, 0);  // g1 holds two halves of a 40,000 MiB GPU
  const SnapPod& half = snap.pods[PodIndex(state, "half-0")];
  RemovePodFromNode(n2, half, half.status);
  EXPECT_EQ(n2.max_group_room, 20000);
  EXPECT_TRUE(AnyGroupFits(n2, 20000));
}

TEST(SnapshotDifference, NamesTheObjectAndTheField) {
  const ClusterState state = World();
  const Snapshot want = BuildSnapshot(state, kNow);
  Snapshot got = BuildSnapshot(state, kNow);
  EXPECT_EQ(SnapshotDifference(want, got), "");
  got.pods[0].status = PodStatus::kPending;
  got.nodes[1].idle.milli_gpu -= 500;
  got.jobs[1].sub_groups[1].active_allocated += 1;
  const std::string diff = SnapshotDifference(want, got);
  EXPECT_NE(diff.find("pod default/semi-0 (0): status Running != Pending"), std::string::npos)
      << diff;
  EXPECT_NE(diff.find("node n2 (1): idle"), std::string::npos) << diff;
  EXPECT_NE(diff.find("job default/tree (1) subgroup 1: active_allocated"), std::string::npos)
      << diff;
  EXPECT_EQ(SnapshotDifference(want, got, 1).find('\n'), diff.find('\n'));
}

}  // namespace
}  // namespace kai
