#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"
#include "kai/daemons/binder/objects.h"

namespace kai::admission {
namespace {

using testing::MakeReview;

RandomSuffix Fixed(std::string s = "abcdefg") {
  return [s](size_t n) {
    EXPECT_EQ(n, kConfigMapSuffixLength);
    return s;
  };
}

RandomSuffix Unused() {
  return [](size_t) {
    ADD_FAILURE() << "no new ConfigMap name was expected";
    return std::string("unused!");
  };
}

const char* kFractionPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: team-a
  annotations:
    gpu-fraction: "0.5"
spec:
  schedulerName: kai-scheduler
  containers:
  - name: main
    image: trainer
)";

std::string EnvRef(const std::string& name, const std::string& cm) {
  return R"({"name":")" + name + R"(","valueFrom":{"configMapKeyRef":{"key":")" + name +
         R"(","name":")" + cm + R"("}}})";
}

TEST(MutatePod, FractionPodGetsTheSharingEnvironmentVolumeAndRuntimeClass) {
  auto r = MakeReview(Operation::kCreate, kFractionPod);
  const Verdict v = MutatePod(r.request, Options{}, Fixed());
  ASSERT_TRUE(v.allowed) << v.message;
  const std::string cm = "train-abcdefg-shared-gpu-0";
  const std::vector<PatchOp> want = {
      {"add", "/metadata/annotations/runai~1shared-gpu-configmap", R"("train-abcdefg-shared-gpu")"},
      {"add", "/spec/containers/0/env", "[" + EnvRef("NVIDIA_VISIBLE_DEVICES", cm) + "]"},
      {"add", "/spec/containers/0/env/-", EnvRef("RUNAI_NUM_OF_GPUS", cm)},
      {"add", "/spec/containers/0/env/-", EnvRef("GPU_PORTION", cm)},
      {"add", "/spec/volumes",
       R"([{"name":")" + cm + R"(-vol","configMap":{"name":")" + cm + R"("}}])"},
      {"add", "/spec/containers/0/envFrom",
       R"([{"configMapRef":{"name":")" + cm + R"(-evar","optional":false}}])"},
      {"add", "/spec/runtimeClassName", R"("nvidia")"},
  };
  EXPECT_EQ(v.patch, want);
}

TEST(MutatePod, MutatingTheMutatedPodChangesNothing) {
  Options o;
  o.block_nvidia_visible_devices = true;
  const std::string pod = std::string(kFractionPod) + "  - name: sidecar\n";
  auto r = MakeReview(Operation::kCreate, pod);
  const Verdict first = MutatePod(r.request, o, Fixed());
  ASSERT_TRUE(first.allowed);
  ASSERT_FALSE(first.patch.empty());
  auto again = testing::Json(Operation::kCreate, testing::Apply(r.request, first.patch));
  const Verdict second = MutatePod(again.request, o, Unused());
  ASSERT_TRUE(second.allowed) << second.message;
  EXPECT_TRUE(second.patch.empty()) << PatchJson(second.patch);
}

TEST(MutatePod, NamedContainerKeepsItsEnvAndIsNamedByItsIndex) {
  auto r = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {gpu-memory: "2000", gpu-fraction-container-name: worker}
spec:
  schedulerName: kai-scheduler
  runtimeClassName: custom
  volumes:
  - {name: data, emptyDir: {}}
  containers:
  - name: main
  - name: worker
    env:
    - {name: A, value: "1"}
    - {name: GPU_PORTION, value: "0.9"}
    envFrom:
    - configMapRef: {name: mine}
)");
  const Verdict v = MutatePod(r.request, Options{}, Fixed("zzzzzzz"));
  ASSERT_TRUE(v.allowed) << v.message;
  const std::string cm = "train-zzzzzzz-shared-gpu-1";
  const std::vector<PatchOp> want = {
      {"add", "/metadata/annotations/runai~1shared-gpu-configmap", R"("train-zzzzzzz-shared-gpu")"},
      {"add", "/spec/containers/1/env/-", EnvRef("NVIDIA_VISIBLE_DEVICES", cm)},
      {"add", "/spec/containers/1/env/-", EnvRef("RUNAI_NUM_OF_GPUS", cm)},
      {"replace", "/spec/containers/1/env/1", EnvRef("GPU_PORTION", cm)},
      {"add", "/spec/volumes/-",
       R"({"name":")" + cm + R"(-vol","configMap":{"name":")" + cm + R"("}})"},
      {"add", "/spec/containers/1/envFrom/-",
       R"({"configMapRef":{"name":")" + cm + R"(-evar","optional":false}})"},
  };  // the pod names its runtime class: kept
  EXPECT_EQ(v.patch, want);
}

