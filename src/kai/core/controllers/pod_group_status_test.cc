#include "kai/core/controllers/pod_group_status.h"

#include <gtest/gtest.h>

#include "kai/core/k8s/doc.h"

namespace kai::controllers {
namespace {

PodFacts Pod(const std::string& json) {
  auto d = doc::ParseJson(json);
  EXPECT_TRUE(d.ok());
  auto p = DecodePodFacts(d->Roots().at(0));
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : PodFacts{};
}

// A pod of PodGroup pg in ns "team" with one container's requests and extra annotations.
PodFacts PodWith(const std::string& name, const std::string& phase, bool scheduled,
                 const std::string& requests, const std::string& annotations = "") {
  const std::string cond =
      scheduled ? R"(,"conditions":[{"type":"PodScheduled","status":"True"}])" : "";
  return Pod(R"({"metadata":{"name":")" + name +
             R"(","namespace":"team","annotations":{"pod-group-name":"pg")" + annotations +
             R"(}},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":)" +
             requests + R"(}}]},"status":{"phase":")" + phase + "\"" + cond + "}}");
}

struct Fixture {
  PodGroupFacts pg{"team", "pg", "q", "train", "", {}};
  std::vector<PodFacts> pods;
  std::vector<NodeFacts> nodes{{"n1", {{"nvidia.com/gpu.memory", "40000"}}}};
  std::vector<PriorityClassFacts> classes{{"train", 50, false}, {"inference", 125, false}};

  Result<ResourcesStatus> Compute() const {
    PodGroupInputs in;
    in.pod_group = &pg;
    for (const auto& p : pods) in.pods.push_back(&p);
    in.node = [this](std::string_view name) -> const NodeFacts* {
      for (const auto& n : nodes) {
        if (n.name == name) return &n;
      }
      return nullptr;
    };
    in.priority_classes = &classes;
    return ComputePodGroupStatus(in);
  }
};

TEST(PodGroupStatus, PendingRequestsRunningAllocatesSucceededCountsNowhere) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"500m","memory":"1Gi"})"));
  f.pods.push_back(PodWith("b", "Pending", false, R"({"cpu":"1","memory":"1Gi"})"));
  f.pods.push_back(PodWith("c", "Succeeded", true, R"({"cpu":"4"})"));
  f.pods.push_back(PodWith("d", "Failed", true, R"({"cpu":"8"})"));
  f.pods.push_back(PodWith("e", "Unknown", true, R"({"cpu":"16"})"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->requested, (TextList{{"cpu", "1500m"}, {"memory", "2Gi"}}));
  EXPECT_EQ(s->allocated, (TextList{{"cpu", "500m"}, {"memory", "1Gi"}}));
}

TEST(PodGroupStatus, ScheduledPendingPodCountsAsAllocated) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Pending", true, R"({"nvidia.com/gpu":"1"})"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated, (TextList{{"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(s->requested, (TextList{{"nvidia.com/gpu", "1"}}));
}

TEST(PodGroupStatus, FractionRequestedTimesDevicesAllocatedOnlyOnceReceived) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Pending", false, R"({"cpu":"100m"})",
                           R"(,"gpu-fraction":"0.5","gpu-fraction-num-devices":"2")"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->requested, (TextList{{"cpu", "100m"}, {"nvidia.com/gpu", "1"}}));
  EXPECT_TRUE(s->allocated.empty());
  f.pods[0] = PodWith("a", "Running", true, R"({"cpu":"100m"})",
                      R"(,"gpu-fraction":"0.5","received-resource-type":"Fraction")");
  s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated, (TextList{{"cpu", "100m"}, {"nvidia.com/gpu", "500m"}}));
}

TEST(PodGroupStatus, RegularReceivedFractionPodGetsNoGpuInAllocated) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"1"})",
                           R"(,"gpu-fraction":"0.5","received-resource-type":"Regular")"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated, (TextList{{"cpu", "1"}}));
}

TEST(PodGroupStatus, GpuMemoryOverTheNodesGpuMemory) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"1"})",
                           R"(,"gpu-memory":"10000","received-resource-type":"Fraction")"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->requested, (TextList{{"cpu", "1"}, {"run.ai/gpu.memory", "10k"}}));
  EXPECT_EQ(s->allocated, (TextList{{"cpu", "1"}, {"nvidia.com/gpu", "250m"}}));
  f.nodes[0].gpu_memory_labels = {{"nvidia.com/gpu.memory", "30000"}};
  s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated.at("nvidia.com/gpu"), "333333334n");
}

TEST(PodGroupStatus, AnNvFractionsRequestCountsAsGpuMemory) {
  Fixture f;
  // 1024M is 976.56 MiB: 977, as the runtime reads it.
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"1"})",
                           R"(,"nvidia.com/container.c.gpu-memory.request":"1024M",)"
                           R"("received-resource-type":"Fraction")"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->requested, (TextList{{"cpu", "1"}, {"run.ai/gpu.memory", "977"}}));
  EXPECT_EQ(s->allocated.at("nvidia.com/gpu"), "24425u");  // 977 / 40000 = 0.024425
}

