// The Grove grouper: a pod of a PodCliqueSet grouped by the PodGang its grove.io/podgang label
// names. Expected values are worked out from KAI's pkg/podgrouper/podgrouper/plugins/grove/.
#include <gtest/gtest.h>

#include "kai/core/podgrouper/hub.h"
#include "kai/core/podgrouper/podgrouper.h"

namespace kai::podgrouper {
namespace {

// A PodCliqueSet -> PodClique -> Pod chain; the PodGang is added per test.
constexpr const char* kWorkload = R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: inference}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 200
---
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: serve
  namespace: team
  uid: pcs-uid
  labels: {kai.scheduler/queue: team-q, from-workload: "yes", shared: workload}
  annotations: {workload-note: "1"}
---
apiVersion: grove.io/v1alpha1
kind: PodClique
metadata:
  name: serve-0-prefill
  namespace: team
  uid: pclq-uid
  ownerReferences:
  - {apiVersion: grove.io/v1alpha1, kind: PodCliqueSet, name: serve, uid: pcs-uid}
---
apiVersion: v1
kind: Pod
metadata:
  name: serve-0-prefill-a
  namespace: team
  uid: pod-uid
  labels: {grove.io/podgang: serve-0, kai.scheduler/queue: team-q}
  ownerReferences:
  - {apiVersion: grove.io/v1alpha1, kind: PodClique, name: serve-0-prefill, uid: pclq-uid}
spec:
  schedulerName: kai-scheduler
)";

constexpr const char* kGang = R"(
apiVersion: scheduler.grove.io/v1alpha1
kind: PodGang
metadata:
  name: serve-0
  namespace: team
  uid: gang-uid
  labels: {shared: gang}
spec:
  priorityClassName: inference
  podgroups:
  - name: serve-0-prefill
    minReplicas: 2
    podReferences:
    - {namespace: team, name: serve-0-prefill-a}
    - {namespace: team, name: serve-0-prefill-b}
  - name: serve-0-decode
    minReplicas: 3
    podReferences:
    - {namespace: team, name: serve-0-decode-a}
)";

void Replace(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

std::vector<Object> Parse(const std::string& yaml) {
  auto objects = ParseObjects(yaml, "test");
  EXPECT_TRUE(objects.ok()) << (objects.ok() ? "" : objects.error().message);
  return objects.ok() ? *objects : std::vector<Object>{};
}

struct World {
  std::vector<Object> objects;
  Object pod;
};

World MakeWorld(const std::string& gang_yaml, const std::string& workload = kWorkload) {
  World w;
  for (Object& o : Parse(workload + std::string("\n---\n") + gang_yaml)) {
    if (o.kind == "Pod") w.pod = o;
    w.objects.push_back(std::move(o));
  }
  return w;
}

Result<Decision> GroupIn(World& w) {
  MemoryReader reader(w.objects);
  return GroupPod(w.pod, reader, GrouperConfig{});
}

PodGroupMetadata MustGroup(World& w) {
  auto d = GroupIn(w);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? d->metadata : PodGroupMetadata{};
}

std::string GroupError(World& w) {
  auto d = GroupIn(w);
  EXPECT_FALSE(d.ok());
  return d.ok() ? "" : d.error().message;
}

// kGang with `spec_extra` appended to its spec and `annotations` as its annotations.
std::string Gang(const std::string& podgroups, const std::string& spec_extra = "",
                 const std::string& annotations = "{}") {
  return "apiVersion: scheduler.grove.io/v1alpha1\nkind: PodGang\nmetadata:\n  name: serve-0\n"
         "  namespace: team\n  uid: gang-uid\n  annotations: " +
         annotations + "\nspec:\n  podgroups:\n" + podgroups + spec_extra;
}

std::string Group(const std::string& name, int min, const std::string& extra = "") {
  return "  - name: " + name + "\n    minReplicas: " + std::to_string(min) +
         "\n    podReferences: [{namespace: team, name: " + name + "-a}]\n" + extra;
}

TEST(GroveGrouper, HubServesPodCliqueSetAndPodGangSet) {
  for (const char* kind : {"PodCliqueSet", "PodGangSet"}) {
    EXPECT_EQ(DefaultHub().For("grove.io", "v1alpha1", kind).Name(), "Grove Grouper") << kind;
  }
}

TEST(GroveGrouper, OnePodGroupPerPodGangWithASubGroupPerGroup) {
  World w = MakeWorld(kGang);
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.name, "pg-serve-0-gang-uid");
  EXPECT_EQ(md.owner.kind, "PodGang");
  EXPECT_EQ(md.owner.uid, "gang-uid");
  EXPECT_EQ(md.queue, "team-q");
  EXPECT_EQ(md.priority_class_name, "inference");  // spec.priorityClassName
  EXPECT_EQ(md.min_member, 5);
  EXPECT_FALSE(md.min_sub_group.has_value());
  ASSERT_EQ(md.sub_groups.size(), 2u);
  EXPECT_EQ(md.sub_groups[0].name, "serve-0-prefill");
  EXPECT_EQ(md.sub_groups[0].min_member, 2);
  EXPECT_FALSE(md.sub_groups[0].parent.has_value());
  EXPECT_FALSE(md.sub_groups[0].topology.has_value());
  EXPECT_EQ(md.sub_groups[1].name, "serve-0-decode");
  EXPECT_EQ(md.sub_groups[1].min_member, 3);
  ASSERT_NE(md.SubGroupOfPod("serve-0-prefill-a"), nullptr);
  EXPECT_EQ(md.SubGroupOfPod("serve-0-prefill-a")->name, "serve-0-prefill");
}