TEST(MutatePod, InitContainerSharesAreNamedWithAnI) {
  auto r = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {gpu-fraction: "0.25", gpu-fraction-container-name: warmup}
spec:
  schedulerName: kai-scheduler
  initContainers:
  - name: warmup
  containers:
  - name: main
)");
  Options o;
  o.gpu_fraction_runtime_class_name = "";
  const Verdict v = MutatePod(r.request, o, Fixed());
  ASSERT_TRUE(v.allowed);
  ASSERT_EQ(v.patch.size(), 6u);  // no runtime class: the option is off
  EXPECT_EQ(v.patch[1].path, "/spec/initContainers/0/env");
  EXPECT_NE(v.patch[1].value_json.find(R"("name":"train-abcdefg-shared-gpu-i0")"),
            std::string::npos);
  EXPECT_EQ(v.patch[5].path, "/spec/initContainers/0/envFrom");
}

TEST(MutatePod, TheMutatedPodNamesTheConfigMapsTheBinderLooksFor) {
  for (const char* container : {"", "worker", "warmup"}) {
    std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: team-a
  annotations:
    gpu-fraction: "0.5"
)";
    if (*container) pod += "    gpu-fraction-container-name: " + std::string(container) + "\n";
    pod +=
        "spec:\n  schedulerName: kai-scheduler\n  initContainers:\n  - name: warmup\n"
        "  containers:\n  - name: main\n  - name: worker\n";
    auto r = MakeReview(Operation::kCreate, pod);
    const Verdict v = MutatePod(r.request, Options{}, Fixed());
    ASSERT_TRUE(v.allowed);
    auto bound = binder::ParsePod(testing::Apply(r.request, v.patch));
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    auto c = binder::FractionContainer(bound.value());
    ASSERT_TRUE(c.ok());
    auto names = binder::SharingConfigMapNames(bound.value(), c.value());
    ASSERT_TRUE(names.ok()) << names.error().message;
    EXPECT_TRUE(c.value().container->visible_devices_from_config_map) << container;
    const std::string patch = PatchJson(v.patch);
    EXPECT_NE(patch.find(R"("configMapKeyRef":{"key":"GPU_PORTION","name":")" +
                         names.value().capabilities + "\""),
              std::string::npos)
        << patch;
    EXPECT_NE(patch.find(R"("configMapRef":{"name":")" + names.value().direct_env + "\""),
              std::string::npos)
        << patch;
  }
}

TEST(MutatePod, AnExistingPrefixIsKeptAndLongOwnerNamesAreCut) {
  auto kept = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {gpu-fraction: "0.5", runai/shared-gpu-configmap: chosen}
spec:
  schedulerName: kai-scheduler
  containers: [{name: main}]
)");
  const Verdict v = MutatePod(kept.request, Options{}, Unused());
  ASSERT_TRUE(v.allowed);
  ASSERT_FALSE(v.patch.empty());
  EXPECT_EQ(v.patch[0].path, "/spec/containers/0/env");
  EXPECT_NE(v.patch[0].value_json.find(R"("name":"chosen-0")"), std::string::npos);

  // A pod made from a template has no name yet: its owner's name is the base, cut to 33
  // characters (63 for the volume name, less "-vol", "-<7>-shared-gpu", "-0" and "-evar"),
  // with no '-' or '.' left at its end.
  const std::string owner = std::string(32, 'a') + "-tail-of-a-long-job-name";
  auto owned = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata:
  generateName: x-
  annotations: {gpu-fraction: "0.5"}
  ownerReferences: [{kind: Job, name: )" + owner + R"(}]
