#include "kai/core/plugins/podaffinity/podaffinity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kai/core/k8s/decode.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

std::string Node(const std::string& name, const std::string& zone) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: {host: " + name +
         ", zone: " + zone +
         "}\nstatus:\n  allocatable: {cpu: '8', memory: 8Gi, pods: '110', nvidia.com/gpu: '2'}\n"
         "---\n";
}

const std::string kQueue = testutil::kUnlimitedQueue;

std::string Group(const std::string& name, int min_member, const std::string& ns = "default") {
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: " + ns + "}\nspec: {queue: q, minMember: " + std::to_string(min_member) +
         "}\n---\n";
}

// A one-GPU pod of `group` with label app=<app>; `affinity` is the spec.affinity block (YAML
// flow), `node` places it Running.
std::string Pod(const std::string& name, const std::string& group, const std::string& app,
                const std::string& affinity = "", const std::string& node = "",
                const std::string& ns = "default") {
  std::string s = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
                  "\n  labels: {app: " + app + "}\n  annotations: {pod-group-name: " + group +
                  "}\nspec:\n  schedulerName: kai-scheduler\n";
  if (!node.empty()) s += "  nodeName: " + node + "\n";
  if (!affinity.empty()) s += "  affinity: " + affinity + "\n";
  s += "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi, "
       "nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}]\n";
  s += node.empty() ? "---\n" : "status: {phase: Running}\n---\n";
  return s;
}

std::string Anti(const std::string& app, const std::string& key) {
  return "{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: " +
         key + ", labelSelector: {matchLabels: {app: " + app + "}}}]}}";
}

std::string Affinity(const std::string& app, const std::string& key) {
  return "{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: " + key +
         ", labelSelector: {matchLabels: {app: " + app + "}}}]}}";
}

// Pod name -> "status node" after one allocate cycle.
struct Outcome {
  std::map<std::string, std::string> where;
  std::map<std::string, std::vector<Reason>> reasons;
};

Outcome Allocate(const std::string& yaml) {
  const sim::CycleReport report = testutil::AllocateOnce(yaml);
  Outcome out;
  for (const auto& p : report.pods) {
    out.where[p.name] = p.status + (p.node.empty() ? "" : " " + p.node);
    out.reasons[p.name] = p.reasons;
  }
  return out;
}

bool HasAffinityReason(const std::vector<Reason>& reasons) {
  for (const Reason& r : reasons) {
    const auto* n = r.As<NodesReason>();
    if (n && n->code == FitCode::kPodAffinity) return true;
  }
  return false;
}

TEST(PodAffinity, AntiAffinityAvoidsTheNodeOfAMatchingPod) {
  const Outcome o =
      Allocate(Node("n1", "east") + Node("n2", "east") + kQueue + Group("db", 1) + Group("web", 1) +
               Pod("db-0", "db", "db", "", "n1") + Pod("web-0", "web", "web", Anti("db", "host")));
  EXPECT_EQ(o.where.at("web-0"), "Binding n2");
}

TEST(PodAffinity, ExistingPodsAntiAffinityKeepsMatchingPodsAway) {
  // db-0 refuses pods labelled app=web on its host; binpack alone would pick n1.
  const Outcome o =
      Allocate(Node("n1", "east") + Node("n2", "east") + kQueue + Group("db", 1) + Group("web", 1) +
               Pod("db-0", "db", "db", Anti("web", "host"), "n1") + Pod("web-0", "web", "web"));
  EXPECT_EQ(o.where.at("web-0"), "Binding n2");
}

TEST(PodAffinity, AffinityFollowsTheZoneOfAMatchingPod) {
  // n3 (west) is the binpack choice (fullest), but the web pod must share db's zone.
  const Outcome o = Allocate(
      Node("n1", "east") + Node("n2", "east") + Node("n3", "west") + kQueue + Group("db", 1) +
      Group("fill", 1) + Group("web", 1) + Pod("db-0", "db", "db", "", "n2") +
      Pod("fill-0", "fill", "fill", "", "n3") + Pod("web-0", "web", "web", Affinity("db", "zone")));
  EXPECT_EQ(o.where.at("web-0"), "Binding n2");
}

TEST(PodAffinity, FirstPodOfASelfAffineGroupMayStart) {
  const Outcome o = Allocate(Node("n1", "east") + kQueue + Group("web", 1) +
                             Pod("web-0", "web", "web", Affinity("web", "zone")));
  EXPECT_EQ(o.where.at("web-0"), "Binding n1");
}

TEST(PodAffinity, UnmatchedAffinityKeepsThePodPendingWithAReason) {
  const Outcome o = Allocate(Node("n1", "east") + kQueue + Group("web", 1) +
                             Pod("web-0", "web", "web", Affinity("db", "zone")));
  EXPECT_EQ(o.where.at("web-0"), "Pending");
  EXPECT_TRUE(HasAffinityReason(o.reasons.at("web-0")));
}

TEST(PodAffinity, NodeWithoutTheTopologyKeyFailsAffinity) {
  const Outcome o = Allocate(Node("n1", "east") + kQueue + Group("web", 1) +
                             Pod("web-0", "web", "web", Affinity("web", "rack")));
  EXPECT_EQ(o.where.at("web-0"), "Pending");
}