TEST(GroveGrouper, WorkloadLabelsAndAnnotationsFillWhatThePodGangLacks) {
  World w = MakeWorld(kGang);
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.labels.at("shared"), "gang");  // the PodGang's own wins
  EXPECT_EQ(md.labels.at("from-workload"), "yes");
  EXPECT_EQ(md.annotations.at("workload-note"), "1");
}

TEST(GroveGrouper, WorkloadLabelsOverridePriorityAndPreemptibility) {
  std::string workload = kWorkload;
  Replace(workload, "from-workload: \"yes\"",
          "priorityClassName: high, kai.scheduler/preemptibility: non-preemptible");
  World w = MakeWorld(kGang, workload);
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.priority_class_name, "high");
  EXPECT_EQ(md.preemptibility, "non-preemptible");
}

TEST(GroveGrouper, InvalidPreemptibilityIsAnErrorNamingThePodGang) {
  std::string workload = kWorkload;
  Replace(workload, "from-workload: \"yes\"", "kai.scheduler/preemptibility: sometimes");
  World w = MakeWorld(kGang, workload);
  const std::string e = GroupError(w);
  EXPECT_NE(e.find("PodGang team/serve-0"), std::string::npos) << e;
  EXPECT_NE(e.find("sometimes"), std::string::npos) << e;
}

