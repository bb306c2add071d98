// Semi-preemptible PodGroups: which pods form the protected floor, how the floor is charged to
// quota, and that disruptive actions only take pods above it.
#include "kai/core/snapshot/semi_preemptible.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "kai/core/actions/common/eviction_units.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/testing.h"
#include "kai/core/plugins/proportion/proportion.h"
#include "kai/core/sim/simulator.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kGpu = kMilliPerUnit;

std::string Node(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus:\n  allocatable: {cpu: '32', memory: 256Gi, nvidia.com/gpu: '" +
         std::to_string(gpus) + "', pods: '110'}\n";
}

// A leaf queue with a GPU quota (no limit) and over-quota weight; cpu/memory unlimited.
std::string Queue(const std::string& name, int gpu_quota, int weight = 1) {
  return "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec:\n  resources:\n    gpu: {quota: " + std::to_string(gpu_quota) +
         ", limit: -1, overQuotaWeight: " + std::to_string(weight) +
         "}\n    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
         "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n";
}

// min_member < 0: spec.minMember left out.
std::string PodGroup(const std::string& name, const std::string& queue, int min_member,
                     const std::string& preemptibility = "semi-preemptible",
                     const std::string& extra_spec = "") {
  std::string pg =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: default, creationTimestamp: '2025-01-01T10:00:00Z', annotations: "
      "{kai.scheduler/last-start-timestamp: '2025-01-01T10:00:00Z'}}\nspec:\n  queue: " +
      queue + "\n";
  if (min_member >= 0) pg += "  minMember: " + std::to_string(min_member) + "\n";
  if (!preemptibility.empty()) pg += "  preemptibility: " + preemptibility + "\n";
  return pg + extra_spec;
}

// A 1-GPU pod created at 11:<minute>, Running on `node` (Pending when empty).
std::string Pod(const std::string& name, const std::string& group, int minute,
                const std::string& node = "", const std::string& sub_group = "") {
  char created[32];
  std::snprintf(created, sizeof created, "2025-01-01T11:%02d:00Z", minute);
  std::string p = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\n  namespace: default\n  creationTimestamp: '" + created +
                  "'\n  annotations: {pod-group-name: " + group + "}\n";
  if (!sub_group.empty()) p += "  labels: {kai.scheduler/subgroup-name: " + sub_group + "}\n";
  p += "spec:\n  schedulerName: kai-scheduler\n";
  if (!node.empty()) p += "  nodeName: " + node + "\n";
  p += "  containers:\n  - name: main\n    resources:\n      requests: {cpu: '1', memory: 1Gi, "
       "nvidia.com/gpu: '1'}\n      limits: {nvidia.com/gpu: '1'}\n";
  return p + "status: {phase: " + std::string(node.empty() ? "Pending" : "Running") + "}\n";
}

const SnapJob& Job(const Snapshot& snap, std::string_view name) {
  return *std::find_if(snap.jobs.begin(), snap.jobs.end(),
                       [&](const SnapJob& j) { return j.name == name; });
}

const SnapPod& PodNamed(const Snapshot& snap, std::string_view name) {
  return *std::find_if(snap.pods.begin(), snap.pods.end(),
                       [&](const SnapPod& p) { return p.name == name; });
}

std::vector<std::string> FloorPods(const Snapshot& snap) {
  std::vector<std::string> out;
  for (const SnapPod& p : snap.pods) {
    if (p.in_floor) out.emplace_back(p.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One cycle of `actions` on the world; pods by name.
struct Cycle {
  sim::CycleReport report;
  const sim::PodReport& Pod(const std::string& name) const {
    return *std::find_if(report.pods.begin(), report.pods.end(),
                         [&](const sim::PodReport& p) { return p.name == name; });
  }
};

Cycle RunOnce(const std::vector<std::string>& docs, std::vector<std::string> actions) {
  ClusterState state = testing::LoadDocs(docs);
  auto config = WithActions(ConfigFromShard(std::nullopt).value(), actions).value();
  return {sim::RunCycle(state, config, sim::SimulateOptions{.now = kNow}, 1).value()};
}

// ---------------------------------------------------------------------------------------------
// The floor.

TEST(SemiPreemptibleFloorTest, OldestRunningPodsOfEachPodSetFormTheFloor) {
  // minMember 2 of 4 running pods: the two oldest (created 11:01, 11:02) are protected, whatever
  // their order in the manifest; the pending pod is not in the floor.
  const ClusterState state =
      testing::LoadDocs({Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 2),
                         Pod("d", "pg", 4, "n0"), Pod("b", "pg", 2, "n0"), Pod("c", "pg", 3, "n0"),
                         Pod("a", "pg", 1, "n0"), Pod("e", "pg", 0)});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapJob& job = Job(snap, "pg");
  EXPECT_TRUE(job.semi_preemptible);
  EXPECT_FALSE(job.preemptible);
  EXPECT_EQ(FloorPods(snap), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SurplusPods(job), 2);
}

TEST(SemiPreemptibleFloorTest, EqualCreationTimesFallBackToNames) {
  const ClusterState state =
      testing::LoadDocs({Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 1),
                         Pod("y", "pg", 5, "n0"), Pod("x", "pg", 5, "n0")});
  EXPECT_EQ(FloorPods(BuildSnapshot(state, kNow)), (std::vector<std::string>{"x"}));
}

TEST(SemiPreemptibleFloorTest, MinMemberZeroIsPlainlyPreemptible) {
  const ClusterState state = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 0), Pod("a", "pg", 1, "n0")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_TRUE(Job(snap, "pg").preemptible);
  EXPECT_FALSE(Job(snap, "pg").semi_preemptible);
  EXPECT_TRUE(FloorPods(snap).empty());
}

TEST(SemiPreemptibleFloorTest, EachPodSetOfASubGroupTreeKeepsItsOwnFloor) {
  // Leaves "master" (minMember 1) and "workers" (minMember 2); the root's minMember is ignored.
  const std::string spec =
      "  subGroups:\n  - {name: master, minMember: 1}\n  - {name: workers, minMember: 2}\n";
  const ClusterState state = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", -1, "semi-preemptible", spec),
       Pod("m0", "pg", 1, "n0", "master"), Pod("w0", "pg", 2, "n0", "workers"),
       Pod("w1", "pg", 3, "n0", "workers"), Pod("w2", "pg", 4, "n0", "workers")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(FloorPods(snap), (std::vector<std::string>{"m0", "w0", "w1"}));
  EXPECT_EQ(SurplusPods(Job(snap, "pg")), 1);
}

TEST(SemiPreemptibleFloorTest, ProtectedTasksFillTheFloorsRoomOnly) {
  // One of minMember 3 runs: of the 3 pending tasks, the first 2 would join the floor.
  const ClusterState state = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 3),
       PodGroup("np", "q", 1, "non-preemptible"), PodGroup("p", "q", 1, "preemptible"),
       Pod("a", "pg", 1, "n0"), Pod("b", "pg", 2), Pod("c", "pg", 3), Pod("d", "pg", 4),
       Pod("n", "np", 1), Pod("x", "p", 1)});
  const Snapshot snap = BuildSnapshot(state, kNow);
  auto id = [&](std::string_view name) {
    return static_cast<PodId>(&PodNamed(snap, name) - snap.pods.data());
  };
  EXPECT_EQ(ProtectedTasks(snap, Job(snap, "pg"), {id("b"), id("c"), id("d")}),
            (std::vector<PodId>{id("b"), id("c")}));
  EXPECT_EQ(ProtectedTasks(snap, Job(snap, "np"), {id("n")}), std::vector<PodId>{id("n")});
  EXPECT_TRUE(ProtectedTasks(snap, Job(snap, "p"), {id("x")}).empty());
}

