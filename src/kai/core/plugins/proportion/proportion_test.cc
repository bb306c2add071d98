#include "kai/core/plugins/proportion/proportion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/snapshot/snapshot.h"
#include "kai/core/usage/usage_store.h"

namespace kai::plugins::proportion {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int64_t kGpu = 1000;            // milli-GPU per device
constexpr int64_t kCore = 1000;           // millicores per core
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kHour = 3600;

// A queue resource with no quota, no limit and weight 1 (what the tests leave open).
constexpr QueueResource kOpen{-1, -1, 1000};

QueueResource Gpus(double quota, double limit = -1, double weight = 1) {
  auto milli = [](double v) { return v < 0 ? int64_t{-1} : std::llround(v * kGpu); };
  return QueueResource{milli(quota), milli(limit), std::llround(weight * 1000)};
}

Resources Req(int64_t milli_gpu, int64_t milli_cpu = 0, int64_t memory = 0) {
  Resources r;
  r.milli_gpu = milli_gpu;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  r.pods = 1;
  return r;
}

// Builds ClusterStates in code; every object gets a kind, a uid and a creation time one minute
// after the previous one (so listed order is creation order).
class Cluster {
 public:
  void Node(const std::string& name, int64_t gpus, int64_t cores = 128, int64_t mem_gi = 1024,
            bool ready = true) {
    NodeObject n;
    n.meta = Meta("Node", name, false);
    n.allocatable = Req(gpus * kGpu, cores * kCore, mem_gi * kGi);
    n.allocatable.pods = 110;
    n.capacity = n.allocatable;
    n.ready = ready;
    if (!ready) n.bad_conditions.push_back("NotReady");
    state.nodes.push_back(std::move(n));
  }

  void Queue(const std::string& name, const std::string& parent, QueueResource gpu,
             std::optional<int> priority = std::nullopt, QueueResource cpu = kOpen,
             QueueResource memory = kOpen) {
    QueueObject q;
    q.meta = Meta("Queue", name, false);
    q.parent = parent;
    q.priority = priority;
    q.has_resources = true;
    q.gpu = gpu;
    q.cpu = cpu;
    q.memory = memory;
    state.queues.push_back(std::move(q));
  }

  // A PodGroup of `pods` pods asking `request` each: Running on `node`, or Pending when empty.
  void Job(const std::string& name, const std::string& queue, const Resources& request,
           int pods = 1, const std::string& node = "", const std::string& preemptibility = "") {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", name, true);
    pg.queue = queue;
    pg.preemptibility = preemptibility;
    pg.min_member = 1;
    state.pod_groups.push_back(std::move(pg));
    for (int i = 0; i < pods; ++i) {
      PodObject p = Pod(name + "-" + std::to_string(i), request, node);
      p.pod_group = name;
      state.pods.push_back(std::move(p));
    }
  }

  // A Running pod of another scheduler on `node`.
  void ForeignPod(const std::string& name, const Resources& request, const std::string& node) {
    PodObject p = Pod(name, request, node);
    p.scheduler_name = "default-scheduler";
    state.pods.push_back(std::move(p));
  }

  ClusterState state;

 private:
  ObjectMeta Meta(const std::string& kind, const std::string& name, bool namespaced) {
    ObjectMeta m;
    m.kind = kind;
    m.name = name;
    m.uid = "uid-" + name;
    if (namespaced) m.ns = "default";
    m.creation = created_ += 60;
    return m;
  }

  PodObject Pod(const std::string& name, const Resources& request, const std::string& node) {
    PodObject p;
    p.meta = Meta("Pod", name, true);
    p.scheduler_name = "kai-scheduler";
    p.request = request;
    p.node_name = node;
    p.phase = node.empty() ? "Pending" : "Running";
    return p;
  }

  UnixSeconds created_ = kNow - 100000;
};

// The snapshot holds views into `state`, which must outlive it.
Snapshot Shares(ClusterState&&, double = 1.0) = delete;
Snapshot Shares(const ClusterState& state, double k_value = 1.0) {
  Snapshot snap = BuildSnapshot(state, kNow);
  ComputeQueueShares(snap, k_value);
  return snap;
}

const SnapQueue& Q(const Snapshot& snap, std::string_view name) {
  return snap.queues[snap.queue_by_name.at(name)];
}

int64_t FairGpus(const Snapshot& snap, std::string_view name) {
  return Q(snap, name).fair_share.milli_gpu;
}

JobId FindJob(const Snapshot& snap, std::string_view name) {
  for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
    if (snap.jobs[j].name == name) return j;
  }
  ADD_FAILURE() << "no job " << name;
  return kNone;
}

// ---------------------------------------------------------------------------------------------
// Division examples.

TEST(ProportionTest, HigherPriorityQueueTakesItsExtraGpuThenWeightsSplitTheRest) {
  // 16 GPUs; siblings training (quota 6, w2, prio 1), research (quota 4, w1, prio 1) and
  // inference (quota 2, w1, prio 2).
  // Deserved (priority ignored): training min(6, 20)=6, research min(4, 20)=4,
  //   inference min(2, 3)=2; 16 - 12 = 4 left over quota.
  // Bucket prio 2: inference alone, remaining request 3-2 = 1 <= its share 4 -> takes 1; 3 left.
  // Bucket prio 1: W = 2+1 = 3; training 3*2/3 = 2 (< remaining 14) -> 2;
  //   research 3*1/3 = 1 (< 16) -> 1; 0 left.
  // Fair shares: training 6+2 = 8, research 4+1 = 5, inference 2+1 = 3 (sum 16).
  Cluster c;
  c.Node("n1", 16);
  c.Queue("training", "", Gpus(6, -1, 2), 1);
  c.Queue("research", "", Gpus(4, -1, 1), 1);
  c.Queue("inference", "", Gpus(2, -1, 1), 2);
  c.Job("train-job", "training", Req(kGpu), 20);
  c.Job("research-job", "research", Req(kGpu), 20);
  c.Job("serve", "inference", Req(kGpu), 3);
  const Snapshot snap = Shares(c.state);
  EXPECT_EQ(snap.fair_share_capacity.milli_gpu, 16 * kGpu);
  EXPECT_EQ(FairGpus(snap, "inference"), 3 * kGpu);
  EXPECT_EQ(FairGpus(snap, "training"), 8 * kGpu);
  EXPECT_EQ(FairGpus(snap, "research"), 5 * kGpu);
}

