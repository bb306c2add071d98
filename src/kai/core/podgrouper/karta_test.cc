// The Karta fallback grouper: a custom workload kind grouped by the run.ai/v1alpha1 Karta that
// describes it. Expected values are worked out from KAI's pkg/podgrouper/podgrouper/plugins/karta/
// and Karta's pkg/instructions (subtree scales), not from this implementation.
#include <gtest/gtest.h>

#include "kai/core/podgrouper/hub.h"
#include "kai/core/podgrouper/jq_path.h"
#include "kai/core/podgrouper/karta.h"
#include "kai/core/podgrouper/podgrouper.h"

namespace kai::podgrouper {
namespace {

// --- jq paths ---

std::vector<std::string> Texts(const std::string& expr, const std::string& json) {
  auto doc = doc::ParseYaml(json);
  EXPECT_TRUE(doc.ok());
  auto path = JqPath::Parse(expr);
  EXPECT_TRUE(path.ok()) << (path.ok() ? "" : path.error().message);
  if (!doc.ok() || !path.ok()) return {};
  auto results = path->Evaluate(doc->Roots()[0]);
  EXPECT_TRUE(results.ok()) << (results.ok() ? "" : results.error().message);
  std::vector<std::string> out;
  for (doc::Node n : results.ok() ? *results : std::vector<doc::Node>{}) {
    out.push_back(JqScalarText(n).value_or("null"));
  }
  return out;
}

TEST(JqPath, KeysIndexesIterationAndPipes) {
  const std::string j =
      R"({"spec": {"a-b": 1, "w": {"replicas": 3}, "l": [{"n": 1}, {"n": 2}]},
          "metadata": {"labels": {"e2e.example.com/role": "worker"}}})";
  EXPECT_EQ(Texts(".spec.w.replicas", j), (std::vector<std::string>{"3"}));
  EXPECT_EQ(Texts(".metadata.labels[\"e2e.example.com/role\"]", j),
            (std::vector<std::string>{"worker"}));
  EXPECT_EQ(Texts(".spec.\"a-b\"", j), (std::vector<std::string>{"1"}));
  EXPECT_EQ(Texts(".[\"spec\"].w[\"replicas\"]", j), (std::vector<std::string>{"3"}));
  EXPECT_EQ(Texts(".spec.l[].n", j), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(Texts(".spec.l[-1].n", j), (std::vector<std::string>{"2"}));
  EXPECT_EQ(Texts(".spec.l[] | .n", j), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(Texts(".spec.missing.deeper", j), (std::vector<std::string>{"null"}));
  EXPECT_EQ(Texts(".spec.l[7]", j), (std::vector<std::string>{"null"}));
  EXPECT_EQ(Texts(".spec.w.replicas.x?", j), (std::vector<std::string>{}));
  EXPECT_EQ(Texts(".", "7"), (std::vector<std::string>{"7"}));
}

TEST(JqPath, ErrorsOnWrongTypesUnlessOptional) {
  auto doc = doc::ParseYaml(R"({"a": 1, "b": null})");
  ASSERT_TRUE(doc.ok());
  for (const char* expr : {".a.x", ".a[0]", ".b[]", ".a[]"}) {
    auto p = JqPath::Parse(expr);
    ASSERT_TRUE(p.ok()) << expr;
    auto r = p->Evaluate(doc->Roots()[0]);
    EXPECT_FALSE(r.ok()) << expr;
  }
}

TEST(JqPath, RefusesWhatIsNotAPath) {
  for (const char* expr : {"", "spec", ".a == 1", "..", ".a | length", "(.a // 0) > 0", ".[\"x",
                           ".a[1:2]", ".a.", "map(.x)"}) {
    auto p = JqPath::Parse(expr);
    EXPECT_FALSE(p.ok()) << expr;
    if (!p.ok()) {
      EXPECT_NE(p.error().message.find("jq expression"), std::string::npos);
    }
  }
}

// --- the grouper ---

// KAI's e2e fixture (test/e2e/suites/integrations/third_party/karta/customjob_karta.yaml).
constexpr const char* kCustomJobKarta = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: customjob
  labels:
    run.ai/karta-group: e2e.example.com
    run.ai/karta-version: v1
    run.ai/karta-kind: CustomJob
spec:
  structureDefinition:
    rootComponent:
      name: customjob
      kind: {group: e2e.example.com, version: v1, kind: CustomJob}
      statusDefinition: {statusMappings: {}}
    childComponents:
      - name: coordinator
        ownerRef: customjob
        specDefinition: {podTemplateSpecPath: .spec.coordinator.template}
        scaleDefinition: {replicasPath: .spec.coordinator.replicas}
        podSelector:
          componentTypeSelector: {keyPath: '.metadata.labels["e2e.example.com/role"]', value: coordinator}
      - name: worker
        ownerRef: customjob
        specDefinition: {podTemplateSpecPath: .spec.worker.template}
        scaleDefinition: {replicasPath: .spec.worker.replicas}
        podSelector:
          componentTypeSelector: {keyPath: '.metadata.labels["e2e.example.com/role"]', value: worker}
  optimizationInstructions:
    gangScheduling:
      podGroup:
        name: customjob
        subGroups:
          - componentName: coordinator
          - componentName: worker
)";

constexpr const char* kCustomJob = R"(
apiVersion: e2e.example.com/v1
kind: CustomJob
metadata:
  name: job
  namespace: team
  uid: job-uid
  labels: {kai.scheduler/queue: team-q}
spec:
  coordinator: {replicas: 1, template: {spec: {}}}
  worker: {replicas: 2, template: {spec: {}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: job-worker-0
  namespace: team
  uid: pod-uid
  labels: {e2e.example.com/role: worker}
  ownerReferences:
  - {apiVersion: e2e.example.com/v1, kind: CustomJob, name: job, uid: job-uid}
spec:
  schedulerName: kai-scheduler
)";

void Replace(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

struct World {
  std::vector<Object> objects;
  Object pod;
};

World MakeWorld(const std::string& karta, const std::string& workload = kCustomJob) {
  World w;
  auto objects = ParseObjects(workload + "\n---\n" + karta, "test");
  EXPECT_TRUE(objects.ok()) << (objects.ok() ? "" : objects.error().message);
  if (!objects.ok()) return w;
  for (Object& o : *objects) {
    if (o.kind == "Pod") w.pod = o;
    w.objects.push_back(std::move(o));
  }
  return w;
}

Result<Decision> GroupIn(const World& w, GrouperConfig config = {}) {
  MemoryReader reader(w.objects);
  return GroupPod(w.pod, reader, config);
}

PodGroupMetadata MustGroup(const World& w) {
  auto d = GroupIn(w);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? d->metadata : PodGroupMetadata{};
}

std::string GroupError(const World& w) {
  auto d = GroupIn(w);
  EXPECT_FALSE(d.ok());
  return d.ok() ? "" : d.error().message;
}

bool Noted(const Decision& d, const std::string& text) {
  for (const std::string& n : d.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(KartaGrouper, PodGroupWithASubGroupPerComponent) {
  World w = MakeWorld(kCustomJobKarta);
  PodGroupMetadata md = MustGroup(w);
  EXPECT_EQ(md.name, "pg-job-uid-customjob");
  EXPECT_EQ(md.owner.kind, "CustomJob");
  EXPECT_EQ(md.owner.uid, "job-uid");
  EXPECT_EQ(md.queue, "team-q");
  EXPECT_EQ(md.min_sub_group, 2);
  EXPECT_EQ(md.min_member, 0);
  ASSERT_EQ(md.sub_groups.size(), 2u);
  EXPECT_EQ(md.sub_groups[0].name, "coordinator");
  EXPECT_EQ(md.sub_groups[0].min_member, 1);
  EXPECT_TRUE(md.sub_groups[0].pods.empty());
  EXPECT_EQ(md.sub_groups[1].name, "worker");
  EXPECT_EQ(md.sub_groups[1].min_member, 2);
  EXPECT_EQ(md.sub_groups[1].pods, (std::vector<std::string>{"job-worker-0"}));
  ASSERT_NE(md.SubGroupOfPod("job-worker-0"), nullptr);
}

TEST(KartaGrouper, WithoutSubGroupsMinMemberIsTheWholeWorkload) {
  std::string karta = kCustomJobKarta;
  Replace(karta,
          "        subGroups:\n          - componentName: coordinator\n          - componentName: "
          "worker\n",
          "        topology: {topologyName: t, requiredTopologyLevel: rack, "
          "preferredTopologyLevel: node}\n");
  PodGroupMetadata md = MustGroup(MakeWorld(karta));
  EXPECT_FALSE(md.min_sub_group.has_value());
  EXPECT_TRUE(md.sub_groups.empty());
  EXPECT_EQ(md.min_member, 3);
  EXPECT_EQ(md.topology, (TopologyConstraint{"t", "rack", "node"}));
}

TEST(KartaGrouper, OffByFlagOrWithoutAKartaTheDefaultGrouperGroups) {
  World w = MakeWorld(kCustomJobKarta);
  GrouperConfig off;
  off.generic_karta_fallback = false;
  auto d = GroupIn(w, off);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->metadata.name, "pg-job-job-uid");
  EXPECT_EQ(d->metadata.min_member, 1);

  std::string other = kCustomJobKarta;
  Replace(other, "run.ai/karta-kind: CustomJob", "run.ai/karta-kind: OtherJob");
  EXPECT_EQ(MustGroup(MakeWorld(other)).name, "pg-job-job-uid");
}

TEST(KartaGrouper, TheRootKindMustMatchNotOnlyTheLabels) {
  std::string karta = kCustomJobKarta;
  Replace(karta, "version: v1, kind: CustomJob}", "version: v2, kind: CustomJob}");
  EXPECT_EQ(MustGroup(MakeWorld(karta)).name, "pg-job-job-uid");
}

TEST(KartaGrouper, NativeGroupersComeFirst) {
  EXPECT_EQ(DefaultHub().For("batch", "v1", "Job").Name(), "BatchJob Grouper");
  EXPECT_EQ(DefaultHub().For("e2e.example.com", "v1", "CustomJob").Name(), "Karta Grouper");
}

TEST(KartaGrouper, InvalidOrDuplicateKartasAreSkippedAndNoted) {
  std::string invalid = kCustomJobKarta;
  Replace(invalid, "      statusDefinition: {statusMappings: {}}\n", "");
  auto d = GroupIn(MakeWorld(invalid));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->metadata.name, "pg-job-job-uid");
  EXPECT_TRUE(Noted(*d, "root component must have status definition"));

  std::string second = kCustomJobKarta;
  Replace(second, "name: customjob\n  labels", "name: customjob-copy\n  labels");
  d = GroupIn(MakeWorld(std::string(kCustomJobKarta) + "\n---\n" + second));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->metadata.name, "pg-job-job-uid");
  EXPECT_TRUE(Noted(*d, "found 2 Kartas"));
}

TEST(KartaGrouper, MalformedKartasNeverCrashAndAreNoted) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"    rootComponent:\n", "    rootComponent: 5\n    rootX:\n"},
      {"      statusDefinition: {statusMappings: {}}", "      statusDefinition: [1]"},
      {"scaleDefinition: {replicasPath: .spec.worker.replicas}",
       "scaleDefinition: {replicasPath: '.spec.worker.replicas + 1'}"},
      {"    childComponents:\n", "    childComponents: {a: b}\n    x:\n"},
      {"        subGroups:\n", "        subGroups: 3\n        x:\n"},
  };
  for (const auto& [from, to] : cases) {
    std::string karta = kCustomJobKarta;
    Replace(karta, from, to);
    auto d = GroupIn(MakeWorld(karta));
    ASSERT_TRUE(d.ok()) << to << ": " << d.error().message;
    EXPECT_EQ(d->metadata.name, "pg-job-job-uid") << to;
    EXPECT_TRUE(Noted(*d, "Karta customjob")) << to;
  }
}