// ---------------------------------------------------------------------------------------------
// Quota.

TEST(SemiPreemptibleQuotaTest, OnlyTheFloorCountsAsNonPreemptibleAllocation) {
  const ClusterState state = testing::LoadDocs({Node("n0", 8), Queue("q", 8),
                                                PodGroup("pg", "q", 2), Pod("a", "pg", 1, "n0"),
                                                Pod("b", "pg", 2, "n0"), Pod("c", "pg", 3, "n0")});
  Snapshot snap = BuildSnapshot(state, kNow);
  plugins::proportion::ComputeQueueShares(snap, 1.0);
  const SnapQueue& q = snap.queues[snap.queue_by_name.at("q")];
  EXPECT_EQ(q.allocated.milli_gpu, 3 * kGpu);
  EXPECT_EQ(q.allocated_non_preemptible.milli_gpu, 2 * kGpu);
}

TEST(SemiPreemptibleQuotaTest, FloorAboveDeservedQuotaStaysPendingWithAReason) {
  // Queue deserves 2 GPUs, no over-quota weight; the floor asks 3: NonPreemptibleOverQuota,
  // though the node is empty. Its message names the protected pods.
  const Cycle c =
      RunOnce({Node("n0", 8), Queue("q", 2, 0), PodGroup("pg", "q", 3), Pod("a", "pg", 1),
               Pod("b", "pg", 2), Pod("c", "pg", 3), Pod("d", "pg", 4)},
              {"allocate"});
  for (const char* name : {"a", "b", "c", "d"}) EXPECT_EQ(c.Pod(name).status, "Pending") << name;
  ASSERT_FALSE(c.Pod("a").reasons.empty());
  const Reason& r = c.Pod("a").reasons.front();
  EXPECT_EQ(r.kind(), ReasonKind::kNonPreemptibleOverQuota);
  EXPECT_EQ(r.QueueCap()->requested, 3 * kGpu);
  EXPECT_EQ(r.QueueCap()->available, 2 * kGpu);
  EXPECT_NE(r.Message().find("semi-preemptible"), std::string::npos) << r.Message();
}