TEST(ProportionTest, SurplusSplitsTwoToOneBetweenVisionAndLlmByWeight) {
  // 10 GPUs; vision (quota 3, w2), llm (quota 3, w1), ops (quota 1, w1) asks for only 1.
  // Deserved: 3 + 3 + min(1, 1) = 7; 3 surplus.
  // One bucket (all priority 100): ops is satisfied, W = 2+1 = 3:
  //   vision 3*2/3 = 2 (< remaining 7) -> 2; llm 3*1/3 = 1 (< 7) -> 1.
  // Fair shares: vision 5, llm 4, ops 1.
  Cluster c;
  c.Node("n1", 10);
  c.Queue("vision", "", Gpus(3, -1, 2));
  c.Queue("llm", "", Gpus(3, -1, 1));
  c.Queue("ops", "", Gpus(1, -1, 1));
  c.Job("vision-job", "vision", Req(kGpu), 10);
  c.Job("llm-job", "llm", Req(kGpu), 10);
  c.Job("ops-job", "ops", Req(kGpu), 1);
  const Snapshot snap = Shares(c.state);
  EXPECT_EQ(FairGpus(snap, "vision"), 5 * kGpu);
  EXPECT_EQ(FairGpus(snap, "llm"), 4 * kGpu);
  EXPECT_EQ(FairGpus(snap, "ops"), 1 * kGpu);
}

TEST(ProportionTest, HigherPriorityWithWeightOneBeatsLowerPriorityWithWeightHundred) {
  // 8 GPUs; urgent (prio 2, quota 0, w1) and bulk (prio 1, quota 0, w100) both ask for 8.
  // Deserved: 0 + 0; 8 surplus. Buckets are served highest priority first, whatever the weights:
  //   bucket 2: urgent alone, remaining 8 <= share 8 -> takes 8; nothing left for bucket 1.
  // Fair shares: urgent 8, bulk 0.
  Cluster c;
  c.Node("n1", 8);
  c.Queue("urgent", "", Gpus(0, -1, 1), 2);
  c.Queue("bulk", "", Gpus(0, -1, 100), 1);
  c.Job("urgent-job", "urgent", Req(kGpu), 8);
  c.Job("bulk-job", "bulk", Req(kGpu), 8);
  const Snapshot snap = Shares(c.state);
  EXPECT_EQ(FairGpus(snap, "urgent"), 8 * kGpu);
  EXPECT_EQ(FairGpus(snap, "bulk"), 0);
}

TEST(ProportionTest, ThreeLevelTreeDividesEachParentsFairShareAmongItsChildren) {
  // 24 GPUs. Departments -> teams -> projects; requests are pending pods in projects and roll up:
  //   proj-x 8, proj-y 4 (team-a1 12), proj-z 8 (team-a2 8)  => dept-a 20
  //   proj-w 6, proj-v 4 (team-b1 10)                        => dept-b 10
  // Level 1 (total 24): dept-a quota 12 w1, dept-b quota 6 w1. Deserved 12 + 6, 6 left;
  //   W=2: shares 3 and 3, remaining 8 and 4 are both larger -> 3 each.
  //   dept-a 15, dept-b 9.
  // Level 2 under dept-a (total 15): team-a1 quota 8 w1, team-a2 quota 4 w2. Deserved 8 + 4,
  //   3 left; W=3: a1 3*1/3 = 1 (< 4) -> 1; a2 3*2/3 = 2 (< 4) -> 2. team-a1 9, team-a2 6.
  // Level 2 under dept-b (total 9): team-b1 quota 6, alone: 6 + surplus 3 (< remaining 4) = 9.
  // Level 3 under team-a1 (total 9): proj-x quota 4 w2, proj-y quota 2 w1. Deserved 6, 3 left;
  //   W=3: x 2 (< 4) -> 2, y 1 (< 2) -> 1. proj-x 6, proj-y 3.
  // Level 3 under team-a2 (total 6): proj-z quota 2 alone: 2 + min(4 surplus, 6) = 6.
  // Level 3 under team-b1 (total 9): proj-w quota 3 w1, proj-v quota 3 w1. Deserved 6, 3 left;
  //   round 1, W=2, shares 1.5: w needs 3 > 1.5 -> floor 1 (remainder .5 recorded);
  //   v needs 1 <= 1.5 -> takes 1 (below its share -> another round). 1 left.
  //   Round 2: only w unsatisfied, share 1 < 2 -> 1. 0 left. proj-w 5, proj-v 4.
  Cluster c;
  c.Node("n1", 8);
  c.Node("n2", 8);
  c.Node("n3", 8);
  c.Queue("dept-a", "", Gpus(12));
  c.Queue("dept-b", "", Gpus(6));
  c.Queue("team-a1", "dept-a", Gpus(8, -1, 1));
  c.Queue("team-a2", "dept-a", Gpus(4, -1, 2));
  c.Queue("team-b1", "dept-b", Gpus(6));
  c.Queue("proj-x", "team-a1", Gpus(4, -1, 2));
  c.Queue("proj-y", "team-a1", Gpus(2, -1, 1));
  c.Queue("proj-z", "team-a2", Gpus(2));
  c.Queue("proj-w", "team-b1", Gpus(3));
  c.Queue("proj-v", "team-b1", Gpus(3));
  c.Job("x", "proj-x", Req(kGpu), 8);
  c.Job("y", "proj-y", Req(kGpu), 4);
  c.Job("z", "proj-z", Req(kGpu), 8);
  c.Job("w", "proj-w", Req(kGpu), 6);
  c.Job("v", "proj-v", Req(kGpu), 4);
  const Snapshot snap = Shares(c.state);

  EXPECT_EQ(Q(snap, "dept-a").requested.milli_gpu, 20 * kGpu);
  EXPECT_EQ(Q(snap, "dept-b").requested.milli_gpu, 10 * kGpu);
  EXPECT_EQ(Q(snap, "team-a1").requested.milli_gpu, 12 * kGpu);

  EXPECT_EQ(FairGpus(snap, "dept-a"), 15 * kGpu);
  EXPECT_EQ(FairGpus(snap, "dept-b"), 9 * kGpu);
  EXPECT_EQ(FairGpus(snap, "team-a1"), 9 * kGpu);
  EXPECT_EQ(FairGpus(snap, "team-a2"), 6 * kGpu);
  EXPECT_EQ(FairGpus(snap, "team-b1"), 9 * kGpu);
  EXPECT_EQ(FairGpus(snap, "proj-x"), 6 * kGpu);
  EXPECT_EQ(FairGpus(snap, "proj-y"), 3 * kGpu);
  EXPECT_EQ(FairGpus(snap, "proj-z"), 6 * kGpu);
  EXPECT_EQ(FairGpus(snap, "proj-w"), 5 * kGpu);
  EXPECT_EQ(FairGpus(snap, "proj-v"), 4 * kGpu);

  // What a parent holds is exactly what its children divided (no child asked for less here).
  for (const SnapQueue& q : snap.queues) {
    if (q.IsLeaf()) continue;
    int64_t children = 0;
    for (QueueId child : q.children) children += snap.queues[child].fair_share.milli_gpu;
    EXPECT_EQ(children, q.fair_share.milli_gpu) << q.name;
  }
}