TEST(KartaGrouper, ValidationFollowsKartasValidator) {
  auto problems = [](const std::string& from, const std::string& to) {
    std::string karta = kCustomJobKarta;
    Replace(karta, from, to);
    auto o = ParseObjects(karta, "test");
    EXPECT_TRUE(o.ok());
    auto k = DecodeKarta((*o)[0]);
    EXPECT_TRUE(k.ok()) << (k.ok() ? "" : k.error().message);
    auto s = ValidateKarta(*k);
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_EQ(problems("name: customjob\n  labels", "name: customjob\n  labels"), "");
  EXPECT_NE(problems("- name: worker", "- name: coordinator").find("is not unique"),
            std::string::npos);
  EXPECT_NE(problems("ownerRef: customjob\n        specDefinition: {podTemplateSpecPath: "
                     ".spec.worker",
                     "ownerRef: nobody\n        specDefinition: {podTemplateSpecPath: .spec.worker")
                .find("owner ref to non-existing component 'nobody'"),
            std::string::npos);
  EXPECT_NE(
      problems("{group: e2e.example.com, version: v1", "{version: v1").find("must have full kind"),
      std::string::npos);
  EXPECT_NE(problems("specDefinition: {podTemplateSpecPath: .spec.worker.template}",
                     "specDefinition: {podTemplateSpecPath: .a, podSpecPath: .b}")
                .find("multiple pod spec definitions"),
            std::string::npos);
  EXPECT_NE(problems("scaleDefinition: {replicasPath: .spec.worker.replicas}",
                     "instanceIdPath: .spec.ids[]\n        scaleDefinition: {replicasPath: "
                     ".spec.worker.replicas}")
                .find("instance id path but no pod component instance selector"),
            std::string::npos);
}

TEST(KartaGrouper, OwnershipCyclesAreInvalid) {
  std::string karta = kCustomJobKarta;
  Replace(karta, "- name: coordinator\n        ownerRef: customjob",
          "- name: coordinator\n        ownerRef: worker");
  Replace(karta, "- name: worker\n        ownerRef: customjob",
          "- name: worker\n        ownerRef: coordinator");
  auto o = ParseObjects(karta, "test");
  ASSERT_TRUE(o.ok());
  auto k = DecodeKarta((*o)[0]);
  ASSERT_TRUE(k.ok());
  auto s = ValidateKarta(*k);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("ownership cycle"), std::string::npos);
}

