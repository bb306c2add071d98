// The topology plugin through one allocate cycle of `kai simulate`'s engine.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

// Builds a world: a Topology zone > rack (alias "r"), nodes with GPUs and labels, one queue
// without limits, PodGroups of one-GPU pods.
class World {
 public:
  World() { yaml_ = std::string(testutil::kZoneRackTopology) + testutil::kUnlimitedQueue; }
  // `labels` in YAML flow form without braces, e.g. "zone: z1, rack: r1".
  World& Node(const std::string& name, const std::string& labels, int gpus) {
    yaml_ += "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: {" + labels +
             "}}\nstatus:\n  allocatable: {cpu: '64', memory: 64Gi, pods: '110', "
             "nvidia.com/gpu: '" +
             std::to_string(gpus) + "'}\n---\n";
    return *this;
  }
  // A PodGroup of `pods` one-GPU pods, minMember = pods; `constraint` is the topologyConstraint
  // flow map (empty: none); `running` places the first pods on these nodes.
  World& Job(const std::string& name, int pods, const std::string& constraint,
             const std::vector<std::string>& running = {}, int min_member = -1,
             const std::string& annotations = "") {
    yaml_ +=
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
        ", namespace: default" +
        (annotations.empty() ? "" : ", annotations: {" + annotations + "}") +
        "}\nspec: {queue: q, minMember: " + std::to_string(min_member < 0 ? pods : min_member) +
        (constraint.empty() ? "" : ", topologyConstraint: " + constraint) + "}\n---\n";
    for (int i = 0; i < pods; ++i) {
      const bool runs = static_cast<size_t>(i) < running.size();
      yaml_ += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "-" + std::to_string(i) +
               ", namespace: default, annotations: {pod-group-name: " + name +
               "}}\nspec:\n  schedulerName: kai-scheduler\n" +
               (runs ? "  nodeName: " + running[i] + "\n" : "") +
               "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi, "
               "nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]\n" +
               (runs ? "status: {phase: Running}\n" : "") + "---\n";
    }
    return *this;
  }
  sim::CycleReport Allocate() const { return testutil::AllocateOnce(yaml_); }

 private:
  std::string yaml_;
};

// Node of every pod of `job` ("" when pending), in pod order.
std::vector<std::string> NodesOf(const sim::CycleReport& r, const std::string& job) {
  std::vector<std::string> out;
  for (const auto& p : r.pods) {
    if (p.pod_group == job) out.push_back(p.status == "Pending" ? "" : p.node);
  }
  return out;
}

const Reason* TopologyReasonOf(const sim::CycleReport& r, const std::string& job) {
  for (const auto& p : r.pods) {
    if (p.pod_group != job) continue;
    for (const Reason& reason : p.reasons) {
      if (reason.kind() == ReasonKind::kTopology) return &reason;
    }
  }
  return nullptr;
}

constexpr const char* kRequiredRack = "{topology: dc, requiredTopologyLevel: rack}";

TEST(Topology, RequiredLevelKeepsTheGangInOneRack) {
  // r1 has 1+1 free GPUs on two nodes, r2 has 2 left on b1: the zone has 4 free, no rack 3.
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 1)
                     .Node("a2", "zone: z1, rack: r1", 1)
                     .Node("b1", "zone: z1, rack: r2", 3)
                     .Job("filler", 1, "", {"b1"})
                     .Job("gang", 3, kRequiredRack)
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"", "", ""}));
  const Reason* why = TopologyReasonOf(r, "gang");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->As<kai::TopologyReason>()->level, "rack");
  EXPECT_EQ(why->As<kai::TopologyReason>()->required, 3);
  EXPECT_EQ(why->As<kai::TopologyReason>()->placed, 2);
  EXPECT_EQ(why->As<kai::TopologyReason>()->scope, "zone z1");
  EXPECT_EQ(why->As<kai::TopologyReason>()->scope_free, 4000);
  EXPECT_NE(why->Message().find("4 nvidia.com/gpu free in zone z1, no rack can hold the 3 pods"),
            std::string::npos)
      << why->Message();
}

TEST(Topology, DomainChoiceBinPacksTheFullestRackThatFits) {
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 4)
                     .Node("b1", "zone: z1, rack: r2", 2)
                     .Node("c1", "zone: z1, rack: r3", 1)
                     .Job("gang", 2, kRequiredRack)
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"b1", "b1"}));
}

TEST(Topology, PreferredLevelFallsBackToTheZone) {
  // No rack holds 3 pods; the zone does. Inside it the rack with more free GPUs scores higher
  // (r2 before r1 on a tie: packing order puts r1 first, and the last scores most).
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 2)
                     .Node("b1", "zone: z1, rack: r2", 2)
                     .Job("gang", 3, "{topology: dc, preferredTopologyLevel: rack}")
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"b1", "b1", "a1"}));
}

TEST(Topology, PreferredLevelTriesTheFullestRackThatFitsFirst) {
  // Both racks hold the pod; r1 (3 free) is fuller than r2 (4 free), so its node set is tried
  // first.
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 3)
                     .Node("b1", "zone: z1, rack: r2", 4)
                     .Job("one", 1, "{topology: dc, preferredTopologyLevel: rack}")
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "one"), (std::vector<std::string>{"a1"}));
}

TEST(Topology, RunningPodsPinTheRequiredDomain) {
  // An elastic job (minMember 1) with a pod running in r1 grows in r1 even though r2 is fuller.
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 4)
                     .Node("b1", "zone: z1, rack: r2", 1)
                     .Job("elastic", 2, kRequiredRack, {"a1"}, 1)
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "elastic"), (std::vector<std::string>{"a1", "a1"}));
}