TEST(GroveGrouper, PreemptionDelayFromTheWorkloadAndInvalidOnesNoted) {
  std::string workload = kWorkload;
  Replace(workload, "workload-note: \"1\"", "kai.scheduler/preemption-delay: 30s");
  World w = MakeWorld(kGang, workload);
  EXPECT_EQ(MustGroup(w).preemption_delay_ns, int64_t{30} * 1000000000);

  Replace(workload, "30s", "soon");
  World bad = MakeWorld(kGang, workload);
  auto d = GroupIn(bad);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->metadata.preemption_delay_ns.has_value());
  bool noted = false;
  for (const std::string& n : d->notes) noted |= n.find("soon") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(GroveGrouper, TopologyConstraintGroupConfigsBecomeParentSubGroups) {
  const std::string packs = "    topologyConstraint: {packConstraint: {preferred: node}}\n";
  World w =
      MakeWorld(Gang(Group("pg1", 2, packs) + Group("pg2", 3) + Group("pg3", 1) + Group("pg4", 4),
                     "  topologyConstraint: {packConstraint: {preferred: rack, required: "
                     "zone}}\n"
                     "  topologyConstraintGroupConfigs:\n"
                     "  - name: group1\n    podGroupNames: [pg1, pg2]\n"
                     "    topologyConstraint: {packConstraint: {required: rack}}\n"
                     "  - name: group2\n    podGroupNames: [pg3]\n"
                     "  - name: empty\n    podGroupNames: []\n",
                     "{grove.io/topology-name: dc}"));
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.topology, (TopologyConstraint{"dc", "zone", "rack"}));
  EXPECT_EQ(md.min_member, 10);  // the leaves only
  ASSERT_EQ(md.sub_groups.size(), 6u);
  EXPECT_EQ(md.sub_groups[0].name, "group1");
  EXPECT_EQ(md.sub_groups[0].min_sub_group, 2);
  EXPECT_EQ(md.sub_groups[0].min_member, 0);
  EXPECT_EQ(md.sub_groups[0].topology, (TopologyConstraint{"dc", "rack", ""}));
  EXPECT_EQ(md.sub_groups[1].name, "group2");
  EXPECT_EQ(md.sub_groups[1].min_sub_group, 1);
  EXPECT_FALSE(md.sub_groups[1].topology.has_value());
  EXPECT_EQ(md.sub_groups[2].name, "pg1");
  EXPECT_EQ(md.sub_groups[2].parent, "group1");
  EXPECT_EQ(md.sub_groups[2].topology, (TopologyConstraint{"dc", "", "node"}));
  EXPECT_EQ(md.sub_groups[3].parent, "group1");
  EXPECT_EQ(md.sub_groups[4].parent, "group2");
  EXPECT_FALSE(md.sub_groups[5].parent.has_value());  // pg4: in no config
}

TEST(GroveGrouper, KaiTopologyAnnotationsFillOnlyWhatTheSpecLeavesEmpty) {
  World w =
      MakeWorld(Gang(Group("pg1", 1), "  topologyConstraint: {packConstraint: {preferred: rack}}\n",
                     "{grove.io/topology-name: spec-topo, kai.scheduler/topology: anno-topo, "
                     "kai.scheduler/topology-required-placement: zone, "
                     "kai.scheduler/topology-preferred-placement: dc}"));
  PodGroupMetadata md = MustGroup(w);
  // The spec sets all three (required empty); the annotation fills the empty required level.
  EXPECT_EQ(md.topology, (TopologyConstraint{"spec-topo", "zone", "rack"}));
}

TEST(GroveGrouper, KaiTopologyAnnotationNamesTheTopologyWithoutGroveOne) {
  World w = MakeWorld(
      Gang(Group("pg1", 1, "    topologyConstraint: {packConstraint: {required: rack}}\n"), "",
           "{kai.scheduler/topology: anno-topo}"));
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.topology.topology, "anno-topo");
  EXPECT_EQ(md.sub_groups[0].topology, (TopologyConstraint{"anno-topo", "rack", ""}));
}

TEST(GroveGrouper, ConstraintWithoutTopologyNameIsAnError) {
  World w = MakeWorld(
      Gang(Group("pg1", 1, "    topologyConstraint: {packConstraint: {required: rack}}\n")));
  const std::string e = GroupError(w);
  EXPECT_NE(e.find("spec.podgroups[0].topologyConstraint.packConstraint"), std::string::npos) << e;
}

struct BadGang {
  std::string spec;  // the PodGang's spec body
  std::string want;  // in the error
};