TEST(ProportionTest, QueueLimitCapsFairShareAndZeroLimitGetsNothing) {
  // 10 GPUs; capped (quota 2, limit 3) and frozen (quota 2, limit 0) and open (quota 2) all ask 10.
  // Requestable: capped min(10, 3) = 3, frozen min(10, 0) = 0, open 10.
  // Deserved: capped 2, frozen min(2, 0) = 0, open 2; 6 left. W counts only unsatisfied
  //   queues: capped (needs 1) and open (needs 8) -> 3 each; capped takes 1 (below its share ->
  //   another round), open takes 3; 2 left. Round 2: open alone, share 2 -> 2.
  // Fair shares: capped 3, frozen 0, open 7.
  Cluster c;
  c.Node("n1", 10);
  c.Queue("capped", "", Gpus(2, 3));
  c.Queue("frozen", "", Gpus(2, 0));
  c.Queue("open", "", Gpus(2));
  c.Job("a", "capped", Req(kGpu), 10);
  c.Job("b", "frozen", Req(kGpu), 10);
  c.Job("c", "open", Req(kGpu), 10);
  const Snapshot snap = Shares(c.state);
  EXPECT_EQ(FairGpus(snap, "capped"), 3 * kGpu);
  EXPECT_EQ(FairGpus(snap, "frozen"), 0);
  EXPECT_EQ(FairGpus(snap, "open"), 7 * kGpu);
}

// ---------------------------------------------------------------------------------------------
// Queue order (through a Session, as the actions see it).

// cpu-team and gpu-team each deserve 50 cores and 5 GPUs of a 100-core, 10-GPU node; each runs
// one pod and has a pending one-pod job next in line (cpu-next: 5 cores; gpu-next: 1 GPU and
// 1 core); gpu-team may have `gpu_team_later` more GPUs pending in a later job.
ClusterState DominantResourceCluster(int64_t cpu_team_cores_running, int64_t gpu_team_gpus_running,
                                     int64_t gpu_team_later = 0) {
  Cluster c;
  c.Node("n1", 10, 100, 1000);
  const QueueResource cpu_quota{50 * kCore, -1, 1000};
  c.Queue("cpu-team", "", Gpus(5), std::nullopt, cpu_quota);
  c.Queue("gpu-team", "", Gpus(5), std::nullopt, cpu_quota);
  c.Job("cpu-running", "cpu-team", Req(0, cpu_team_cores_running * kCore, kGi), 1, "n1");
  c.Job("gpu-running", "gpu-team", Req(gpu_team_gpus_running * kGpu, kCore, kGi), 1, "n1");
  c.Job("cpu-next", "cpu-team", Req(0, 5 * kCore, kGi));
  c.Job("gpu-next", "gpu-team", Req(kGpu, kCore, kGi));
  if (gpu_team_later > 0) c.Job("gpu-later", "gpu-team", Req(gpu_team_later * kGpu, kCore, kGi));
  return std::move(c.state);
}

// True when cpu-team (with job cpu-next) goes before gpu-team (with gpu-next).
bool CpuTeamFirst(const ClusterState& state) {
  Session s(BuildSnapshot(state, kNow), ConfigFromShard(std::nullopt).value());
  EXPECT_TRUE(s.OpenPlugins().ok());
  const Snapshot& snap = s.snap();
  const QueueId cpu = snap.queue_by_name.at("cpu-team");
  const QueueId gpu = snap.queue_by_name.at("gpu-team");
  const JobId cj = FindJob(snap, "cpu-next");
  const JobId gj = FindJob(snap, "gpu-next");
  const bool cpu_first = s.QueueBefore(cpu, cj, gpu, gj);
  EXPECT_NE(cpu_first, s.QueueBefore(gpu, gj, cpu, cj)) << "the order must be antisymmetric";
  return cpu_first;
}

TEST(ProportionQueueOrderTest, LowerDominantShareGoesFirstWhateverTheResource) {
  // Neither queue is over its fair share (that needs allocated > fair share in all three
  // resources), both stay within quota with their next job, equal priority: the DRF share
  // including the next job decides. Allocatable = max(quota, fair share) = 50 cores / 5 GPUs
  // (memory: quota -1 -> the 1000Gi cluster total, negligible here).
  // Case 1: cpu-team 35 running + 5 next = 40/50 cores = 0.8 (0 GPUs);
  //         gpu-team 1 running + 1 next = 2/5 GPUs = 0.4 (2/50 cores = 0.04).
  //   gpu-team goes first although cpu-team holds no GPU at all.
  EXPECT_FALSE(CpuTeamFirst(DominantResourceCluster(35, 1)));
  // Case 2: cpu-team (5 + 5)/50 = 0.2; gpu-team (3 + 1)/5 = 0.8: cpu-team goes first.
  EXPECT_TRUE(CpuTeamFirst(DominantResourceCluster(5, 3)));
}

TEST(ProportionQueueOrderTest, QueueStayingWithinQuotaGoesBeforeOneThatWouldExceedIt) {
  // cpu-team: 44 running + 5 next = 49 <= 50 cores: within quota. Fair share cpu min(50, 49) = 49,
  //   allocatable max(50, 49) = 50: DRF 49/50 = 0.98.
  // gpu-team, 3 more GPUs pending later: requested 4 + 1 + 3 = 8 GPUs; fair share 5 deserved +
  //   3 surplus (cpu-team asks no GPU) = 8 = allocatable: DRF (4 + 1)/8 = 0.625; 5 <= 5 within.
  //   Both within: DRF decides, gpu-team (0.625) first.
  EXPECT_FALSE(CpuTeamFirst(DominantResourceCluster(44, 4, 3)));
  // gpu-team with 5 running: 5 + 1 = 6 > 5 deserved. Its DRF is still lower, 6/9 = 0.667 < 0.98
  //   (requested 9, fair share 9), but "within deserved" (rule 2) comes first: cpu-team first.
  EXPECT_TRUE(CpuTeamFirst(DominantResourceCluster(44, 5, 3)));
  // The fair shares behind those DRF figures.
  const ClusterState state = DominantResourceCluster(44, 5, 3);  // outlives the snapshot
  const Snapshot snap = Shares(state);
  EXPECT_EQ(FairGpus(snap, "gpu-team"), 9 * kGpu);
  EXPECT_EQ(Q(snap, "cpu-team").fair_share.milli_cpu, 49 * kCore);
}