TEST(Topology, NodesOutsideTheTopologyAreNotUsed) {
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 1)
                     .Node("x1", "zone: z1", 8)
                     .Job("gang", 2, kRequiredRack)
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"", ""}));
}

TEST(Topology, LevelsMayBeNamedByAlias) {
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 1)
                     .Node("b1", "zone: z1, rack: r2", 2)
                     .Job("gang", 2, "{topology: dc, requiredTopologyLevel: r}")
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"b1", "b1"}));
}

TEST(Topology, ConstraintFromAnnotations) {
  const auto r =
      World()
          .Node("a1", "zone: z1, rack: r1", 1)
          .Node("b1", "zone: z1, rack: r2", 2)
          .Job("gang", 2, "", {}, -1,
               "kai.scheduler/topology: dc, kai.scheduler/topology-required-placement: rack")
          .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"b1", "b1"}));
}

TEST(Topology, UnknownTopologyOrLevelIsAPendingReason) {
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 2)
                     .Job("nope", 1, "{topology: missing, requiredTopologyLevel: rack}")
                     .Job("badlevel", 1, "{topology: dc, requiredTopologyLevel: block}")
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "nope"), (std::vector<std::string>{""}));
  EXPECT_EQ(NodesOf(r, "badlevel"), (std::vector<std::string>{""}));
  ASSERT_NE(TopologyReasonOf(r, "nope"), nullptr);
  EXPECT_NE(TopologyReasonOf(r, "nope")->Message().find("does not exist"), std::string::npos);
  ASSERT_NE(TopologyReasonOf(r, "badlevel"), nullptr);
  EXPECT_NE(TopologyReasonOf(r, "badlevel")->Message().find("block"), std::string::npos);
}

TEST(Topology, UnconstrainedJobsIgnoreTheTopology) {
  const auto r = World()
                     .Node("a1", "zone: z1, rack: r1", 1)
                     .Node("b1", "zone: z1, rack: r2", 1)
                     .Job("gang", 2, "")
                     .Allocate();
  EXPECT_EQ(NodesOf(r, "gang"), (std::vector<std::string>{"a1", "b1"}));
}

// A PodGroup with two SubGroups, each required to stay in one rack: prefill and decode.
std::string PrefillDecode(const std::string& nodes, int prefill_pods, int decode_pods) {
  std::string y = std::string(testutil::kZoneRackTopology) + testutil::kUnlimitedQueue + nodes +
                  "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\n"
                  "metadata: {name: serve, namespace: default}\nspec:\n  queue: q\n  subGroups:\n";
  for (const auto& [name, pods] : {std::pair{"prefill", prefill_pods}, {"decode", decode_pods}}) {
    y += std::string("  - name: ") + name + "\n    minMember: " + std::to_string(pods) +
         "\n    topologyConstraint: {topology: dc, requiredTopologyLevel: rack}\n";
  }
  y += "---\n";
  for (const auto& [name, pods] : {std::pair{"prefill", prefill_pods}, {"decode", decode_pods}}) {
    for (int i = 0; i < pods; ++i) {
      y += std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ") + name + "-" +
           std::to_string(i) +
           "\n  namespace: default\n  labels: {kai.scheduler/subgroup-name: " + name +
           "}\n  annotations: {pod-group-name: serve}\nspec:\n  schedulerName: kai-scheduler\n"
           "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi, "
           "nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]\n---\n";
    }
  }
  return y;
}

std::string RackNode(const std::string& name, const std::string& rack, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {zone: z1, rack: " + rack +
         "}}\nstatus:\n  allocatable: {cpu: '64', memory: 64Gi, pods: '110', " +
         "nvidia.com/gpu: '" + std::to_string(gpus) + "'}\n---\n";
}

// Rack of every pod whose name starts with `prefix` ("" when pending).
std::set<std::string> RacksOf(const sim::CycleReport& r, const std::string& prefix) {
  std::set<std::string> racks;
  for (const auto& p : r.pods) {
    if (p.name.rfind(prefix, 0) != 0) continue;
    racks.insert(p.status == "Pending" ? ""
                                       : (p.node[0] == 'a'   ? "r1"
                                          : p.node[0] == 'b' ? "r2"
                                                             : "r3"));
  }
  return racks;
}

TEST(Topology, EachSubGroupKeepsItsOwnRack) {
  // r1 and r2 hold 2 GPUs each, r3 holds 3: prefill (3 pods) needs r3, decode (2) one of the
  // others; the whole gang needs more than any one rack.
  const auto r = testutil::AllocateOnce(PrefillDecode(
      RackNode("a1", "r1", 2) + RackNode("b1", "r2", 2) + RackNode("c1", "r3", 3), 3, 2));
  EXPECT_EQ(RacksOf(r, "prefill"), (std::set<std::string>{"r3"}));
  const auto decode = RacksOf(r, "decode");
  ASSERT_EQ(decode.size(), 1u);
  EXPECT_NE(*decode.begin(), "");
  EXPECT_NE(*decode.begin(), "r3");
}

TEST(Topology, SubGroupWithoutARackKeepsTheGangPending) {
  const auto r = testutil::AllocateOnce(
      PrefillDecode(RackNode("a1", "r1", 2) + RackNode("b1", "r2", 2), 3, 1));
  EXPECT_EQ(RacksOf(r, "prefill"), (std::set<std::string>{""}));
  EXPECT_EQ(RacksOf(r, "decode"), (std::set<std::string>{""}));
  const Reason* why = TopologyReasonOf(r, "serve");
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->As<kai::TopologyReason>()->sub_group, "prefill");
  EXPECT_NE(why->Message().find("subgroup prefill"), std::string::npos) << why->Message();
}

}  // namespace
}  // namespace kai