TEST(GroveGrouper, MalformedPodGangsAreErrorsNamingTheField) {
  const std::vector<BadGang> cases = {
      {"  podgroups: {x: 1}\n", "spec.podgroups: expected a list"},
      {"  podgroups: [notamap]\n", "spec.podgroups[0]: expected an object"},
      {"  podgroups:\n  - minReplicas: 1\n    podReferences: []\n",
       "spec.podgroups[0].name: missing"},
      {"  podgroups:\n  - name: a\n    podReferences: []\n",
       "spec.podgroups[0].minReplicas: missing"},
      {"  podgroups:\n  - name: a\n    minReplicas: two\n    podReferences: []\n",
       "spec.podgroups[0].minReplicas: expected an integer"},
      {"  podgroups:\n  - name: a\n    minReplicas: 0\n    podReferences: []\n",
       "spec.podgroups[0].minReplicas: must be greater than 0"},
      {"  podgroups:\n  - name: a\n    minReplicas: 1\n",
       "spec.podgroups[0].podReferences: missing"},
      {"  podgroups:\n  - name: a\n    minReplicas: 1\n    podReferences: [x]\n",
       "spec.podgroups[0].podReferences[0]: expected an object"},
      {"  podgroups:\n  - name: a\n    minReplicas: 1\n    podReferences: [{namespace: team}]\n",
       "spec.podgroups[0].podReferences[0].name: missing"},
      {"  podgroups:\n  - name: a\n    minReplicas: 1\n    podReferences: [{name: p}]\n",
       "spec.podgroups[0].podReferences[0].namespace: missing"},
      {"  podgroups:\n  - name: a\n    minReplicas: 1\n"
       "    podReferences: [{namespace: other, name: victim}]\n",
       "another namespace"},
      {"  topologyConstraintGroupConfigs: {a: b}\n",
       "spec.topologyConstraintGroupConfigs: expected a list"},
      {"  topologyConstraintGroupConfigs: [{podGroupNames: [a]}]\n",
       "spec.topologyConstraintGroupConfigs[0].name: missing"},
      {"  topologyConstraintGroupConfigs: [{name: g, podGroupNames: [{}]}]\n",
       "spec.topologyConstraintGroupConfigs[0].podGroupNames[0]: expected a string"},
      {"  priorityClassName: [a]\n", "spec.priorityClassName: expected a string"},
      {"  topologyConstraint: {packConstraint: oops}\n",
       "spec.topologyConstraint.packConstraint: expected an object"},
  };
  for (const BadGang& c : cases) {
    World w = MakeWorld(
        "apiVersion: scheduler.grove.io/v1alpha1\nkind: PodGang\nmetadata:\n  name: serve-0\n"
        "  namespace: team\n  uid: gang-uid\nspec:\n" +
        c.spec);
    const std::string e = GroupError(w);
    EXPECT_NE(e.find("PodGang team/serve-0"), std::string::npos) << e;
    EXPECT_NE(e.find(c.want), std::string::npos) << "want \"" << c.want << "\" in: " << e;
  }
}

TEST(GroveGrouper, PodWithoutPodGangLabelIsAnError) {
  World w = MakeWorld(kGang);
  w.pod.labels.erase("grove.io/podgang");
  const std::string e = GroupError(w);
  EXPECT_NE(e.find("metadata.labels.grove.io/podgang"), std::string::npos) << e;
}

TEST(GroveGrouper, MissingPodGangIsAnErrorNamingIt) {
  World w = MakeWorld("");
  const std::string e = GroupError(w);
  EXPECT_NE(e.find("PodGang team/serve-0"), std::string::npos) << e;
}

TEST(GroveGrouper, PodGangWithoutGroupsHasNoSubGroups) {
  World w = MakeWorld(
      "apiVersion: scheduler.grove.io/v1alpha1\nkind: PodGang\nmetadata:\n  name: serve-0\n"
      "  namespace: team\n  uid: gang-uid\nspec: {}\n");
  PodGroupMetadata md = MustGroup(w);
  EXPECT_TRUE(md.sub_groups.empty());
  EXPECT_EQ(md.min_member, 0);
}

TEST(GroveGrouper, DynamoGraphDeploymentLendsItsLabelsThroughThePodCliqueSet) {
  std::string workload = kWorkload;
  Replace(workload, "  annotations: {workload-note: \"1\"}",
          "  annotations: {workload-note: \"1\"}\n  ownerReferences:\n  - {apiVersion: "
          "nvidia.com/v1alpha1, kind: DynamoGraphDeployment, name: dgd, uid: dgd-uid}");
  workload +=
      "\n---\napiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n"
      "  name: dgd\n  namespace: team\n  uid: dgd-uid\n  labels: {from-dgd: \"1\"}\n";
  World w = MakeWorld(kGang, workload);
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.name, "pg-serve-0-gang-uid");
  EXPECT_EQ(md.labels.at("from-dgd"), "1");
  EXPECT_EQ(md.labels.at("from-workload"), "yes");
}

}  // namespace
}  // namespace kai::podgrouper