TEST(SemiPreemptibleQuotaTest, FloorWithinQuotaRunsAndSurplusGoesOverQuota) {
  // Same queue, floor 2: all 4 pods run (2 in quota, 2 over it); a non-preemptible job of 4
  // would not.
  const Cycle c =
      RunOnce({Node("n0", 8), Queue("q", 2, 0), Queue("q2", 2, 0), PodGroup("pg", "q", 2),
               PodGroup("np", "q2", 4, "non-preemptible"), Pod("a", "pg", 1), Pod("b", "pg", 2),
               Pod("c", "pg", 3), Pod("d", "pg", 4), Pod("n0p", "np", 1), Pod("n1p", "np", 1),
               Pod("n2p", "np", 1), Pod("n3p", "np", 1)},
              {"allocate"});
  for (const char* name : {"a", "b", "c", "d"}) EXPECT_EQ(c.Pod(name).status, "Binding") << name;
  EXPECT_EQ(c.Pod("n0p").status, "Pending");
}

TEST(SemiPreemptibleQuotaTest, FloorAlreadyRunningLetsSurplusGrowPastQuota) {
  // The floor (2) runs, the queue's non-preemptible allocation sits at its quota: more pods only
  // charge the limit, so they are placed.
  const Cycle c = RunOnce({Node("n0", 8), Queue("q", 2, 0), PodGroup("pg", "q", 2),
                           Pod("a", "pg", 1, "n0"), Pod("b", "pg", 2, "n0"), Pod("c", "pg", 3)},
                          {"allocate"});
  EXPECT_EQ(c.Pod("c").status, "Binding");
}

// ---------------------------------------------------------------------------------------------
// Victims.

std::vector<std::string> ReclaimWorld(int borrower_quota, int owner_quota, int min_member,
                                      int reclaimer_pods) {
  std::vector<std::string> docs = {
      Node("n0", 4),
      Queue("owner", owner_quota),
      Queue("borrower", borrower_quota),
      PodGroup("elastic", "borrower", min_member),
      PodGroup("reclaimer", "owner", reclaimer_pods, "preemptible"),
  };
  for (int i = 0; i < 4; ++i) docs.push_back(Pod("e" + std::to_string(i), "elastic", i, "n0"));
  for (int i = 0; i < reclaimer_pods; ++i) {
    docs.push_back(Pod("r" + std::to_string(i), "reclaimer", 50));
  }
  return docs;
}

TEST(SemiPreemptibleVictimTest, ReclaimTakesSurplusPodsAndKeepsTheFloor) {
  const Cycle c = RunOnce(ReclaimWorld(2, 2, 2, 2), {"reclaim"});
  EXPECT_EQ(c.Pod("e0").status, "Running");
  EXPECT_EQ(c.Pod("e1").status, "Running");
  EXPECT_EQ(c.Pod("e2").status, "Releasing");
  EXPECT_EQ(c.Pod("e3").status, "Releasing");
  EXPECT_EQ(c.Pod("r0").status, "Pipelined");
  EXPECT_EQ(c.Pod("r1").status, "Pipelined");
  EXPECT_NE(c.Pod("e2").eviction.find("above the semi-preemptible floor (minMember 2)"),
            std::string::npos)
      << c.Pod("e2").eviction;
  EXPECT_EQ(c.report.counts.evictions, 2);
}