TEST(PodGroupStatus, GpuMemoryOnANodeWithoutTheLabelIsAnErrorNamingIt) {
  Fixture f;
  f.nodes[0].gpu_memory_labels.clear();
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"1"})",
                           R"(,"gpu-memory":"10000","received-resource-type":"Fraction")"));
  auto s = f.Compute();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("team/a"), std::string::npos);
  EXPECT_NE(s.error().message.find("n1"), std::string::npos);
}

TEST(PodGroupStatus, BadFractionAnnotationIsAnErrorNamingPodAndAnnotation) {
  Fixture f;
  f.pods.push_back(PodWith("a", "Pending", false, R"({})", R"(,"gpu-fraction":"half")"));
  auto s = f.Compute();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("Pod team/a: annotation gpu-fraction"), std::string::npos);
}

TEST(PodGroupStatus, NonPreemptibleByPriorityCopiesAllocated) {
  Fixture f;
  f.pg.priority_class_name = "inference";
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"2"})"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated_non_preemptible, (TextList{{"cpu", "2"}}));
}

TEST(PodGroupStatus, PreemptibleKeepsWhatTheServerHeld) {
  Fixture f;
  f.pg.status.allocated_non_preemptible = {{"cpu", "7"}};
  f.pods.push_back(PodWith("a", "Running", true, R"({"cpu":"2"})"));
  auto s = f.Compute();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->allocated_non_preemptible, (TextList{{"cpu", "7"}}));
}

TEST(PodGroupStatus, ExplicitPreemptibilityWinsOverPriority) {
  Fixture f;
  f.pg.priority_class_name = "inference";
  f.pg.preemptibility = "preemptible";
  EXPECT_TRUE(IsPreemptible(f.pg, f.classes));
  f.pg.priority_class_name = "train";
  f.pg.preemptibility = "non-preemptible";
  EXPECT_FALSE(IsPreemptible(f.pg, f.classes));
}

TEST(PodGroupStatus, UnknownPriorityClassFallsBackToGlobalDefaultThen50) {
  Fixture f;
  f.pg.priority_class_name = "missing";
  EXPECT_TRUE(IsPreemptible(f.pg, f.classes));  // 50
  f.classes.push_back({"default", 100, true});
  EXPECT_FALSE(IsPreemptible(f.pg, f.classes));
}

TEST(PodGroupStatus, AmdMemoryLabelIsReadFromTheLabelName) {
  NodeFacts n{"amd", {{"beta.amd.com/gpu.vram.16G", "1"}}};
  auto m = NodeGpuMemory(n);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(CanonicalText(*m), "16k");
  n.gpu_memory_labels.emplace("nvidia.com/gpu.memory", "100");
  EXPECT_FALSE(NodeGpuMemory(n).ok());
}

TEST(PodGroupStatusPatch, NullsWhatIsGoneAndSkipsWhatIsEqual) {
  ResourcesStatus held{{{"cpu", "1"}}, {{"cpu", "1"}, {"memory", "1Gi"}}, {}};
  ResourcesStatus next{{{"cpu", "1"}}, {{"cpu", "2"}}, {}};
  EXPECT_EQ(PodGroupStatusPatch(held, next),
            R"({"status":{"resourcesStatus":{"allocated":{"cpu":"2","memory":null}}}})");
  next.allocated.clear();
  EXPECT_EQ(PodGroupStatusPatch(held, next),
            R"({"status":{"resourcesStatus":{"allocated":null}}})");
  EXPECT_EQ(PodGroupStatusPatch(held, held), "{}");
}

TEST(PodFactsDecode, BadContainerRequestNamesThePodAndField) {
  auto d = doc::ParseJson(
      R"({"metadata":{"name":"p","namespace":"n"},"spec":{"containers":[{"resources":{"requests":{"cpu":"x"}}}]}})");
  auto p = DecodePodFacts(d->Roots().at(0));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "Pod n/p: spec.containers[0].resources.requests.cpu: not a quantity: \"x\"");
}

}  // namespace
}  // namespace kai::controllers

namespace kai::controllers {
namespace {

TEST(PodFactsDecode, ContainersAreSummedInitContainersAreNot) {
  auto d = doc::ParseJson(
      R"({"metadata":{"name":"p","namespace":"n"},"spec":{"initContainers":[{"resources":)"
      R"({"requests":{"cpu":"8"}}}],"containers":[{"resources":{"requests":{"cpu":"250m",)"
      R"("memory":"512Mi"}}},{"resources":{"requests":{"cpu":"750m","memory":"512Mi"}}}]},)"
      R"("status":{"phase":"Pending","conditions":[{"type":"Ready","status":"True"},)"
      R"({"type":"PodScheduled","status":"False"}]}})");
  auto p = DecodePodFacts(d->Roots().at(0));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Texts(p->container_requests), (TextList{{"cpu", "1"}, {"memory", "1Gi"}}));
  EXPECT_FALSE(p->scheduled);
}

}  // namespace
}  // namespace kai::controllers