TEST(KartaGrouper, GroupingErrorsNameTheKartaAndField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"          - componentName: worker\n", "          - componentName: ghost\n"},
      {"          - componentName: worker\n", "          - componentName: ''\n"},
      {"          - componentName: worker\n",
       "          - componentName: worker\n            topology: {topologyName: t}\n"},
      {"          - componentName: worker\n",
       "          - componentName: worker\n            topology: {requiredTopologyLevel: r}\n"},
  };
  for (const auto& [from, to] : cases) {
    std::string karta = kCustomJobKarta;
    Replace(karta, from, to);
    const std::string e = GroupError(MakeWorld(karta));
    EXPECT_NE(e.find("Karta customjob: spec.optimizationInstructions.gangScheduling.podGroup."
                     "subGroups[1]"),
              std::string::npos)
        << e;
  }
}

TEST(KartaGrouper, SubGroupWithoutScaleIsAnError) {
  std::string workload = kCustomJob;
  Replace(workload, "worker: {replicas: 2, ", "worker: {");
  const std::string e = GroupError(MakeWorld(kCustomJobKarta, workload));
  EXPECT_NE(e.find("component worker must expose a replica scale definition"), std::string::npos)
      << e;
}

TEST(KartaGrouper, WorkloadWithWrongTypesIsAnError) {
  std::string workload = kCustomJob;
  Replace(workload, "worker: {replicas: 2, ", "worker: {replicas: {a: 1}, ");
  std::string e = GroupError(MakeWorld(kCustomJobKarta, workload));
  EXPECT_NE(e.find("replicasPath"), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;

  workload = kCustomJob;
  Replace(workload, "worker: {replicas: 2, template: {spec: {}}}", "worker: 5");
  e = GroupError(MakeWorld(kCustomJobKarta, workload));
  EXPECT_NE(e.find("cannot index"), std::string::npos) << e;
}

// A Karta of the deprecated podGroups format: a PodGroup per group of a LeaderWorkerSet-like
// workload, keyed by the pod's group label.
constexpr const char* kAlphaKarta = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: grouped
  labels: {run.ai/karta-group: e2e.example.com, run.ai/karta-version: v1, run.ai/karta-kind: CustomJob}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {group: e2e.example.com, version: v1, kind: CustomJob}
      statusDefinition: {statusMappings: {}}
      scaleDefinition: {replicasPath: .spec.groups}
    childComponents:
      - name: leader
        ownerRef: job
        specDefinition: {podTemplateSpecPath: .spec.leader}
        podSelector: {componentTypeSelector: {keyPath: '.metadata.labels.role', value: leader}}
      - name: worker
        ownerRef: job
        specDefinition: {podTemplateSpecPath: .spec.worker}
        scaleDefinition: {replicasPath: .spec.workers}
        podSelector: {componentTypeSelector: {keyPath: '.metadata.labels.role', value: worker}}
  optimizationInstructions:
    gangScheduling:
      podGroups:
        - name: per-group
          members:
            - componentName: job
              groupByKeyPaths: ['.metadata.labels["group-index"]']
)";

