#include "kai/core/plugins/topology/tree.h"

#include <gtest/gtest.h>

#include <string>

#include "kai/core/k8s/decode.h"
#include "kai/core/plugins/topology/fit.h"
#include "kai/testing/allocate_once.h"

namespace kai::plugins::topology {
namespace {

constexpr UnixSeconds kNow = 1735732800;

std::string Node(const std::string& name, const std::string& labels, int gpus, int used = 0) {
  std::string s = "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: {" +
                  labels + "}\nstatus:\n  allocatable: {cpu: '8', memory: 8Gi, pods: '110', " +
                  "nvidia.com/gpu: '" + std::to_string(gpus) + "'}\n---\n";
  for (int i = 0; i < used; ++i) {
    s += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "-u" + std::to_string(i) +
         ", namespace: default}\nspec:\n  nodeName: " + name +
         "\n  containers: [{name: c, resources: {requests: {nvidia.com/gpu: '1'}, limits: "
         "{nvidia.com/gpu: '1'}}}]\nstatus: {phase: Running}\n---\n";
  }
  return s;
}

// zone z1: racks r1 (n1 2 GPUs free of 4, n2 4 free) and r2 (n3 1 free of 4); zone z2: rack r1
// (n4 4 free); n5 has no rack label.

struct Fixture {
  ClusterState state;
  Snapshot snap;
  Tree tree;
};

Fixture Build() {
  Fixture f;
  const std::string yaml =
      std::string(testutil::kZoneRackTopology) + Node("n1", "zone: z1, rack: r1", 4, 2) +
      Node("n2", "zone: z1, rack: r1", 4) + Node("n3", "zone: z1, rack: r2", 4, 3) +
      Node("n4", "zone: z2, rack: r1", 4) + Node("n5", "zone: z2", 4);
  const auto errors = ProblemsOf(DecodeManifestText(yaml, "t.yaml", f.state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  f.snap = BuildSnapshot(f.state, kNow);
  f.tree = BuildTree(f.state.topologies[0], f.snap);
  return f;
}

// `pods` tasks asking `milli_gpu` in all (no per-task counting).
Demand SummedGpus(int64_t milli_gpu, int pods) {
  Demand d;
  d.total.milli_gpu = milli_gpu;
  d.pods = pods;
  return d;
}

DomainId Find(const Tree& t, const std::string& id) {
  for (size_t i = 0; i < t.domains.size(); ++i) {
    if (t.domains[i].id == id) return static_cast<DomainId>(i);
  }
  return -1;
}

TEST(TopologyTree, DomainsPerLevelKeyedByTheValuesAbove) {
  const Fixture f = Build();
  // root, z1, z1.r1, z1.r2, z2, z2.r1: rack r1 of z1 and of z2 are different domains.
  EXPECT_EQ(f.tree.domains.size(), 6u);
  const DomainId z1r1 = Find(f.tree, "z1.r1");
  const DomainId z2r1 = Find(f.tree, "z2.r1");
  ASSERT_GE(z1r1, 0);
  ASSERT_GE(z2r1, 0);
  EXPECT_EQ(f.tree.domains[z1r1].nodes, (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(f.tree.domains[z2r1].nodes, (std::vector<NodeId>{3}));
  EXPECT_EQ(f.tree.domains[kRootDomain].nodes.size(), 4u);
}

TEST(TopologyTree, NodeMissingALevelLabelIsOutsideTheTopology) {
  const Fixture f = Build();
  EXPECT_EQ(f.tree.leaf_of_node[4], -1);
  EXPECT_EQ(f.tree.leaf_of_node[0], Find(f.tree, "z1.r1"));
}

TEST(TopologyTree, LevelsResolveByLabelOrAlias) {
  const Fixture f = Build();
  EXPECT_EQ(f.tree.FindLevel("zone"), 0);
  EXPECT_EQ(f.tree.FindLevel("rack"), 1);
  EXPECT_EQ(f.tree.FindLevel("r"), 1);
  EXPECT_FALSE(f.tree.FindLevel("block").has_value());
}

TEST(TopologyTree, AncestorsAndContainment) {
  const Fixture f = Build();
  const DomainId z1 = Find(f.tree, "z1");
  const DomainId z1r2 = Find(f.tree, "z1.r2");
  EXPECT_EQ(f.tree.AncestorAt(z1r2, 0), z1);
  EXPECT_EQ(f.tree.AncestorAt(z1r2, kRootLevel), kRootDomain);
  EXPECT_TRUE(f.tree.Contains(z1, z1r2));
  EXPECT_FALSE(f.tree.Contains(z1r2, z1));
  EXPECT_FALSE(f.tree.Contains(Find(f.tree, "z2"), z1r2));
}

TEST(TopologyFit, HomogeneousTasksAreCountedPerNode) {
  Fixture f = Build();
  Demand d;
  d.largest.milli_gpu = 2000;
  d.largest.pods = 1;
  d.total.milli_gpu = 6000;
  d.pods = 3;
  d.count_pods = true;
  const Evaluator eval(f.tree, f.snap, d, kRootDomain);
  // z1.r1: n1 has 2 free (1 pod), n2 4 free (2 pods): 3 pods fit although 6 GPUs are free.
  EXPECT_EQ(eval.At(Find(f.tree, "z1.r1")).fit_pods, 3);
  EXPECT_TRUE(eval.Fits(Find(f.tree, "z1.r1")));
  EXPECT_EQ(eval.At(Find(f.tree, "z1.r2")).fit_pods, 0);
  EXPECT_EQ(eval.At(Find(f.tree, "z1")).fit_pods, 3);
  EXPECT_FALSE(eval.Fits(Find(f.tree, "z2")));
  EXPECT_EQ(eval.At(kRootDomain).free.milli_gpu, 11000);
}

TEST(TopologyFit, HeterogeneousTasksCompareSummedRequests) {
  Fixture f = Build();
  const Demand d = SummedGpus(5000, 2);
  const Evaluator eval(f.tree, f.snap, d, kRootDomain);
  EXPECT_EQ(eval.At(Find(f.tree, "z1.r1")).fit_pods, -1);
  EXPECT_TRUE(eval.Fits(Find(f.tree, "z1.r1")));   // 6 free
  EXPECT_FALSE(eval.Fits(Find(f.tree, "z2.r1")));  // 4 free
  EXPECT_DOUBLE_EQ(eval.Ratio(Find(f.tree, "z1.r1")), 5.0 / 6.0);
}

TEST(TopologyFit, DomainsOutsideTheScopeHaveNothingFree) {
  Fixture f = Build();
  const Demand d = SummedGpus(1000, 1);
  const Evaluator eval(f.tree, f.snap, d, Find(f.tree, "z1"));
  EXPECT_FALSE(eval.Fits(Find(f.tree, "z2.r1")));
  EXPECT_DOUBLE_EQ(eval.Ratio(Find(f.tree, "z2.r1")), 1000.0);
}

TEST(TopologyFit, PackingPutsTheFullestFittingDomainFirst) {
  Fixture f = Build();
  const Demand d = SummedGpus(1000, 1);
  const Evaluator eval(f.tree, f.snap, d, kRootDomain);
  SortForPacking(f.tree, eval, kRootDomain, 1);
  std::vector<DomainId> racks;
  CollectLevel(f.tree, kRootDomain, 1, racks);
  // z1 (7 free) before z2 (4 free)? No: ratio 1/7 < 1/4, so z2 comes first; in z1, r2 (1 free)
  // before r1 (6 free).
  ASSERT_EQ(racks.size(), 3u);
  EXPECT_EQ(f.tree.domains[racks[0]].id, "z2.r1");
  EXPECT_EQ(f.tree.domains[racks[1]].id, "z1.r2");
  EXPECT_EQ(f.tree.domains[racks[2]].id, "z1.r1");
}

TEST(TopologyFit, BestEffortTasksFitAnywhere) {
  Fixture f = Build();
  Demand d;
  d.largest.pods = 1;
  d.pods = 5;
  d.count_pods = true;
  EXPECT_EQ(NodeAccommodation(d, f.snap.nodes[2]), 5);
}

// A fractional task is counted along the GPU dimension too, as KAI counts it: the node's free
// whole GPUs plus the free fractions of its shared GPUs, over the fraction. n1 has 2 GPUs of
// 100 MiB; a running 0.5 pod shares one (group g1), the other is idle: 1.5 / 0.25 = 6 copies
// (CPU alone would allow 8), 1.5 / 0.5 = 3.
TEST(TopologyFit, FractionalTasksCountFreeFractionsOfSharedGpus) {
  std::string yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {nvidia.com/gpu.memory: '100'}
status:
  allocatable: {cpu: '8', memory: 8Gi, pods: '110', nvidia.com/gpu: '2'}
---
apiVersion: v1
kind: Pod
metadata:
  name: running
  namespace: default
  labels: {runai-gpu-group: g1}
  annotations: {gpu-fraction: '0.5'}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
status: {phase: Running}
)";
  for (const char* f : {"0.25", "0.5"}) {
    yaml += std::string("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p") + f +
            "\n  namespace: default\n  annotations: {gpu-fraction: '" + f +
            "'}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
            "status: {phase: Pending}\n";
  }
  ClusterState state;
  const auto errors = ProblemsOf(DecodeManifestText(yaml, "t.yaml", state));
  ASSERT_TRUE(errors.empty()) << errors.front();
  const Snapshot snap = BuildSnapshot(state, kNow);
  auto copies = [&](const std::string& pod) {
    for (PodId p = 0; p < static_cast<PodId>(snap.pods.size()); ++p) {
      if (snap.pods[p].name != pod) continue;
      const PodId tasks[] = {p};
      Demand d = DemandOf(snap, tasks);
      d.pods = 100;
      return NodeAccommodation(d, snap.nodes[0]);
    }
    return int64_t{-1};
  };
  EXPECT_EQ(copies("p0.25"), 6);
  EXPECT_EQ(copies("p0.5"), 3);
}

}  // namespace
}  // namespace kai::plugins::topology