TEST(PodAffinity, GangMembersSpreadByAntiAffinityToEachOther) {
  const Outcome o =
      Allocate(Node("n1", "east") + Node("n2", "east") + kQueue + Group("w", 2) +
               Pod("w-0", "w", "w", Anti("w", "host")) + Pod("w-1", "w", "w", Anti("w", "host")));
  EXPECT_NE(o.where.at("w-0"), o.where.at("w-1"));
  EXPECT_EQ(o.where.at("w-0").substr(0, 7), "Binding");
  EXPECT_EQ(o.where.at("w-1").substr(0, 7), "Binding");
}

TEST(PodAffinity, GangThatCannotSpreadStaysPending) {
  const Outcome o =
      Allocate(Node("n1", "east") + Node("n2", "east") + kQueue + Group("w", 3) +
               Pod("w-0", "w", "w", Anti("w", "host")) + Pod("w-1", "w", "w", Anti("w", "host")) +
               Pod("w-2", "w", "w", Anti("w", "host")));
  for (const char* p : {"w-0", "w-1", "w-2"}) EXPECT_EQ(o.where.at(p), "Pending") << p;
}

TEST(PodAffinity, TermsWithoutNamespacesApplyToTheirOwnNamespace) {
  // db-0 lives in namespace other: web's anti-affinity (namespace default) does not see it.
  const Outcome o = Allocate(Node("n1", "east") + kQueue + Group("db", 1, "other") +
                             Group("web", 1) + Pod("db-0", "db", "db", "", "n1", "other") +
                             Pod("web-0", "web", "web", Anti("db", "host")));
  EXPECT_EQ(o.where.at("web-0"), "Binding n1");
}

TEST(PodAffinity, AbsentSelectorMatchesNoPod) {
  const std::string anti =
      "{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: host}]}}";
  const Outcome o = Allocate(Node("n1", "east") + kQueue + Group("db", 1) + Group("web", 1) +
                             Pod("db-0", "db", "db", "", "n1") + Pod("web-0", "web", "web", anti));
  EXPECT_EQ(o.where.at("web-0"), "Binding n1");
}

TEST(PodAffinity, NamespaceSelectorOtherThanEmptyIsAnErrorNamingTheField) {
  ClusterState state;
  const std::string anti =
      "{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: host, "
      "namespaceSelector: {matchLabels: {team: a}}, labelSelector: {}}]}}";
  const auto errors =
      ProblemsOf(DecodeManifestText(Pod("web-0", "web", "web", anti), "t.yaml", state));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("namespaceSelector"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace kai

namespace kai {
namespace {

// n1 has 2 GPUs, n2 has `n2_gpus` with db-0 using one: with 4, binpack alone prefers n1 (2 free
// < 3 free); with 2 it prefers n2 (1 free).
std::string ScoringWorld(const std::string& db_affinity, const std::string& web_affinity,
                         int n2_gpus = 4) {
  auto node = [](const std::string& name, int gpus) {
    return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: {host: " + name +
           "}}\nstatus:\n  allocatable: {cpu: '8', memory: 8Gi, pods: '110', nvidia.com/gpu: '" +
           std::to_string(gpus) + "'}\n---\n";
  };
  return node("n1", 2) + node("n2", n2_gpus) + testutil::kUnlimitedQueue + Group("db", 1) +
         Group("web", 1) + Pod("db-0", "db", "db", db_affinity, "n2") +
         Pod("web-0", "web", "web", web_affinity);
}

TEST(PodAffinityScore, ExistingPodsRequiredAffinityAttractsMatchingPods) {
  // db-0 requires pods labelled app=web on its host (hard pod affinity weight 1 x 1e6).
  const Outcome o = Allocate(ScoringWorld(Affinity("web", "host"), ""));
  EXPECT_EQ(o.where.at("web-0"), "Binding n2");
}

TEST(PodAffinityScore, PreferredAffinityAttracts) {
  const std::string pref =
      "{podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, "
      "podAffinityTerm: {topologyKey: host, labelSelector: {matchLabels: {app: db}}}}]}}";
  EXPECT_EQ(Allocate(ScoringWorld("", pref)).where.at("web-0"), "Binding n2");
  EXPECT_EQ(Allocate(ScoringWorld("", "")).where.at("web-0"), "Binding n1");
}

TEST(PodAffinityScore, PreferredAntiAffinityRepels) {
  const std::string anti =
      "{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 50, "
      "podAffinityTerm: {topologyKey: host, labelSelector: {matchLabels: {app: db}}}}]}}";
  EXPECT_EQ(Allocate(ScoringWorld("", "", 2)).where.at("web-0"), "Binding n2");
  EXPECT_EQ(Allocate(ScoringWorld("", anti, 2)).where.at("web-0"), "Binding n1");
}

TEST(PodAffinityScore, PreferredTermWeightMustBeInRange) {
  ClusterState state;
  const std::string bad =
      "{podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, "
      "podAffinityTerm: {topologyKey: host, labelSelector: {}}}]}}";
  const auto errors = ProblemsOf(DecodeManifestText(Pod("w", "web", "web", bad), "t.yaml", state));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("weight"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace kai
