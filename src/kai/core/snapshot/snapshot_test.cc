#include "kai/core/snapshot/snapshot.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/testing.h"
#include "kai/core/snapshot/gpu_accounting.h"

namespace kai {
namespace {

// 2025-01-01T12:00:00Z, the scenario corpus' clock.
constexpr UnixSeconds kNow = 1735732800;

constexpr const char* kBase = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '10', memory: 10Gi, nvidia.com/gpu: '4', pods: '110'}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-node}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: default}
spec: {queue: q1}
)";

struct PodSpec {
  std::string name;
  std::string phase = "Pending";
  std::string node;
  std::string deletion;  // RFC 3339
  bool gated = false;
  std::string cpu = "1";
  std::string gpu;
};

std::string PodYaml(const PodSpec& p) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + p.name +
                  "\n  namespace: default\n  annotations: {pod-group-name: pg}\n";
  if (!p.deletion.empty()) y += "  deletionTimestamp: '" + p.deletion + "'\n";
  y += "spec:\n  schedulerName: kai-scheduler\n";
  if (!p.node.empty()) y += "  nodeName: " + p.node + "\n";
  if (p.gated) y += "  schedulingGates: [{name: wait}]\n";
  y += "  containers:\n  - name: c\n    resources:\n      requests: {cpu: '" + p.cpu + "'}\n";
  if (!p.gpu.empty()) y += "      limits: {nvidia.com/gpu: '" + p.gpu + "'}\n";
  y += "status: {phase: " + p.phase + "}\n";
  return y;
}

std::string BindRequestYaml(const std::string& pod, const std::string& node,
                            const std::string& phase = "") {
  std::string y =
      "apiVersion: scheduling.run.ai/v1alpha2\nkind: BindRequest\nmetadata:\n  name: bind-" + pod +
      "\n  namespace: default\nspec: {podName: " + pod + ", selectedNode: " + node + "}\n";
  if (!phase.empty()) y += "status: {phase: " + phase + "}\n";
  return y;
}

ClusterState Load(const std::vector<std::string>& docs) { return testing::LoadDocs(docs); }

ClusterState LoadPods(const std::vector<PodSpec>& pods, std::vector<std::string> extra = {}) {
  std::vector<std::string> docs = {kBase};
  for (const auto& p : pods) docs.push_back(PodYaml(p));
  docs.insert(docs.end(), extra.begin(), extra.end());
  return Load(docs);
}

const SnapPod& PodNamed(const Snapshot& snap, std::string_view name) {
  for (const auto& p : snap.pods) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no pod " << name;
  return snap.pods.front();
}

PodStatus StatusOf(const std::vector<PodSpec>& pods, std::string_view name,
                   std::vector<std::string> extra = {}) {
  const ClusterState state = LoadPods(pods, std::move(extra));
  const Snapshot snap = BuildSnapshot(state, kNow);
  return PodNamed(snap, name).status;
}

Resources Cpu(int64_t milli) {
  Resources r;
  r.milli_cpu = milli;
  return r;
}

// ---- Pod status derivation. ----

TEST(PodStatusTest, Pending) { EXPECT_EQ(StatusOf({{.name = "p"}}, "p"), PodStatus::kPending); }

TEST(PodStatusTest, Running) {
  EXPECT_EQ(StatusOf({{.name = "p", .phase = "Running", .node = "n1"}}, "p"), PodStatus::kRunning);
}

TEST(PodStatusTest, ReleasingWhenDeletionIsRecent) {
  EXPECT_EQ(StatusOf({{.name = "p",
                       .phase = "Running",
                       .node = "n1",
                       .deletion = "2025-01-01T11:58:01Z"}},  // 119 s ago
                     "p"),
            PodStatus::kReleasing);
}

TEST(PodStatusTest, StuckInReleasingAfter120Seconds) {
  EXPECT_EQ(StatusOf({{.name = "p",
                       .phase = "Running",
                       .node = "n1",
                       .deletion = "2025-01-01T11:58:00Z"}},  // exactly 120 s ago
                     "p"),
            PodStatus::kStuckInReleasing);
}