TEST(SemiPreemptibleVictimTest, ReclaimNeverTakesTheFloorEvenWhenThatLeavesTheReclaimerPending) {
  // The reclaimer needs 3 GPUs; only 2 pods are above the floor: nothing is evicted.
  const Cycle c = RunOnce(ReclaimWorld(1, 3, 2, 3), {"reclaim"});
  for (const char* name : {"e0", "e1", "e2", "e3"}) EXPECT_EQ(c.Pod(name).status, "Running");
  EXPECT_EQ(c.Pod("r0").status, "Pending");
  EXPECT_EQ(c.report.counts.evictions, 0);
}

TEST(SemiPreemptibleVictimTest, PreemptiblePeerLosesEverythingInTheSameWorld) {
  // The contrast: the same job, preemptible, gives all 4 pods up... here 3 are needed.
  std::vector<std::string> docs = ReclaimWorld(1, 3, 2, 3);
  docs[3] = PodGroup("elastic", "borrower", 2, "preemptible");
  const Cycle c = RunOnce(docs, {"reclaim"});
  EXPECT_EQ(c.Pod("r0").status, "Pipelined");
  EXPECT_GE(c.report.counts.evictions, 3);
}

TEST(SemiPreemptibleVictimTest, MinMemberEqualToPodCountProtectsEveryPod) {
  const Cycle c = RunOnce(ReclaimWorld(0, 2, 4, 1), {"reclaim"});
  for (const char* name : {"e0", "e1", "e2", "e3"}) EXPECT_EQ(c.Pod(name).status, "Running");
  EXPECT_EQ(c.Pod("r0").status, "Pending");
}