TEST(KartaGrouper, DeprecatedPodGroupsFormatGroupsByKeys) {
  std::string workload = kCustomJob;
  Replace(workload, "spec:\n  coordinator: {replicas: 1, template: {spec: {}}}",
          "spec:\n  groups: 3\n  workers: 4");
  Replace(workload, "labels: {e2e.example.com/role: worker}",
          "labels: {role: worker, group-index: \"1\"}");
  PodGroupMetadata md = MustGroup(MakeWorld(kAlphaKarta, workload));
  EXPECT_EQ(md.name, "pg-job-uid-1");
  // The job component: its scale (3) times its children's sum (leader: none, worker: 4).
  EXPECT_EQ(md.min_member, 12);
  EXPECT_TRUE(md.sub_groups.empty());
}

TEST(KartaGrouper, DeprecatedFormatErrors) {
  std::string workload = kCustomJob;
  Replace(workload, "labels: {e2e.example.com/role: worker}", "labels: {role: worker}");
  std::string e = GroupError(MakeWorld(kAlphaKarta, workload));  // no group-index label
  EXPECT_NE(e.find("grouping key"), std::string::npos) << e;

  workload = kCustomJob;
  Replace(workload, "labels: {e2e.example.com/role: worker}", "labels: {role: other}");
  e = GroupError(MakeWorld(kAlphaKarta, workload));
  EXPECT_NE(e.find("no component of it matches pod Pod team/job-worker-0"), std::string::npos) << e;

  workload = kCustomJob;
  Replace(workload, "labels: {e2e.example.com/role: worker}",
          "labels: {role: worker, group-index: Not_DNS}");
  e = GroupError(MakeWorld(kAlphaKarta, workload));
  EXPECT_NE(e.find("invalid PodGroup name"), std::string::npos) << e;
}