spec:
  schedulerName: kai-scheduler
  containers: [{name: main}]
)");
  const Verdict o = MutatePod(owned.request, Options{}, Fixed());
  ASSERT_TRUE(o.allowed);
  ASSERT_FALSE(o.patch.empty());
  EXPECT_EQ(o.patch[0], (PatchOp{"add", "/metadata/annotations/runai~1shared-gpu-configmap",
                                 "\"" + std::string(32, 'a') + "-abcdefg-shared-gpu\""}));
}

TEST(MutatePod, BlockedDevicesGetVoidUnlessTheyRequestAGpu) {
  auto r = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  schedulerName: kai-scheduler
  initContainers:
  - name: init
  containers:
  - name: gpu
    resources: {limits: {nvidia.com/gpu: "1"}}
  - name: mig
    resources: {requests: {nvidia.com/mig-1g.5gb: "1"}}
  - name: cpu
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
  - name: zero
    resources: {requests: {nvidia.com/gpu: "0"}}
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: void}
)");
  Options o;
  o.block_nvidia_visible_devices = true;
  const Verdict v = MutatePod(r.request, o, Unused());
  ASSERT_TRUE(v.allowed);
  const std::string void_env = R"({"name":"NVIDIA_VISIBLE_DEVICES","value":"void"})";
  const std::vector<PatchOp> want = {
      {"add", "/spec/initContainers/0/env", "[" + void_env + "]"},
      {"replace", "/spec/containers/2/env/0", void_env},
  };
  EXPECT_EQ(v.patch, want);
  EXPECT_TRUE(MutatePod(r.request, Options{}, Unused()).patch.empty());  // option off
}

TEST(MutatePod, OnlyKaiPodsAtCreationAreMutated) {
  const std::string other =
      std::string(kFractionPod).replace(std::string(kFractionPod).find("kai-scheduler"), 13, "x");
  auto r = MakeReview(Operation::kCreate, other);
  EXPECT_TRUE(MutatePod(r.request, Options{}, Unused()).patch.empty());
  auto update = MakeReview(Operation::kUpdate, kFractionPod, kFractionPod);
  EXPECT_TRUE(MutatePod(update.request, Options{}, Unused()).patch.empty());
  auto whole = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  schedulerName: kai-scheduler
  containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]
)");
  EXPECT_TRUE(MutatePod(whole.request, Options{}, Unused()).patch.empty());  // no runtime class
}

TEST(MutatePod, UnknownFractionContainerOrNamespaceIsDenied) {
  auto r = MakeReview(Operation::kCreate, R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: team-a
  annotations: {gpu-fraction: "0.5", gpu-fraction-container-name: nope}
spec:
  schedulerName: kai-scheduler
  containers: [{name: main}]
)");
  const Verdict v = MutatePod(r.request, Options{}, Unused());
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: metadata.annotations.gpu-fraction-container-name: no container or "
            "init container is named \"nope\"");
  auto elsewhere = MakeReview(Operation::kCreate, kFractionPod, "", "team-b");
  const Verdict ns = MutatePod(elsewhere.request, Options{}, Unused());
  ASSERT_FALSE(ns.allowed);
  EXPECT_EQ(ns.message,
            "Pod team-a/train: metadata.namespace: \"team-a\" is not the request's namespace "
            "\"team-b\"");
}

TEST(PatchJson, EscapesPointerTokensAndWritesRawValues) {
  EXPECT_EQ(PointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(PatchJson({{"add", "/metadata/annotations/x~1y", R"("v")"},
                       {"add", "/spec/volumes", R"([{"name":"n"}])"},
                       {"remove", "/spec/x", ""}}),
            R"([{"op":"add","path":"/metadata/annotations/x~1y","value":"v"},)"
            R"({"op":"add","path":"/spec/volumes","value":[{"name":"n"}]},)"
            R"({"op":"remove","path":"/spec/x"}])");
}

}  // namespace
}  // namespace kai::admission