TEST(PodStatusTest, PendingPodWithOldDeletionIsReleasingNotStuck) {
  EXPECT_EQ(StatusOf({{.name = "p", .node = "n1", .deletion = "2025-01-01T10:00:00Z"}}, "p"),
            PodStatus::kReleasing);
}

TEST(PodStatusTest, BoundWhenPendingWithNodeName) {
  EXPECT_EQ(StatusOf({{.name = "p", .node = "n1"}}, "p"), PodStatus::kBound);
}

TEST(PodStatusTest, BindingWhenABindRequestExists) {
  const ClusterState state = LoadPods({{.name = "p"}}, {BindRequestYaml("p", "n1")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapPod& p = PodNamed(snap, "p");
  EXPECT_EQ(p.status, PodStatus::kBinding);
  ASSERT_NE(p.node, kNone);
  EXPECT_EQ(snap.nodes[p.node].name, "n1");  // the node comes from the BindRequest
  EXPECT_EQ(snap.nodes[p.node].used.milli_cpu, 1000);
}

TEST(PodStatusTest, FailedBindRequestIsIgnored) {
  EXPECT_EQ(StatusOf({{.name = "p"}}, "p", {BindRequestYaml("p", "n1", "Failed")}),
            PodStatus::kPending);
}

TEST(PodStatusTest, Gated) {
  EXPECT_EQ(StatusOf({{.name = "p", .gated = true}}, "p"), PodStatus::kGated);
}

TEST(PodStatusTest, Succeeded) {
  EXPECT_EQ(StatusOf({{.name = "p", .phase = "Succeeded", .node = "n1"}}, "p"),
            PodStatus::kSucceeded);
}

TEST(PodStatusTest, Failed) {
  EXPECT_EQ(StatusOf({{.name = "p", .phase = "Failed", .node = "n1"}}, "p"), PodStatus::kFailed);
}

TEST(PodStatusTest, SucceededWinsOverDeletion) {
  EXPECT_EQ(
      StatusOf(
          {{.name = "p", .phase = "Succeeded", .node = "n1", .deletion = "2025-01-01T11:00:00Z"}},
          "p"),
      PodStatus::kSucceeded);
}

TEST(PodStatusTest, Names) {
  EXPECT_EQ(PodStatusName(PodStatus::kPending), "Pending");
  EXPECT_EQ(PodStatusName(PodStatus::kStuckInReleasing), "StuckInReleasing");
  EXPECT_EQ(PodStatusName(PodStatus::kFailed), "Failed");
}

TEST(PodStatusTest, StatusGroups) {
  EXPECT_TRUE(IsActiveAllocated(PodStatus::kPipelined));
  EXPECT_FALSE(IsActiveAllocated(PodStatus::kReleasing));
  EXPECT_TRUE(IsActiveUsed(PodStatus::kReleasing));
  EXPECT_TRUE(IsActiveUsed(PodStatus::kStuckInReleasing));
  EXPECT_FALSE(IsActiveUsed(PodStatus::kPending));
  EXPECT_TRUE(IsAlive(PodStatus::kGated));
  EXPECT_FALSE(IsAlive(PodStatus::kSucceeded));
}

// ---- Node accounting. ----

TEST(NodeAccountingTest, RunningPodUsesIdle) {
  const ClusterState state =
      LoadPods({{.name = "r", .phase = "Running", .node = "n1", .cpu = "2"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle.milli_cpu, 8000);
  EXPECT_EQ(n.used.milli_cpu, 2000);
  EXPECT_EQ(n.releasing.milli_cpu, 0);
  EXPECT_EQ(n.idle.pods, 109);
  ASSERT_EQ(n.pods.size(), 1u);
}

TEST(NodeAccountingTest, ReleasingPodMovesIdleToReleasing) {
  const ClusterState state = LoadPods({{.name = "r", .phase = "Running", .node = "n1", .cpu = "2"},
                                       {.name = "x",
                                        .phase = "Running",
                                        .node = "n1",
                                        .deletion = "2025-01-01T11:59:00Z",
                                        .cpu = "3"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle.milli_cpu, 5000);
  EXPECT_EQ(n.releasing.milli_cpu, 3000);
  EXPECT_EQ(n.used.milli_cpu, 5000);
  EXPECT_EQ(n.pods.size(), 2u);
}

TEST(NodeAccountingTest, StuckInReleasingCountsAsUsedNotReleasing) {
  const ClusterState state = LoadPods({{.name = "x",
                                        .phase = "Running",
                                        .node = "n1",
                                        .deletion = "2025-01-01T11:00:00Z",
                                        .cpu = "3"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle.milli_cpu, 7000);
  EXPECT_EQ(n.releasing.milli_cpu, 0);
  EXPECT_EQ(n.used.milli_cpu, 3000);
}

TEST(NodeAccountingTest, FinishedAndPendingPodsTakeNothing) {
  const ClusterState state = LoadPods({{.name = "s", .phase = "Succeeded", .node = "n1"},
                                       {.name = "f", .phase = "Failed", .node = "n1"},
                                       {.name = "p"},
                                       {.name = "g", .gated = true}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle, n.allocatable);
  EXPECT_TRUE(n.used.IsZero());
  EXPECT_TRUE(n.pods.empty());
}

TEST(NodeAccountingTest, BoundPodUsesIdle) {
  const ClusterState state = LoadPods({{.name = "b", .node = "n1", .cpu = "4"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle.milli_cpu, 6000);
  EXPECT_EQ(n.used.milli_cpu, 4000);
}

SnapPod PodOf(Resources r) {
  SnapPod p;
  p.request = std::move(r);
  return p;
}

TEST(NodeAccountingTest, PipelinedSubtractsFromReleasing) {
  SnapNode n;
  n.allocatable = Cpu(10000);
  n.idle = n.allocatable;
  SnapPod p3 = PodOf(Cpu(3000)), p2 = PodOf(Cpu(2000));
  AddPodToNode(n, p3, PodStatus::kReleasing);
  EXPECT_EQ(n.idle.milli_cpu, 7000);
  EXPECT_EQ(n.releasing.milli_cpu, 3000);
  AddPodToNode(n, p2, PodStatus::kPipelined);
  EXPECT_EQ(n.idle.milli_cpu, 7000);
  EXPECT_EQ(n.releasing.milli_cpu, 1000);
  EXPECT_EQ(n.used.milli_cpu, 5000);
  RemovePodFromNode(n, p2, PodStatus::kPipelined);
  EXPECT_EQ(n.releasing.milli_cpu, 3000);
  EXPECT_EQ(n.used.milli_cpu, 3000);
  RemovePodFromNode(n, p3, PodStatus::kReleasing);
  EXPECT_EQ(n.idle.milli_cpu, 10000);
  EXPECT_EQ(n.releasing.milli_cpu, 0);
  EXPECT_EQ(n.used.milli_cpu, 0);
}

TEST(NodeAccountingTest, AddThenRemoveIsIdentityForEveryStatus) {
  for (PodStatus s :
       {PodStatus::kAllocated, PodStatus::kPipelined, PodStatus::kBinding, PodStatus::kBound,
        PodStatus::kRunning, PodStatus::kReleasing, PodStatus::kStuckInReleasing}) {
    SnapNode n;
    n.allocatable = Cpu(10000);
    n.idle = n.allocatable;
    const SnapNode before = n;
    SnapPod pod = PodOf(Cpu(1500));
    AddPodToNode(n, pod, s);
    RemovePodFromNode(n, pod, s);
    EXPECT_EQ(n.idle, before.idle) << PodStatusName(s);
    EXPECT_EQ(n.releasing, before.releasing) << PodStatusName(s);
    EXPECT_EQ(n.used, before.used) << PodStatusName(s);
  }
}

TEST(NodeAccountingTest, ResourcesTheNodeLacksAreNotTracked) {
  const ClusterState state =
      LoadPods({{.name = "r", .phase = "Running", .node = "cpu-node", .cpu = "1", .gpu = "1"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("cpu-node")];
  EXPECT_EQ(n.used.milli_gpu, 0);
  EXPECT_EQ(n.idle.milli_gpu, 0);
  EXPECT_EQ(n.used.milli_cpu, 1000);
}

TEST(NodeAccountingTest, GpuPodOnGpuNode) {
  const ClusterState state =
      LoadPods({{.name = "r", .phase = "Running", .node = "n1", .cpu = "1", .gpu = "2"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const SnapNode& n = snap.nodes[snap.node_by_name.at("n1")];
  EXPECT_EQ(n.idle.milli_gpu, 2000);
  EXPECT_EQ(n.used.milli_gpu, 2000);
  EXPECT_TRUE(IsGpuNode(n));
  EXPECT_FALSE(IsCpuOnly(PodNamed(snap, "r")));
}

// A 4-GPU node of 100 MiB devices, `idle` whole GPUs idle, with the given shared groups.
SnapNode SharedNode(int64_t idle, std::vector<GpuGroup> groups) {
  SnapNode n;
  n.allocatable.milli_gpu = 4000;
  n.idle.milli_gpu = idle;
  n.gpu_memory_mib = 100;
  n.gpu_groups = std::move(groups);
  return n;
}

TEST(AvailableGpusTest, WholeGpusAndTheFreeFractionsOfSharedOnes) {
  // 1 idle GPU; a group a third allocated; a group half allocated, a fifth of it releasing.
  const SnapNode n =
      SharedNode(1000, {{.name = "a", .used = 33, .allocated = 33},
                        {.name = "b", .used = 50, .releasing = 20, .allocated = 50}});
  const GpuAmount a = AvailableGpus(n);
  EXPECT_EQ(a.milli_gpu, 1000 + 670 + 500 + 200);
  EXPECT_EQ(a.memory_mib, 100 + 67 + 50 + 20);
}

TEST(AvailableGpusTest, FractionsRoundUpInFloat64AsKai) {
  // KAI: ceil(7 / 100 * 100) / 100 is 0.08 in float64 (7.000000000000001 rounds up).
  EXPECT_EQ(AvailableGpus(SharedNode(0, {{.name = "a", .used = 7, .allocated = 7}})).milli_gpu,
            920);
}

TEST(AvailableGpusTest, AGroupReleasingAllItUsesCountsOnlyAsAWholeReleasingGpu) {
  SnapNode n = SharedNode(
      0, {{.name = "a", .used = 40, .releasing = 40, .allocated = 40, .marked_releasing = true}});
  n.releasing.milli_gpu = 1000;  // the group's GPU, counted by the group rules
  EXPECT_EQ(AvailableGpus(n).milli_gpu, 1000 + 600);
}

TEST(ReleasingGpusTest, PromisedToPipelinedPodsFromIdleAndFromReleasing) {
  Snapshot snap;
  Resources one_gpu;
  one_gpu.milli_gpu = 1000;
  Resources two_gpus;
  two_gpus.milli_gpu = 2000;
  snap.nodes.push_back(SharedNode(4000, {}));
  SnapNode& n = snap.nodes.back();
  const std::vector<std::pair<Resources, PodStatus>> pods = {{one_gpu, PodStatus::kReleasing},
                                                             {two_gpus, PodStatus::kPipelined}};
  for (const auto& [request, status] : pods) {
    snap.pods.push_back(PodOf(request));
    snap.pods.back().status = status;
    AddPodToNode(n, snap.pods.back(), status);
    n.pods.push_back(static_cast<PodId>(snap.pods.size() - 1));
  }
  const ReleasingGpus r = BreakdownReleasing(snap, n);
  EXPECT_EQ(r.kai, -1000);  // KAI's figure: 1 being freed - 2 promised
  EXPECT_EQ(r.freed, 1000);
  EXPECT_EQ(r.promised, 2000);
  EXPECT_EQ(r.promised_from_idle, 1000);
}

TEST(SnapshotTest, JobsCollectTheirPods) {
  const ClusterState state =
      LoadPods({{.name = "a", .phase = "Running", .node = "n1"}, {.name = "b"}});
  const Snapshot snap = BuildSnapshot(state, kNow);
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].pods.size(), 2u);
  EXPECT_EQ(snap.jobs[0].active_allocated, 1);
  EXPECT_EQ(snap.jobs[0].queue, snap.queue_by_name.at("q1"));
  EXPECT_EQ(PodNamed(snap, "a").job, 0);
}

// ---- Job priority and preemptibility. ----

std::string PriorityClassYaml(const std::string& name, int value, bool global_default = false) {
  return "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + (global_default ? "\nglobalDefault: true\n" : "\n");
}

std::string PodGroupYaml(const std::string& name, const std::string& priority_class,
                         const std::string& preemptibility = "") {
  std::string y =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: default}\nspec:\n  queue: q1\n";
  if (!priority_class.empty()) y += "  priorityClassName: " + priority_class + "\n";
  if (!preemptibility.empty()) y += "  preemptibility: " + preemptibility + "\n";
  return y;
}

const SnapJob& JobNamed(const Snapshot& snap, std::string_view name) {
  for (const auto& j : snap.jobs) {
    if (j.name == name) return j;
  }
  ADD_FAILURE() << "no job " << name;
  return snap.jobs.front();
}

TEST(JobPriorityTest, FromPriorityClass) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("train", 50), PriorityClassYaml("build", 100),
            PodGroupYaml("j1", "build"), PodGroupYaml("j2", "train")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(JobNamed(snap, "j1").priority, 100);
  EXPECT_EQ(JobNamed(snap, "j2").priority, 50);
}

TEST(JobPriorityTest, MissingClassDefaultsTo50) {
  const ClusterState state = Load(
      {kBase, PriorityClassYaml("build", 100), PodGroupYaml("j1", "nope"), PodGroupYaml("j2", "")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(JobNamed(snap, "j1").priority, 50);
  EXPECT_EQ(JobNamed(snap, "j2").priority, 50);
  EXPECT_TRUE(JobNamed(snap, "j1").preemptible);
}

TEST(JobPriorityTest, GlobalDefaultUsedWhenNamedClassIsMissing) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("build", 100), PriorityClassYaml("fallback", 75, true),
            PodGroupYaml("j1", "nope"), PodGroupYaml("j2", ""), PodGroupYaml("j3", "build")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(JobNamed(snap, "j1").priority, 75);
  EXPECT_EQ(JobNamed(snap, "j2").priority, 75);
  EXPECT_EQ(JobNamed(snap, "j3").priority, 100);
}

TEST(JobPriorityTest, GlobalDefaultListedAfterNamedClassDoesNotOverride) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("train", 40), PriorityClassYaml("fallback", 75, true),
            PodGroupYaml("j1", "train")});
  EXPECT_EQ(JobNamed(BuildSnapshot(state, kNow), "j1").priority, 40);
}

TEST(PreemptibilityTest, PriorityAtLeast100IsNonPreemptible) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("build", 100), PriorityClassYaml("almost", 99),
            PodGroupYaml("j1", "build"), PodGroupYaml("j2", "almost")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_FALSE(JobNamed(snap, "j1").preemptible);
  EXPECT_TRUE(JobNamed(snap, "j2").preemptible);
}

TEST(PreemptibilityTest, ExplicitPreemptibleOverridesHighPriority) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("build", 100), PodGroupYaml("j1", "build", "preemptible")});
  EXPECT_TRUE(JobNamed(BuildSnapshot(state, kNow), "j1").preemptible);
}

TEST(PreemptibilityTest, ExplicitNonPreemptibleOverridesLowPriority) {
  const ClusterState state =
      Load({kBase, PriorityClassYaml("train", 50), PodGroupYaml("j1", "train", "non-preemptible")});
  EXPECT_FALSE(JobNamed(BuildSnapshot(state, kNow), "j1").preemptible);
}

// ---- Queues. ----

TEST(SnapshotTest, QueueTreeAndDefaults) {
  const ClusterState state =
      Load({"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept}\n"
            "spec: {priority: 7}\n",
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: leaf}\n"
            "spec: {parentQueue: dept}\n"});
  const Snapshot snap = BuildSnapshot(state, kNow);
  const QueueId dept = snap.queue_by_name.at("dept");
  const QueueId leaf = snap.queue_by_name.at("leaf");
  ASSERT_EQ(snap.root_queues, std::vector<QueueId>{dept});
  EXPECT_EQ(snap.queues[leaf].parent, dept);
  EXPECT_EQ(snap.queues[dept].children, std::vector<QueueId>{leaf});
  EXPECT_TRUE(snap.queues[leaf].IsLeaf());
  EXPECT_EQ(snap.queues[dept].priority, 7);
  EXPECT_EQ(snap.queues[leaf].priority, 100);
}

}  // namespace
}  // namespace kai

namespace kai {
namespace {

// status.nominatedNodeName resolves to a node id once, in the snapshot; a name that is not a
// node of the snapshot nominates nothing.
TEST(SnapshotPods, NominatedNodeResolvesToANodeOfTheSnapshot) {
  std::string to_n1 = PodYaml({.name = "to-n1"});
  std::string to_gone = PodYaml({.name = "to-gone"});
  to_n1.replace(to_n1.rfind("status: {"), std::string::npos,
                "status: {phase: Pending, nominatedNodeName: n1}\n");
  to_gone.replace(to_gone.rfind("status: {"), std::string::npos,
                  "status: {phase: Pending, nominatedNodeName: gone}\n");
  const ClusterState state = Load({kBase, to_n1, to_gone, PodYaml({.name = "plain"})});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_EQ(PodNamed(snap, "to-n1").nominated, snap.node_by_name.at("n1"));
  EXPECT_EQ(PodNamed(snap, "to-gone").nominated, kNone);
  EXPECT_EQ(PodNamed(snap, "plain").nominated, kNone);
}

// What placement checks need to know of the pod's constraints is read when the snapshot is built.
TEST(SnapshotPods, ConstraintFlagsFollowThePodSpec) {
  auto with_spec = [](const std::string& name, const std::string& spec_line) {
    std::string y = PodYaml({.name = name});
    y.insert(y.find("spec:\n") + 6, spec_line);
    return y;
  };
  const ClusterState state =
      Load({kBase, PodYaml({.name = "plain"}), with_spec("selector", "  nodeSelector: {zone: a}\n"),
            with_spec("node-affinity",
                      "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: "
                      "[a]}]}]}}}\n"),
            with_spec("anti",
                      "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuring"
                      "Execution: [{topologyKey: zone, labelSelector: {matchLabels: {app: "
                      "x}}}]}}\n"),
            with_spec("preferred",
                      "  affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuring"
                      "Execution: [{weight: 5, podAffinityTerm: {topologyKey: zone, "
                      "labelSelector: {matchLabels: {app: x}}}}]}}\n")});
  const Snapshot snap = BuildSnapshot(state, kNow);
  EXPECT_FALSE(PodNamed(snap, "plain").selects_nodes);
  EXPECT_FALSE(PodNamed(snap, "plain").requires_pod_affinity);
  EXPECT_TRUE(PodNamed(snap, "selector").selects_nodes);
  EXPECT_TRUE(PodNamed(snap, "node-affinity").selects_nodes);
  EXPECT_FALSE(PodNamed(snap, "node-affinity").requires_pod_affinity);
  EXPECT_TRUE(PodNamed(snap, "anti").requires_pod_affinity);
  EXPECT_FALSE(PodNamed(snap, "anti").prefers_pod_affinity);
  EXPECT_FALSE(PodNamed(snap, "anti").selects_nodes);
  EXPECT_TRUE(PodNamed(snap, "preferred").prefers_pod_affinity);
  EXPECT_FALSE(PodNamed(snap, "preferred").requires_pod_affinity);
}

}  // namespace
}  // namespace kai
