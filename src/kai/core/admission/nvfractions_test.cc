// Admission of NvFractions pods (k8s/nvfractions.h): the request rules, the devices annotation
// only the binder writes, and the mutation (no ConfigMap environment).
#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::MakeReview;

constexpr const char* kBinder = "system:serviceaccount:kai-scheduler:kai-binder";
constexpr const char* kRequest = "nvidia.com/container.main.gpu-memory.request";
constexpr const char* kDevices = "nvidia.com/container.main.gpus.devices";

Options SharingOn() {
  Options o;
  o.gpu_sharing_enabled = true;
  return o;
}

// A KAI pod with `annotations` (YAML map lines, indented 4), an init container "setup" and a
// container "main" (with `resources`, YAML lines indented 6, when given).
std::string PodYaml(const std::string& annotations, const std::string& resources = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\n  namespace: team-a\n";
  if (!annotations.empty()) y += "  annotations:\n" + annotations;
  y += "spec:\n  schedulerName: kai-scheduler\n  initContainers:\n  - name: setup\n"
       "  containers:\n  - name: main\n";
  if (!resources.empty()) y += "    resources:\n" + resources;
  return y;
}

std::string Line(const std::string& key, const std::string& value) {
  return "    " + key + ": \"" + value + "\"\n";
}

Verdict Validate(const std::string& yaml, const Options& o = SharingOn()) {
  auto r = MakeReview(Operation::kCreate, yaml);
  return ValidatePod(r.request, o);
}

Verdict Update(const std::string& old_yaml, const std::string& yaml, const std::string& user) {
  auto r = MakeReview(Operation::kUpdate, yaml, old_yaml);
  r.request.username = user;
  return ValidatePod(r.request, SharingOn());
}

TEST(NvFractionsAdmission, AValidRequestIsAllowed) {
  EXPECT_TRUE(Validate(PodYaml(Line(kRequest, "7680Mi"))).allowed);
  EXPECT_TRUE(Validate(PodYaml(Line(kRequest, "1024M") +
                               Line("nvidia.com/container.main.gpu-memory.limit", "8Gi") +
                               Line("gpu-fraction-num-devices", "2") +
                               Line("gpu-fraction-container-name", "main")))
                  .allowed);
  EXPECT_TRUE(
      Validate(PodYaml(Line("nvidia.com/container.setup.gpu-memory.limit", "1Gi"))).allowed);
}

TEST(NvFractionsAdmission, BrokenRulesAreDeniedWithTheField) {
  struct Case {
    std::string annotations, resources, message;
  };
  const std::string field = "Pod team-a/train: metadata.annotations.";
  for (const Case& c : std::vector<Case>{
           {Line(kRequest, "0"), "",
            field + kRequest + ": must be a positive memory quantity (such as 7680Mi), got \"0\""},
           {Line(kRequest, "lots"), "", field + kRequest + ": must be a positive memory quantity"},
           {Line(kRequest, "2Gi") + Line("nvidia.com/container.main.gpu-memory.limit", "1Gi"), "",
            field + kRequest + ": the request 2Gi is above the limit 1Gi"},
           {Line(kRequest, "1Gi") + Line("nvidia.com/container.setup.gpu-memory.request", "1Gi"),
            "", "only one container of a pod may request a GPU fraction"},
           {Line("nvidia.com/container.ghost.gpu-memory.request", "1Gi"), "",
            "the pod has no container or init container named \"ghost\""},
           {Line(kRequest, "1Gi") + Line("gpu-fraction", "0.5"), "",
            "cannot be combined with the gpu-fraction annotation"},
           {Line(kRequest, "1Gi") + Line("gpu-memory", "1024"), "",
            "cannot be combined with the gpu-memory annotation"},
           {Line(kRequest, "1Gi") + Line("gpu-fraction-container-name", "setup"), "",
            field + "gpu-fraction-container-name: names container \"setup\""},
           {Line(kRequest, "1Gi"), "      limits:\n        nvidia.com/gpu: 1\n",
            "must not also request nvidia.com/gpu"},
           {Line(kRequest, "1Gi"), "      requests:\n        nvidia.com/gpu: 1\n",
            "must not also request nvidia.com/gpu"},
       }) {
    const Verdict v = Validate(PodYaml(c.annotations, c.resources));
    ASSERT_FALSE(v.allowed) << c.annotations;
    EXPECT_NE(v.message.find(c.message), std::string::npos) << v.message;
    EXPECT_EQ(v.reason, "gpu_sharing");
  }
}

