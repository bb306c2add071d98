#include "kai/core/numaexporter/reconcile.h"

#include <gtest/gtest.h>

#include "kai/core/k8s/doc.h"

namespace kai::numaexporter {
namespace {

const CpuToNuma kCpus = {{0, 0}, {1, 1}};

PodAllocation Pod(const std::string& name, std::vector<int64_t> cpus) {
  ContainerAllocation c;
  c.cpu_ids = std::move(cpus);
  return {"ns", name, {c}};
}

TEST(ObservePods, KeepsPodsWithAPlacement) {
  const auto observed = ObservePods({Pod("a", {0}), Pod("shared", {}), Pod("b", {1})}, kCpus);
  ASSERT_EQ(observed.size(), 2u);
  EXPECT_EQ(observed[0], (ObservedPod{"ns", "a", R"([{"zone":"node-0","amount":{"cpu":"1"}}])"}));
  EXPECT_EQ(observed[1].name, "b");
}

TEST(PollPatches, WritesOnlyWhatChanged) {
  const auto observed = ObservePods({Pod("a", {0}), Pod("b", {1}), Pod("c", {0, 1})}, kCpus);
  WriteCache cache{{"ns/a", observed[0].value}, {"ns/b", "stale"}};
  const auto patches = PollPatches(observed, cache);
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].name, "b");
  EXPECT_EQ(patches[1].name, "c");
}

TEST(PruneCache, ForgetsPodsThatLeft) {
  WriteCache cache{{"ns/a", "1"}, {"ns/gone", "2"}};
  PruneCache(cache, {Pod("a", {})});
  EXPECT_EQ(cache, (WriteCache{{"ns/a", "1"}}));
}

std::vector<LivePod> LivePods(const std::string& json) {
  auto d = doc::ParseJson(json);
  EXPECT_TRUE(d.ok());
  const doc::Node items = d->Roots()[0]["items"];
  std::vector<LivePod> out;
  for (size_t i = 0; i < items.size(); ++i) {
    auto p = ReadLivePod(items[i]);
    if (p.ok()) out.push_back(*p);
  }
  return out;
}

TEST(ReadLivePod, ReadsTheAnnotation) {
  const auto pods = LivePods(R"({"items":[
    {"metadata":{"namespace":"ns","name":"a",
                 "annotations":{"kai.scheduler/numa-placement-observed":"[]"}}},
    {"metadata":{"namespace":"ns","name":"b"}},
    {"metadata":{"name":"nameless-namespace"}}]})");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].annotation, "[]");
  EXPECT_EQ(pods[1].annotation, std::nullopt);
}

TEST(PlanDrift, RepairsMissingAndEditedAnnotations) {
  const auto observed =
      ObservePods({Pod("a", {0}), Pod("b", {1}), Pod("c", {0}), Pod("d", {0})}, kCpus);
  std::vector<LivePod> live = {{"ns", "a", observed[0].value},
                               {"ns", "b", std::nullopt},
                               {"ns", "c", "edited"},
                               {"other", "d", std::nullopt}};
  const DriftPlan plan = PlanDrift(observed, live);
  ASSERT_EQ(plan.patches.size(), 2u);
  EXPECT_EQ(plan.patches[0].name, "b");
  EXPECT_EQ(plan.patches[1].name, "c");
  ASSERT_EQ(plan.in_sync.size(), 1u);
  EXPECT_EQ(plan.in_sync[0].name, "a");
}

TEST(AnnotationPatch, IsAMergePatchOfTheAnnotation) {
  EXPECT_EQ(AnnotationPatch("[]"),
            R"({"metadata":{"annotations":{"kai.scheduler/numa-placement-observed":"[]"}}})");
}

}  // namespace
}  // namespace kai::numaexporter
