// The scaling pod's manifest (KAI's scaler/scaling_pod_test.go and its test_pods/*.yaml).
#include <gtest/gtest.h>

#include "kai/core/scaleadjuster/plan.h"
#include "kai/core/scaleadjuster/test_pods.h"

namespace kai::scaleadjuster {
namespace {

using testing::FromYaml;

const char* kHead =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod-1\n  namespace: test-ns-1\n";

struct Parsed {
  doc::Document d;
  doc::Node pod;
};

Parsed ScalingPodOf(const std::string& yaml, int64_t devices = 3) {
  AdjusterConfig c;
  c.image = "scaling-image";
  const std::string json = ScalingPodJson(c, FromYaml(yaml), devices);
  auto d = doc::ParseJson(json);
  EXPECT_TRUE(d.ok()) << json;
  Parsed p{std::move(*d), {}};
  p.pod = p.d.Roots().at(0);
  return p;
}

TEST(ScalingPodName, IsNamespaceDashName) {
  EXPECT_EQ(ScalingPodName("namespace", "name"), "namespace-name");
}

TEST(ScalingPodJson, NamedAndLabelledAfterItsPodInTheScalingNamespace) {
  Parsed p = ScalingPodOf(std::string(kHead) + "spec:\n  containers: [{name: c, image: i}]\n");
  const doc::Node meta = p.pod["metadata"];
  EXPECT_EQ(meta["name"].Scalar(), "test-ns-1-test-pod-1");
  EXPECT_EQ(meta["namespace"].Scalar(), "kai-scale-adjust");
  EXPECT_EQ(meta["labels"]["app"].Scalar(), "scaling-pod");
  EXPECT_EQ(meta["labels"]["shared-gpu-pod-name"].Scalar(), "test-pod-1");
  EXPECT_EQ(meta["labels"]["shared-gpu-pod-namespace"].Scalar(), "test-ns-1");
  const doc::Node spec = p.pod["spec"];
  EXPECT_EQ(spec["serviceAccountName"].Scalar(), "scaling-pod");
  EXPECT_EQ(spec["restartPolicy"].Scalar(), "OnFailure");
  EXPECT_EQ(spec["containers"].size(), 1u);
  EXPECT_EQ(spec["containers"][0]["name"].Scalar(), "scaling-pod");
  EXPECT_EQ(spec["containers"][0]["image"].Scalar(), "scaling-image");
  EXPECT_FALSE(spec["affinity"].IsDefined());
  EXPECT_FALSE(spec["tolerations"].IsDefined());
  EXPECT_FALSE(spec["nodeSelector"].IsDefined());
}

// What the `restricted` Pod Security level checks, so that kai-scale-adjust can enforce it.
TEST(ScalingPodJson, PassesTheRestrictedPodSecurityLevel) {
  Parsed p = ScalingPodOf(std::string(kHead) + "spec:\n  containers: [{name: c, image: i}]\n");
  const doc::Node pod_sc = p.pod["spec"]["securityContext"];
  EXPECT_EQ(pod_sc["runAsNonRoot"].Scalar(), "true");
  EXPECT_EQ(pod_sc["seccompProfile"]["type"].Scalar(), "RuntimeDefault");
  const doc::Node sc = p.pod["spec"]["containers"][0]["securityContext"];
  EXPECT_EQ(sc["allowPrivilegeEscalation"].Scalar(), "false");
  EXPECT_EQ(sc["capabilities"]["drop"][0].Scalar(), "ALL");
  EXPECT_EQ(sc["capabilities"]["drop"].size(), 1u);
  EXPECT_FALSE(sc["privileged"].IsDefined());
}

TEST(ScalingPodJson, AsksWholeGpusAndTheContainersCpuAndMemory) {
  Parsed p = ScalingPodOf(std::string(kHead) + R"(spec:
  containers:
  - name: container-1
    resources: {requests: {memory: 64Mi, cpu: 250m}}
  - name: container-2
    resources: {requests: {memory: 64Mi, cpu: 250m}}
)");
  const doc::Node res = p.pod["spec"]["containers"][0]["resources"];
  EXPECT_EQ(res["requests"]["cpu"].Scalar(), "0.5");
  EXPECT_EQ(res["requests"]["memory"].Scalar(), std::to_string(128 * 1024 * 1024));
  EXPECT_EQ(res["requests"]["nvidia.com/gpu"].Scalar(), "3");
  EXPECT_EQ(res["limits"]["nvidia.com/gpu"].Scalar(), "3");
  EXPECT_FALSE(res["limits"]["cpu"].IsDefined());
}

TEST(ScalingPodJson, PodWithoutRequestsGivesOnlyGpus) {
  Parsed p = ScalingPodOf(std::string(kHead) + "spec:\n  containers: [{name: c, image: i}]\n", 1);
  const doc::Node req = p.pod["spec"]["containers"][0]["resources"]["requests"];
  EXPECT_EQ(req["nvidia.com/gpu"].Scalar(), "1");
  EXPECT_FALSE(req["cpu"].IsDefined());
  EXPECT_FALSE(req["memory"].IsDefined());
}

// The subtree `field` of the scaling pod equals the fractional pod's, integers kept integers.
void ExpectCopied(const std::string& spec, const std::string& field) {
  const std::string yaml = std::string(kHead) + spec;
  auto src = doc::ParseYaml(yaml);
  ASSERT_TRUE(src.ok());
  const std::string want = SubtreeJson(src->Roots()[0]["spec"][field], field);
  ASSERT_FALSE(want.empty());
  Parsed p = ScalingPodOf(yaml);
  EXPECT_EQ(SubtreeJson(p.pod["spec"][field], field), want);
}

TEST(ScalingPodJson, CopiesPodAffinity) {
  ExpectCopied(R"(spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchExpressions: [{key: security, operator: In, values: [S1]}]
        topologyKey: topology.kubernetes.io/zone
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector:
            matchExpressions: [{key: security, operator: In, values: [S2]}]
          topologyKey: topology.kubernetes.io/zone
  containers: [{name: c, image: i}]
)",
               "affinity");
}

TEST(ScalingPodJson, CopiesNodeAffinity) {
  ExpectCopied(R"(spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: topology.kubernetes.io/zone, operator: In, values: [antarctica-east1, antarctica-west1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions: [{key: label-1, operator: In, values: [key-1]}]
      - weight: 50
        preference:
          matchExpressions: [{key: label-2, operator: In, values: [key-2]}]
  containers: [{name: c, image: i}]
)",
               "affinity");
}