TEST(NvFractionsAdmission, GpuSharingMustBeOn) {
  const Verdict v = Validate(PodYaml(Line(kRequest, "1Gi")), Options{});
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, std::string("Pod team-a/train: metadata.annotations.") + kRequest +
                           ": GPU sharing is disabled on this cluster");
}

TEST(NvFractionsAdmission, NumDevicesAndMpsAcceptAnNvFractionsShare) {
  EXPECT_TRUE(
      Validate(PodYaml(Line(kRequest, "1Gi") + Line("gpu-fraction-num-devices", "3"))).allowed);
  EXPECT_TRUE(Validate(PodYaml(Line(kRequest, "1Gi") + Line("mps", "true"))).allowed);
}

TEST(NvFractionsAdmission, NoPodIsCreatedWithTheDevicesAnnotation) {
  const Verdict v = Validate(PodYaml(Line(kRequest, "1Gi") + Line(kDevices, "GPU-1")));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, std::string("Pod team-a/train: metadata.annotations.") + kDevices +
                           ": only the binder writes it, after it has chosen the pod's GPUs");
  EXPECT_EQ(v.reason, "nvfractions_devices");
}

TEST(NvFractionsAdmission, OnlyTheBinderChangesTheDevicesAnnotation) {
  const std::string before = PodYaml(Line(kRequest, "1Gi"));
  const std::string after = PodYaml(Line(kRequest, "1Gi") + Line(kDevices, "GPU-1"));
  EXPECT_TRUE(Update(before, after, kBinder).allowed);  // written at bind time
  EXPECT_TRUE(Update(after, before, kBinder).allowed);  // removed on rollback
  const Verdict v = Update(before, after, "alice");
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message, std::string("Pod team-a/train: metadata.annotations.") + kDevices +
                           ": only the binder (" + kBinder + ") may change it, not \"alice\"");
  EXPECT_FALSE(Update(after, before, "alice").allowed);
  EXPECT_FALSE(
      Update(after, PodYaml(Line(kRequest, "1Gi") + Line(kDevices, "GPU-2")), "alice").allowed);
  // Another edit of a pod that has it is anyone's.
  EXPECT_TRUE(Update(after, after, "alice").allowed);
}

TEST(NvFractionsAdmission, TheDevicesWriterIsAnOption) {
  Options o = SharingOn();
  o.nvfractions_devices_writer = "kubernetes-admin";
  auto r = MakeReview(Operation::kUpdate, PodYaml(Line(kRequest, "1Gi") + Line(kDevices, "0")),
                      PodYaml(Line(kRequest, "1Gi")));
  r.request.username = "kubernetes-admin";
  EXPECT_TRUE(ValidatePod(r.request, o).allowed);
  r.request.username = kBinder;
  EXPECT_FALSE(ValidatePod(r.request, o).allowed);
}

TEST(NvFractionsAdmission, TheMutationAddsNoConfigMapEnvironment) {
  Options o = SharingOn();
  o.block_nvidia_visible_devices = true;
  auto r = MakeReview(Operation::kCreate, PodYaml(Line(kRequest, "1Gi")));
  const Verdict v = MutatePod(r.request, o, [](size_t n) { return std::string(n, 'x'); });
  ASSERT_TRUE(v.allowed) << v.message;
  // The runtime class, and NVIDIA_VISIBLE_DEVICES=void on the init container only: the share
  // goes to "main" through the runtime, with no ConfigMap.
  ASSERT_EQ(v.patch.size(), 2u) << PatchJson(v.patch);
  EXPECT_EQ(v.patch[0].path, "/spec/initContainers/0/env");
  EXPECT_EQ(v.patch[1], (PatchOp{"add", "/spec/runtimeClassName", "\"nvidia\""}));
}

}  // namespace
}  // namespace kai::admission