TEST(ProportionQueueOrderTest, HigherQueuePriorityGoesFirstDespiteHigherDominantShare) {
  // Both within deserved; vip (priority 200) holds 4 of 5 deserved GPUs (0.8 + next 0.2 = 1.0),
  // std (priority 100) holds none (0.2 with its next job): priority (rule 3) decides first.
  Cluster c;
  c.Node("n1", 10);
  c.Queue("vip", "", Gpus(5), 200);
  c.Queue("std", "", Gpus(5), 100);
  c.Job("vip-running", "vip", Req(4 * kGpu), 1, "n1");
  c.Job("vip-next", "vip", Req(kGpu));
  c.Job("std-next", "std", Req(kGpu));
  Session s(BuildSnapshot(c.state, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  const QueueId vip = s.snap().queue_by_name.at("vip");
  const QueueId std_q = s.snap().queue_by_name.at("std");
  EXPECT_TRUE(
      s.QueueBefore(vip, FindJob(s.snap(), "vip-next"), std_q, FindJob(s.snap(), "std-next")));
  EXPECT_FALSE(
      s.QueueBefore(std_q, FindJob(s.snap(), "std-next"), vip, FindJob(s.snap(), "vip-next")));
}

TEST(ProportionQueueOrderTest, QueueOverItsFairShareInEveryResourceGoesLast) {
  // hog (priority 200): quota 0 and weight 0 in cpu, memory and gpu, so its fair share is 0 in
  //   all three, and it runs 1 GPU, 1 core, 1Gi: over its fair share in every resource.
  // fair (priority 50): quota 5 GPUs, runs 5, next job 1 more (beyond its quota too); it holds
  //   no cpu or memory, so it is not over its fair share in every resource.
  // Rule 1 (not over before over) decides before priority (rule 3): fair goes first.
  Cluster c;
  c.Node("n1", 10);
  constexpr QueueResource kNothing{0, -1, 0};
  c.Queue("hog", "", kNothing, 200, kNothing, kNothing);
  c.Queue("fair", "", Gpus(5), 50);
  c.Job("hog-running", "hog", Req(kGpu, kCore, kGi), 1, "n1");
  c.Job("hog-next", "hog", Req(kGpu, kCore, kGi));
  c.Job("fair-running", "fair", Req(kGpu), 5, "n1");
  c.Job("fair-next", "fair", Req(kGpu));
  Session s(BuildSnapshot(c.state, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  const SnapQueue& hog = Q(s.snap(), "hog");
  EXPECT_EQ(hog.fair_share.milli_gpu, 0);
  EXPECT_EQ(hog.fair_share.milli_cpu, 0);
  EXPECT_EQ(hog.fair_share.memory, 0);
  const QueueId h = s.snap().queue_by_name.at("hog");
  const QueueId f = s.snap().queue_by_name.at("fair");
  const JobId hj = FindJob(s.snap(), "hog-next");
  const JobId fj = FindJob(s.snap(), "fair-next");
  EXPECT_TRUE(s.QueueBefore(f, fj, h, hj));
  EXPECT_FALSE(s.QueueBefore(h, hj, f, fj));
}

// The reclaim precheck reads a growing scenario (Scenario::extends_previous) incrementally: on
// every prefix it answers as it does reading the victims afresh, also when other scenarios are
// checked in between, and the answer changes as a larger victim job and a second queue join.
TEST(ProportionReclaimPrecheckTest, GrowingScenarioAnswersAsAFreshRead) {
  Cluster c;
  c.Node("n1", 16);
  c.Queue("r", "", Gpus(8));
  c.Queue("v", "", Gpus(2));
  c.Queue("w", "", Gpus(2));
  c.Job("v-small", "v", Req(kGpu), 1, "n1");
  c.Job("v-big", "v", Req(kGpu), 4, "n1");
  c.Job("w-job", "w", Req(kGpu), 2, "n1");
  c.Job("r-job", "r", Req(kGpu), 4);
  Session s(BuildSnapshot(c.state, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  s.StartSolution();
  std::vector<PodId> order;
  for (const char* name : {"v-small-0", "v-big-0", "v-big-1", "v-big-2", "w-job-0", "w-job-1"}) {
    for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
      if (s.snap().pods[p].name == name) order.push_back(p);
    }
  }
  ASSERT_EQ(order.size(), 6u);
  const JobId preemptor = FindJob(s.snap(), "r-job");
  const Resources min_evicted = Req(4 * kGpu);
  auto possible = [&](const std::vector<PodId>& victims, bool grows) {
    Scenario sc{preemptor, Req(4 * kGpu), &victims, Resources{}};
    sc.extends_previous = grows;
    return s.ScenarioPossible(DisruptionKind::kReclaim, sc, min_evicted);
  };
  std::vector<PodId> growing;
  std::vector<bool> answers;
  for (PodId p : order) {
    growing.push_back(p);
    const std::vector<PodId> copy = growing;
    const bool fresh = possible(copy, false);
    EXPECT_EQ(possible(growing, true), fresh) << growing.size() << " victims";
    const std::vector<PodId> other = {order.back()};
    possible(other, false);  // a scenario of another kind in between
    answers.push_back(fresh);
  }
  // v holds 5 GPUs (deserved 2) and at least 4 must be evicted: it keeps at most 1 + the largest
  // job share, above deserved once v-big gives 2; with w's victims the queues differ.
  EXPECT_EQ(answers, (std::vector<bool>{false, false, true, true, true, true}));
}

// The victim filter answers per victim queue, and again once the session's state has changed:
// v (deserved 2) may lose pods while it holds 5 GPUs, no longer once 4 of them are evicted.
TEST(ProportionReclaimFilterTest, VerdictFollowsTheVictimQueuesAllocation) {
  Cluster c;
  c.Node("n1", 16);
  c.Queue("r", "", Gpus(8));
  c.Queue("v", "", Gpus(2));
  c.Job("v-small", "v", Req(kGpu), 1, "n1");
  c.Job("v-big", "v", Req(kGpu), 4, "n1");
  c.Job("r-job", "r", Req(kGpu), 4);
  Session s(BuildSnapshot(c.state, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  const JobId r = FindJob(s.snap(), "r-job");
  const JobId small = FindJob(s.snap(), "v-small");
  const JobId big = FindJob(s.snap(), "v-big");
  EXPECT_TRUE(s.VictimAllowed(DisruptionKind::kReclaim, r, small));
  EXPECT_TRUE(s.VictimAllowed(DisruptionKind::kReclaim, r, big));
  Statement stmt(s);
  for (PodId p : s.snap().jobs[big].pods) stmt.Evict(p);
  EXPECT_FALSE(s.VictimAllowed(DisruptionKind::kReclaim, r, small));
  stmt.Discard();
  EXPECT_TRUE(s.VictimAllowed(DisruptionKind::kReclaim, r, small));
}

// ---------------------------------------------------------------------------------------------
// Time-based fair share.

TEST(ProportionTimeBasedTest, UsageStoreScoresGpuHoursAgainstCapacityWithAndWithoutDecay) {
  // Capacity: 10 GPUs over the last 10 hours = 100 GPU-hours.
  // team-a: 4 GPUs from now-10h to now-4h = 24 GPU-hours.
  usage::UsageStore store;
  store.RecordCapacity({kNow - 10 * kHour, 10 * kHour, Req(10 * kGpu)});
  store.RecordAllocation("team-a", {kNow - 10 * kHour, 6 * kHour, Req(4 * kGpu)});

  // No decay: U = 24 / 100 = 0.24.
  const auto flat = store.Usage(kNow, {.half_life_seconds = 0, .window_seconds = 10 * kHour});
  EXPECT_NEAR(flat.at("team-a")[2], 0.24, 1e-12);

  // Half-life h = 5h: each instant t weighs 2^(-(now-t)/h); an interval [a, b) weighs
  //   h/ln2 * (2^(-(now-b)/h) - 2^(-(now-a)/h)).
  // team-a: a = now-10h, b = now-4h: 4 GPUs * 5h/ln2 * (2^-0.8 - 2^-2)
  //   = 4 * 7.2135 * (0.574349 - 0.25) = 9.3587 GPU-hours.
  // capacity: a = now-10h, b = now: 10 GPUs * 5h/ln2 * (1 - 2^-2) = 10 * 7.2135 * 0.75 = 54.101.
  // U = 9.3587 / 54.101 = 0.4 * (2^-0.8 - 0.25) / 0.75 = 0.172986: the old usage weighs less.
  const auto decayed =
      store.Usage(kNow, {.half_life_seconds = 5 * kHour, .window_seconds = 10 * kHour});
  const double expected = 0.4 * (std::exp2(-0.8) - 0.25) / 0.75;
  EXPECT_NEAR(decayed.at("team-a")[2], expected, 1e-12);
  EXPECT_NEAR(decayed.at("team-a")[2], 0.172986, 1e-6);
  EXPECT_LT(decayed.at("team-a")[2], flat.at("team-a")[2]);
}

TEST(ProportionTimeBasedTest, HeavierPastUsageShrinksOverQuotaShareFiveToEleven) {
  // kai-semantics.md §3.9: 16 GPUs, queues A and B with weight 1, quota 0, usage .6 and .1, k=1.
  //   w' = .5 each; P_A = .5 + 1*(.5 - .6) = .4, P_B = .5 + (.5 - .1) = .9; sum 1.3.
  //   A 16*.4/1.3 = 4.92 -> 4 (remainder .92), B 16*.9/1.3 = 11.08 -> 11 (remainder .08); 1 left.
  //   Top-up: the larger remainder (A) gets the last GPU. A 5, B 11.
  Cluster c;
  c.Node("n1", 16);
  c.Queue("a", "", Gpus(0));
  c.Queue("b", "", Gpus(0));
  c.Job("a-job", "a", Req(kGpu), 16);
  c.Job("b-job", "b", Req(kGpu), 16);
  Snapshot snap = BuildSnapshot(c.state, kNow);
  snap.queues[snap.queue_by_name.at("a")].usage = {0, 0, 0.6};
  snap.queues[snap.queue_by_name.at("b")].usage = {0, 0, 0.1};
  ComputeQueueShares(snap, 1.0);
  EXPECT_EQ(FairGpus(snap, "a"), 5 * kGpu);
  EXPECT_EQ(FairGpus(snap, "b"), 11 * kGpu);

  // Without usage the same queues split 8:8 (P = (1+k)w' is plain weights).
  const Snapshot plain = Shares(c.state);
  EXPECT_EQ(FairGpus(plain, "a"), 8 * kGpu);
  EXPECT_EQ(FairGpus(plain, "b"), 8 * kGpu);

  // kValue 0 ignores usage: P = w'.
  Snapshot no_k = BuildSnapshot(c.state, kNow);
  no_k.queues[no_k.queue_by_name.at("a")].usage = {0, 0, 0.6};
  no_k.queues[no_k.queue_by_name.at("b")].usage = {0, 0, 0.1};
  ComputeQueueShares(no_k, 0.0);
  EXPECT_EQ(FairGpus(no_k, "a"), 8 * kGpu);
  EXPECT_EQ(FairGpus(no_k, "b"), 8 * kGpu);
}

// ---------------------------------------------------------------------------------------------
// Capacity checks.

TEST(ProportionCapacityTest, OverLimitOnAnAncestorBlocksTheLeaf) {
  // dept (gpu limit 4) -> team (no limit) running 3 GPUs. A 2-GPU job: team 3+2 <= unlimited,
  // dept 3+2 = 5 > 4 -> OverLimit named on dept, 4-3 = 1 GPU available. A 1-GPU job fits.
  Cluster c;
  c.Node("n1", 8);
  c.Queue("dept", "", Gpus(2, 4));
  c.Queue("team", "dept", Gpus(2));
  c.Job("running", "team", Req(kGpu), 3, "n1");
  const Snapshot snap = Shares(c.state);
  const QueueId team = snap.queue_by_name.at("team");
  EXPECT_EQ(Q(snap, "dept").allocated.milli_gpu, 3 * kGpu);

  const auto reason = CheckQueueCapacity(snap, team, true, Req(2 * kGpu));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->kind(), ReasonKind::kOverLimit);
  EXPECT_EQ(reason->QueueCap()->queue, "dept");
  EXPECT_EQ(reason->QueueCap()->resource, "nvidia.com/gpu");
  EXPECT_EQ(reason->QueueCap()->requested, 2 * kGpu);
  EXPECT_EQ(reason->QueueCap()->available, 1 * kGpu);
  EXPECT_FALSE(CheckQueueCapacity(snap, team, true, Req(kGpu)).has_value());
}

TEST(ProportionCapacityTest, NonPreemptibleJobMayNotExceedQuotaOnLeafOrAncestor) {
  // dept (quota 3) -> team (quota 2) runs a non-preemptible 2-GPU job; other (quota 4) runs a
  // non-preemptible 1-GPU job, also under dept: dept holds 3 non-preemptible GPUs.
  //  - non-preemptible 1 GPU in team: team 2+1 = 3 > 2 -> NonPreemptibleOverQuota on team.
  //  - non-preemptible 1 GPU in other: other 1+1 = 2 <= 4, dept 3+1 = 4 > 3 -> on dept.
  //  - a preemptible job is not bound by quota (no limits set): fits in both.
  Cluster c;
  c.Node("n1", 8);
  c.Queue("dept", "", Gpus(3));
  c.Queue("team", "dept", Gpus(2));
  c.Queue("other", "dept", Gpus(4));
  c.Job("np-team", "team", Req(kGpu), 2, "n1", "non-preemptible");
  c.Job("np-other", "other", Req(kGpu), 1, "n1", "non-preemptible");
  const Snapshot snap = Shares(c.state);
  EXPECT_EQ(Q(snap, "dept").allocated_non_preemptible.milli_gpu, 3 * kGpu);

  const auto on_team = CheckQueueCapacity(snap, snap.queue_by_name.at("team"), false, Req(kGpu));
  ASSERT_TRUE(on_team.has_value());
  EXPECT_EQ(on_team->kind(), ReasonKind::kNonPreemptibleOverQuota);
  EXPECT_EQ(on_team->QueueCap()->queue, "team");
  EXPECT_EQ(on_team->QueueCap()->available, 0);

  const auto on_dept = CheckQueueCapacity(snap, snap.queue_by_name.at("other"), false, Req(kGpu));
  ASSERT_TRUE(on_dept.has_value());
  EXPECT_EQ(on_dept->kind(), ReasonKind::kNonPreemptibleOverQuota);
  EXPECT_EQ(on_dept->QueueCap()->queue, "dept");

  EXPECT_FALSE(CheckQueueCapacity(snap, snap.queue_by_name.at("team"), true, Req(kGpu)));
  EXPECT_FALSE(CheckQueueCapacity(snap, snap.queue_by_name.at("other"), true, Req(kGpu)));
}

TEST(ProportionCapacityTest, ZeroLimitBlocksAnyRequestOfThatResourceButNotZeroRequests) {
  // gpu limit 0 (a cap of 0, not "unlimited"): 0 + 0.001 GPU > 0 -> OverLimit; a CPU-only job
  // (0 GPUs) passes: a resource the job does not ask for is never checked.
  Cluster c;
  c.Node("n1", 8);
  c.Queue("cpu-only", "", Gpus(0, 0));
  const Snapshot snap = Shares(c.state);
  const QueueId q = snap.queue_by_name.at("cpu-only");
  const auto reason = CheckQueueCapacity(snap, q, true, Req(1));
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->kind(), ReasonKind::kOverLimit);
  EXPECT_EQ(reason->QueueCap()->available, 0);
  EXPECT_FALSE(CheckQueueCapacity(snap, q, true, Req(0, 4 * kCore, kGi)).has_value());
  EXPECT_FALSE(CheckQueueCapacity(snap, q, false, Req(0, 4 * kCore, kGi)).has_value());
}

TEST(ProportionCapacityTest, JobWithoutQueuePasses) {
  Cluster c;
  c.Node("n1", 8);
  const Snapshot snap = Shares(c.state);
  EXPECT_FALSE(CheckQueueCapacity(snap, kNone, false, Req(100 * kGpu)).has_value());
}

TEST(ProportionTest, AllocatableShareIsLimitWithoutQuotaElseMaxOfQuotaAndFairShareCapped) {
  auto share = [](int64_t quota, int64_t limit, int64_t fair_share) {
    SnapQueue q;
    q.gpu = {quota, limit, 1000};
    q.fair_share.milli_gpu = fair_share;
    return AllocatableShare(q, CoreResource::kGpu);
  };
  // quota -1: the limit, whatever the fair share (-1 stays unlimited).
  EXPECT_EQ(share(-1, -1, 5000), -1);
  EXPECT_EQ(share(-1, 7000, 2000), 7000);
  EXPECT_EQ(share(-1, 7000, 9000), 7000);
  // quota set: max(quota, fair share) ...
  EXPECT_EQ(share(2000, -1, 5000), 5000);
  EXPECT_EQ(share(2000, -1, 1000), 2000);
  // ... capped by the limit (even below the quota).
  EXPECT_EQ(share(2000, 4000, 5000), 4000);
  EXPECT_EQ(share(2000, 1000, 0), 1000);
  EXPECT_EQ(share(0, 0, 3000), 0);
}

TEST(ProportionTest, FairShareCapacityExcludesForeignPodsAndNotReadyNodes) {
  // ready (8 GPUs, 64 cores) runs a foreign pod (2 GPUs, 4 cores) and a kai pod (1 GPU, 1 core);
  // broken (8 GPUs, NotReady) runs another foreign pod.
  // Capacity: 8 - 2 = 6 GPUs, 64 - 4 = 60 cores; kai's own pods stay in (they are what is
  // divided); the NotReady node contributes nothing (and its foreign pod is not subtracted).
  Cluster c;
  c.Node("ready", 8, 64, 256);
  c.Node("broken", 8, 64, 256, false);
  c.ForeignPod("foreign", Req(2 * kGpu, 4 * kCore, 8 * kGi), "ready");
  c.ForeignPod("foreign-2", Req(1 * kGpu, 1 * kCore, kGi), "broken");
  c.Queue("all", "", Gpus(-1));
  c.Job("mine", "all", Req(kGpu, kCore, kGi), 1, "ready");
  c.Job("wants-more", "all", Req(kGpu), 100);
  Snapshot snap = BuildSnapshot(c.state, kNow);
  const Resources cap = FairShareCapacity(snap);
  EXPECT_EQ(cap.milli_gpu, 6 * kGpu);
  EXPECT_EQ(cap.milli_cpu, 60 * kCore);
  EXPECT_EQ(cap.memory, 248 * kGi);
  ComputeQueueShares(snap, 1.0);
  EXPECT_EQ(snap.fair_share_capacity, cap);
  // quota -1 = the whole level: min(6, requested 101) = 6.
  EXPECT_EQ(FairGpus(snap, "all"), 6 * kGpu);
  EXPECT_EQ(Q(snap, "all").allocated.milli_gpu, 1 * kGpu);
}

TEST(ProportionTest, RequestedCountsRunningAndPendingPodsButNotFinishedOrReleasing) {
  Cluster c;
  c.Node("n1", 8);
  c.Queue("q", "", Gpus(2));
  c.Job("running", "q", Req(kGpu), 2, "n1");
  c.Job("pending", "q", Req(kGpu), 3);
  c.Job("done", "q", Req(kGpu), 1, "n1");
  c.state.pods.back().phase = "Succeeded";
  c.Job("leaving", "q", Req(kGpu), 1, "n1");
  c.state.pods.back().meta.deletion = kNow - 1;  // Releasing
  const Snapshot snap = Shares(c.state);
  // requested = 2 running + 3 pending; allocated = 2 running.
  EXPECT_EQ(Q(snap, "q").requested.milli_gpu, 5 * kGpu);
  EXPECT_EQ(Q(snap, "q").allocated.milli_gpu, 2 * kGpu);
  EXPECT_EQ(Q(snap, "q").allocated_non_preemptible.milli_gpu, 0);
}

// ---------------------------------------------------------------------------------------------
// Property test: random queue trees.

struct RandomTree {
  ClusterState state;
  std::map<std::string, std::array<double, 3>> usage;  // by queue name
  std::map<std::string, Resources> own_request;        // pending requests of each leaf
  double k_value = 1.0;
};

class TreeGenerator {
 public:
  explicit TreeGenerator(uint64_t seed) : rng_(seed) {}

  RandomTree Make() {
    RandomTree t;
    t.k_value = Pick<double>({0.0, 1.0, 1.0, 3.0});
    time_based_ = Chance(0.3);
    const int nodes = Int(1, 6);
    for (int i = 0; i < nodes; ++i) {
      NodeObject n;
      n.meta.kind = "Node";
      n.meta.name = n.meta.uid = "node-" + std::to_string(i);
      n.allocatable = Req(Int(0, 8) * kGpu, Int(1, 128) * kCore + Int(0, 999),
                          Int(1, 64 * 1024) * (int64_t{1} << 20) + Int(0, 4095));
      n.allocatable.pods = 110;
      n.ready = !Chance(0.1);
      if (!n.ready) n.bad_conditions.push_back("NotReady");
      t.state.nodes.push_back(std::move(n));
    }
    // Rough level totals, to draw quotas of a sensible size.
    scale_ = {8 * kGpu, 64 * kCore, int64_t{64} * kGi};
    const int depth = Int(1, 3);
    const int roots = Int(1, 6);
    for (int i = 0; i < roots; ++i) AddQueue(t, "", 1, depth);
    return t;
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T>
  T Pick(std::initializer_list<T> v) {
    return *(v.begin() + Int(0, static_cast<int64_t>(v.size()) - 1));
  }

  // Quota/limit/weight of one resource; `unit` is a round amount (1 GPU, 1 core, 1Gi).
  QueueResource RandomResource(int64_t scale, int64_t unit) {
    QueueResource r;
    const double q = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (q < 0.1) {
      r.quota = -1;
    } else if (q < 0.25) {
      r.quota = 0;
    } else if (q < 0.75) {
      r.quota = Int(0, scale / unit) * unit;
    } else {
      r.quota = Int(0, 2 * scale / unit) * unit / 2;  // halves: fractional GPUs
    }
    const double l = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (l < 0.5) {
      r.limit = -1;
    } else if (l < 0.6) {
      r.limit = 0;
    } else {
      r.limit = Int(0, 2 * scale / unit) * unit / 2;
    }
    const double w = std::uniform_real_distribution<double>(0, 1)(rng_);
    r.weight_milli = w < 0.1 ? 0 : (w < 0.8 ? Int(1, 5) * 1000 : Int(1, 10000));
    return r;
  }

  void AddQueue(RandomTree& t, const std::string& parent, int level, int depth) {
    QueueObject q;
    q.meta.kind = "Queue";
    q.meta.name = q.meta.uid = "q" + std::to_string(next_id_++);
    q.meta.creation = kNow - Int(0, 4) * 60;  // many equal creation times: name breaks ties
    q.parent = parent;
    if (!Chance(0.2)) q.priority = Pick<int>({1, 2, 3, 100});
    q.has_resources = true;
    // Deeper queues get smaller quotas, so that levels both fit and oversubscribe their total.
    q.gpu = RandomResource(scale_[0] / level, kGpu);
    q.cpu = RandomResource(scale_[1] / level, kCore);
    q.memory = RandomResource(scale_[2] / level, kGi);
    const std::string name = q.meta.name;
    if (time_based_) {
      auto u = [&] {
        return Chance(0.3) ? 0.0 : std::uniform_real_distribution<double>(0, 1)(rng_);
      };
      t.usage[name] = {u(), u(), u()};
    }
    t.state.queues.push_back(std::move(q));
    const bool has_children = level < depth && (level == 1 || Chance(0.75));
    if (has_children) {
      const int children = Int(1, 6);
      for (int i = 0; i < children; ++i) AddQueue(t, name, level + 1, depth);
      return;
    }
    if (!Chance(0.8)) return;  // a leaf with nothing pending
    // Pending requests: one pod per leaf, GPU in whole or half devices (sometimes 0.1).
    const int64_t gpu = Chance(0.2) ? Int(0, 40) * 100 : Int(0, 2 * 12) * kGpu / 2;
    Resources r = Req(gpu, Int(0, 100 * kCore), Int(0, int64_t{100} * kGi));
    t.own_request[name] = r;
    PodGroupObject pg;
    pg.meta.kind = "PodGroup";
    pg.meta.name = pg.meta.uid = "pg-" + name;
    pg.meta.ns = "default";
    pg.meta.creation = kNow - 600;
    pg.queue = name;
    t.state.pod_groups.push_back(std::move(pg));
    PodObject p;
    p.meta.kind = "Pod";
    p.meta.name = p.meta.uid = "pod-" + name;
    p.meta.ns = "default";
    p.meta.creation = kNow - 600;
    p.scheduler_name = "kai-scheduler";
    p.pod_group = "pg-" + name;
    p.request = r;
    t.state.pods.push_back(std::move(p));
  }

  std::mt19937_64 rng_;
  std::array<int64_t, 3> scale_{};
  bool time_based_ = false;
  int next_id_ = 0;
};

Snapshot ComputeTree(const RandomTree& t) {
  Snapshot snap = BuildSnapshot(t.state, kNow);
  for (const auto& [name, u] : t.usage) snap.queues[snap.queue_by_name.at(name)].usage = u;
  ComputeQueueShares(snap, t.k_value);
  return snap;
}

int64_t FloorUnitOf(CoreResource r) { return r == CoreResource::kGpu ? kGpu : 1; }

// The invariants of one level (siblings dividing `total`), per resource. What holds, from
// resource_division.go (kai-semantics.md §3.2), with requestable = min(requested, limit) and
// deserved part = min(quota (-1: the whole total), requestable):
//  1. every queue gets at least its deserved part, even when the siblings' quotas oversubscribe
//     the level (setDeservedResource ignores the total);
//  2. over quota a queue is given at most its remaining request, plus at most one floor unit of
//     top-up, and only while it was still short: fair share < requestable + 1 floor unit (so
//     with a limit, < limit + 1 GPU; a limit of 0 gets exactly 0);
//  3. the level hands out at most the total, unless the deserved parts alone exceed it:
//     sum <= max(total, sum of deserved parts);
//  4. without time-based usage the surplus is not left idle while a weighted queue is short:
//     if the sum stays below the total (and the deserved parts fit), every queue with
//     weight > 0 got all it can use. (With usage, P = max(0, ...) can be 0 for every short
//     queue, and KAI then leaves the rest undivided.)
// How often each case came up, so that the generator is seen to reach them all.
struct LevelStats {
  int levels = 0;             // (level, resource) pairs checked
  int surplus = 0;            // deserved parts left something over quota to divide
  int oversubscribed = 0;     // deserved parts alone exceeded the level total
  int fully_divided = 0;      // surplus divided to the last unit
  int above_requestable = 0;  // a queue's fair share exceeded its requestable (top-up)
};

void CheckLevel(const Snapshot& snap, const std::vector<QueueId>& level, const Resources& total,
                bool time_based, LevelStats& stats) {
  for (CoreResource r : kQueueResources) {
    const int64_t unit = FloorUnitOf(r);
    const int64_t level_total = std::max<int64_t>(total.Get(r), 0);
    int64_t sum_fs = 0, sum_deserved = 0;
    for (QueueId id : level) {
      const SnapQueue& q = snap.queues[id];
      const QueueQuota& quota = q.Quota(r);
      const int64_t requested = q.requested.Get(r);
      const int64_t requestable = quota.limit < 0 ? requested : std::min(requested, quota.limit);
      const int64_t deserved = quota.quota < 0 ? level_total : quota.quota;
      const int64_t deserved_part = std::min(deserved, requestable);
      const int64_t fs = q.fair_share.Get(r);
      sum_fs += fs;
      sum_deserved += deserved_part;
      stats.above_requestable += fs > requestable;
      EXPECT_GE(fs, deserved_part) << q.name << " " << CoreResourceName(r);
      EXPECT_LT(fs, requestable + unit) << q.name << " " << CoreResourceName(r);
      if (quota.limit >= 0) {
        EXPECT_LT(fs, quota.limit + unit) << q.name;
      }
      if (quota.limit == 0) {
        EXPECT_EQ(fs, 0) << q.name;
      }
    }
    EXPECT_LE(sum_fs, std::max(level_total, sum_deserved)) << CoreResourceName(r);
    ++stats.levels;
    stats.surplus += sum_deserved < level_total;
    stats.oversubscribed += sum_deserved > level_total;
    stats.fully_divided += sum_deserved < level_total && sum_fs == level_total;
    if (!time_based && sum_deserved < level_total && sum_fs < level_total) {
      for (QueueId id : level) {
        const SnapQueue& q = snap.queues[id];
        const QueueQuota& quota = q.Quota(r);
        if (quota.weight_milli <= 0) continue;
        const int64_t requested = q.requested.Get(r);
        const int64_t requestable = quota.limit < 0 ? requested : std::min(requested, quota.limit);
        EXPECT_GE(q.fair_share.Get(r), requestable)
            << q.name << " " << CoreResourceName(r) << ": short while " << level_total - sum_fs
            << " stayed undivided";
      }
    }
  }
  for (QueueId id : level) {
    const SnapQueue& q = snap.queues[id];
    if (!q.IsLeaf()) CheckLevel(snap, q.children, q.fair_share, time_based, stats);
  }
}

// requested rolls up: each queue's is its own pending pods plus its children's.
Resources CheckRollUp(const Snapshot& snap, QueueId id, const RandomTree& t) {
  const SnapQueue& q = snap.queues[id];
  Resources sum;
  if (auto it = t.own_request.find(std::string(q.name)); it != t.own_request.end()) {
    sum.milli_cpu = it->second.milli_cpu;
    sum.memory = it->second.memory;
    sum.milli_gpu = it->second.milli_gpu;
  }
  for (QueueId c : q.children) sum += CheckRollUp(snap, c, t);
  EXPECT_EQ(q.requested, sum) << q.name;
  return sum;
}

std::map<std::string, Resources> SharesByName(const Snapshot& snap) {
  std::map<std::string, Resources> out;
  for (const SnapQueue& q : snap.queues) out[std::string(q.name)] = q.fair_share;
  return out;
}

TEST(ProportionPropertyTest, RandomTreesKeepTheDivisionInvariants) {
  constexpr int kTrees = 3000;
  int queues_seen = 0, time_based_trees = 0;
  LevelStats stats;
  for (uint64_t seed = 1; seed <= kTrees; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TreeGenerator gen(seed);
    RandomTree t = gen.Make();
    const bool time_based = !t.usage.empty() && t.k_value > 0;
    time_based_trees += time_based;
    const Snapshot snap = ComputeTree(t);
    queues_seen += static_cast<int>(snap.queues.size());
    EXPECT_EQ(snap.fair_share_capacity, FairShareCapacity(snap));
    for (QueueId root : snap.root_queues) CheckRollUp(snap, root, t);
    CheckLevel(snap, snap.root_queues, snap.fair_share_capacity, time_based, stats);

    // The input order of queues (and of pods and pod groups) does not matter.
    const auto expected = SharesByName(snap);
    std::shuffle(t.state.queues.begin(), t.state.queues.end(), gen.rng());
    std::shuffle(t.state.pods.begin(), t.state.pods.end(), gen.rng());
    std::shuffle(t.state.pod_groups.begin(), t.state.pod_groups.end(), gen.rng());
    EXPECT_EQ(SharesByName(ComputeTree(t)), expected);
    if (HasFailure()) break;  // one failing tree is enough to debug
  }
  EXPECT_GT(queues_seen, kTrees * 5);
  EXPECT_GT(time_based_trees, kTrees / 10);
  RecordProperty("levels", stats.levels);
  RecordProperty("levels_with_surplus", stats.surplus);
  RecordProperty("levels_oversubscribed", stats.oversubscribed);
  EXPECT_GT(stats.surplus, stats.levels / 10);
  EXPECT_GT(stats.fully_divided, stats.levels / 20);
  EXPECT_GT(stats.oversubscribed, stats.levels / 20);
  EXPECT_GT(stats.above_requestable, 0);
}

}  // namespace
}  // namespace kai::plugins::proportion