TEST(KartaGrouper, FiltersAreNotEvaluatedSoTheKartaIsSkipped) {
  std::string karta = kAlphaKarta;
  Replace(karta, "groupByKeyPaths: ['.metadata.labels[\"group-index\"]']",
          "filters: ['(.spec.x // 0) > 0']");
  auto d = GroupIn(MakeWorld(karta));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->metadata.name, "pg-job-job-uid");
  EXPECT_TRUE(Noted(*d, "jq filters, which kai does not evaluate"));
}

TEST(KartaGrouper, ScaleByLeavesWhenNoComponentStatesOne) {
  std::string karta = kAlphaKarta;
  Replace(karta, "      scaleDefinition: {replicasPath: .spec.groups}\n", "");
  Replace(karta, "        scaleDefinition: {replicasPath: .spec.workers}\n", "");
  Replace(karta, "              groupByKeyPaths: ['.metadata.labels[\"group-index\"]']\n", "");
  std::string workload = kCustomJob;
  Replace(workload, "labels: {e2e.example.com/role: worker}", "labels: {role: worker}");
  PodGroupMetadata md = MustGroup(MakeWorld(karta, workload));
  EXPECT_EQ(md.name, "pg-job-uid");
  EXPECT_EQ(md.min_member, 2);  // the leader and the worker component: one pod each
}

TEST(KartaGrouper, InstancesCountOnlyThePodsOwn) {
  // A component with an instance per entry of spec.roles; the pod's instance is its role label.
  const std::string karta = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: roles
  labels: {run.ai/karta-group: e2e.example.com, run.ai/karta-version: v1, run.ai/karta-kind: CustomJob}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {group: e2e.example.com, version: v1, kind: CustomJob}
      statusDefinition: {statusMappings: {}}
    childComponents:
      - name: role
        ownerRef: job
        instanceIdPath: .spec.roles[].name
        specDefinition: {podTemplateSpecPath: '.spec.roles[].template'}
        scaleDefinition: {replicasPath: '.spec.roles[].replicas'}
        podSelector:
          componentInstanceSelector: {idPath: .metadata.labels.role}
  optimizationInstructions:
    gangScheduling:
      podGroups:
        - name: per-role
          members:
            - componentName: role
              groupByKeyPaths: [.metadata.labels.role]
)";
  std::string workload = kCustomJob;
  Replace(workload, "spec:\n  coordinator: {replicas: 1, template: {spec: {}}}",
          "spec:\n  roles: [{name: prefill, replicas: 2}, {name: decode, replicas: 5}]");
  Replace(workload, "labels: {e2e.example.com/role: worker}", "labels: {role: decode}");
  PodGroupMetadata md = MustGroup(MakeWorld(karta, workload));
  EXPECT_EQ(md.name, "pg-job-uid-decode");
  EXPECT_EQ(md.min_member, 5);

  Replace(workload, "labels: {role: decode}", "labels: {role: embed}");
  const std::string e = GroupError(MakeWorld(karta, workload));
  EXPECT_NE(e.find("instance id \"embed\""), std::string::npos) << e;
}

}  // namespace
}  // namespace kai::podgrouper