TEST(ScalingPodJson, CopiesNodeSelector) {
  ExpectCopied(
      "spec:\n  nodeSelector: {region: east, type: user-node}\n  containers: [{name: c}]\n",
      "nodeSelector");
}

TEST(ScalingPodJson, CopiesTolerations) {
  ExpectCopied(
      "spec:\n  tolerations:\n  - {key: example-key, operator: Exists, effect: NoSchedule}\n"
      "  - {key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}\n"
      "  containers: [{name: c}]\n",
      "tolerations");
}

TEST(SubtreeJson, WritesSchemaIntegersAsNumbersAndEverythingElseAsStrings) {
  auto d = doc::ParseYaml(R"(spec:
  tolerations: [{key: "5", operator: Equal, value: "10", tolerationSeconds: 30}]
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 7
        preference: {matchExpressions: [{key: weight, operator: In, values: ["1"]}]}
)");
  ASSERT_TRUE(d.ok());
  const doc::Node spec = d->Roots()[0]["spec"];
  EXPECT_EQ(SubtreeJson(spec["tolerations"], "tolerations"),
            R"([{"key":"5","operator":"Equal","value":"10","tolerationSeconds":30}])");
  EXPECT_EQ(
      SubtreeJson(spec["affinity"], "affinity"),
      R"({"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":7,)"
      R"("preference":{"matchExpressions":[{"key":"weight","operator":"In","values":["1"]}]}}]}})");
  EXPECT_EQ(SubtreeJson(spec["nodeSelector"], "nodeSelector"), "");
}

TEST(ReadPodFacts, ReadsTheConditionTheRequestsAndTheScalingPodsGpus) {
  PodFacts f = FromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: n, deletionTimestamp: "2025-01-01T00:00:00Z"}
spec:
  schedulerName: kai-scheduler
  containers:
  - {name: a, resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "2"}}}
  - {name: b, resources: {requests: {cpu: 500m}}}
status:
  conditions:
  - {type: Ready, status: "False", reason: Other}
  - {type: PodScheduled, status: "False", reason: Unschedulable}
)");
  EXPECT_EQ(f.Key(), "n/p");
  EXPECT_EQ(f.scheduler_name, "kai-scheduler");
  EXPECT_TRUE(f.terminating);
  ASSERT_TRUE(f.scheduled.has_value());
  EXPECT_TRUE(f.Unschedulable());
  EXPECT_EQ(f.cpu_milli, 1500);
  EXPECT_EQ(f.memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(f.gpu_request, 2);
}

TEST(ReadPodFacts, BadQuantityIsAnErrorNamingThePodAndField) {
  auto d = doc::ParseYaml(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\n"
      "spec:\n  containers: [{name: a, resources: {requests: {cpu: lots}}}]\n");
  ASSERT_TRUE(d.ok());
  auto f = ReadPodFacts(d->Roots()[0], "api");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("Pod n/p"), std::string::npos) << f.error().message;
  EXPECT_NE(f.error().message.find("spec.containers[0].resources.requests.cpu"), std::string::npos)
      << f.error().message;
}

}  // namespace
}  // namespace kai::scaleadjuster