TEST(SemiPreemptibleVictimTest, EvictionUnitsAreSingleSurplusPodsNeverAFloorOrAWholeSubGroup) {
  // master (minMember 1, 1 pod), workers (minMember 2, 3 pods), replica (minMember 1, 2 pods),
  // root minSubGroup 2: a plain job could lose the whole surplus member; a semi-preemptible one
  // gives exactly its 2 pods above the floors, one per unit, and then nothing.
  const std::string spec =
      "  minSubGroup: 2\n  subGroups:\n  - {name: master, minMember: 1}\n"
      "  - {name: workers, minMember: 2}\n  - {name: replica, minMember: 1}\n";
  const ClusterState state = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", -1, "semi-preemptible", spec),
       Pod("m0", "pg", 1, "n0", "master"), Pod("w0", "pg", 2, "n0", "workers"),
       Pod("w1", "pg", 3, "n0", "workers"), Pod("w2", "pg", 4, "n0", "workers"),
       Pod("x0", "pg", 5, "n0", "replica"), Pod("x1", "pg", 6, "n0", "replica")});
  Session s(BuildSnapshot(state, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  const JobId job = static_cast<JobId>(&Job(s.snap(), "pg") - s.snap().jobs.data());
  actions::VictimJobPods pods(s, job);
  EXPECT_EQ(pods.Count(), 2);
  std::vector<std::string> taken;
  for (int i = 0; i < 2; ++i) {
    const std::vector<PodId> unit = pods.TakeUnit();
    ASSERT_EQ(unit.size(), 1u);
    EXPECT_FALSE(s.snap().pods[unit[0]].in_floor);
    taken.emplace_back(s.snap().pods[unit[0]].name);
  }
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(taken, (std::vector<std::string>{"w2", "x1"}));
  EXPECT_TRUE(pods.Empty());
  EXPECT_TRUE(pods.TakeUnit().empty());
}

// A queue deserving 2 GPUs reclaims from a borrower (deserved 0, no over-quota weight) holding all
// 4 GPUs with a preemptible job; the reclaimer asks 3 pods with `min_member` of them protected.
std::vector<std::string> ProtectedReclaimerWorld(int min_member,
                                                 const std::string& preemptibility) {
  std::vector<std::string> docs = {Node("n0", 4), Queue("owner", 2, 1), Queue("borrower", 0, 0),
                                   PodGroup("b", "borrower", 1, "preemptible"),
                                   PodGroup("r", "owner", min_member, preemptibility)};
  for (int i = 0; i < 4; ++i) docs.push_back(Pod("b" + std::to_string(i), "b", i, "n0"));
  for (int i = 0; i < 3; ++i) docs.push_back(Pod("r" + std::to_string(i), "r", 50));
  return docs;
}

TEST(SemiPreemptibleReclaimerTest, FloorPodsMustFitTheReclaimersDeservedQuota) {
  // Floor 3 > deserved 2: like a non-preemptible reclaimer, it may not reclaim.
  for (const char* mode : {"semi-preemptible", "non-preemptible"}) {
    const Cycle c = RunOnce(ProtectedReclaimerWorld(3, mode), {"reclaim"});
    EXPECT_EQ(c.Pod("r0").status, "Pending") << mode;
    EXPECT_EQ(c.report.counts.evictions, 0) << mode;
  }
  // Floor 2 fits: the gang of 2 reclaims (its third pod, above the floor, comes later).
  const Cycle c = RunOnce(ProtectedReclaimerWorld(2, "semi-preemptible"), {"reclaim"});
  EXPECT_EQ(c.Pod("r0").status, "Pipelined");
  EXPECT_EQ(c.Pod("r1").status, "Pipelined");
  EXPECT_EQ(c.report.counts.evictions, 2);
}

// ---------------------------------------------------------------------------------------------
// Updates.

PodGroupObject Decoded(const std::string& doc) {
  const ClusterState state = testing::LoadDocs({Queue("q", 8), doc});
  return state.pod_groups.front();
}

TEST(SemiPreemptibleUpdateTest, RaisingMinMemberOfARunningSemiPreemptiblePodGroupIsAnError) {
  const PodGroupObject before = Decoded(PodGroup("pg", "q", 2));
  const PodGroupObject after = Decoded(PodGroup("pg", "q", 3));
  const auto errors = ProblemsOf(ValidatePodGroupUpdate(before, after, /*running=*/true));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("default/pg"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("spec.minMember: may not be raised (2 to 3)"), std::string::npos)
      << errors[0];
  // Lowering is fine; so is raising before anything runs, or on other preemptibilities.
  EXPECT_TRUE(ValidatePodGroupUpdate(after, before, true).ok());
  EXPECT_TRUE(ValidatePodGroupUpdate(before, after, false).ok());
  EXPECT_TRUE(
      ProblemsOf(ValidatePodGroupUpdate(Decoded(PodGroup("pg", "q", 2, "preemptible")),
                                        Decoded(PodGroup("pg", "q", 3, "preemptible")), true))
          .empty());
}

TEST(SemiPreemptibleUpdateTest, RaisingASubGroupMinimumIsAnErrorNamingTheSubGroup) {
  const std::string low =
      "  subGroups:\n  - {name: a, minMember: 1}\n  - {name: b, minMember: 1}\n";
  const std::string high =
      "  subGroups:\n  - {name: a, minMember: 1}\n  - {name: b, minMember: 2}\n";
  const auto errors = ProblemsOf(
      ValidatePodGroupUpdate(Decoded(PodGroup("pg", "q", -1, "semi-preemptible", low)),
                             Decoded(PodGroup("pg", "q", -1, "semi-preemptible", high)), true));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("spec.subGroups[b].minMember"), std::string::npos) << errors[0];
}

TEST(SemiPreemptibleUpdateTest, AWorldUpdateIsCheckedAgainstThePodsItReplaces) {
  const ClusterState running = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 2), Pod("a", "pg", 1, "n0")});
  const ClusterState pending =
      testing::LoadDocs({Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 2), Pod("a", "pg", 1)});
  const ClusterState raised = testing::LoadDocs(
      {Node("n0", 8), Queue("q", 8), PodGroup("pg", "q", 3), Pod("a", "pg", 1, "n0")});
  const auto errors = ProblemsOf(ValidateWorldUpdate(running, raised));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("PodGroup default/pg: spec.minMember"), std::string::npos) << errors[0];
  EXPECT_TRUE(ValidateWorldUpdate(pending, raised).ok());
  EXPECT_TRUE(ValidateWorldUpdate(raised, running).ok());
}

}  // namespace
}  // namespace kai
