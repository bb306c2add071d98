#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::MakeReview;

Options SharingOn() {
  Options o;
  o.gpu_sharing_enabled = true;
  return o;
}

// A KAI pod with `annotations` (YAML map lines, indented 4) and `limits` on its container.
std::string PodYaml(const std::string& annotations, const std::string& gpu_limit = "",
                    const std::string& scheduler = "kai-scheduler") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\n  namespace: team-a\n";
  if (!annotations.empty()) y += "  annotations:\n" + annotations;
  y += "spec:\n  schedulerName: " + scheduler + "\n  containers:\n  - name: main\n";
  if (!gpu_limit.empty())
    y += "    resources:\n      limits:\n        nvidia.com/gpu: " + gpu_limit;
  return y + "\n";
}

Verdict Validate(const std::string& yaml, const Options& o = SharingOn()) {
  auto r = MakeReview(Operation::kCreate, yaml);
  return ValidatePod(r.request, o);
}

std::string Fraction(const std::string& v) { return "    gpu-fraction: \"" + v + "\"\n"; }

TEST(ValidatePod, FractionWhileGpuSharingIsDisabledIsDenied) {
  const Verdict v = Validate(PodYaml(Fraction("0.5")), Options{});
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: metadata.annotations.gpu-fraction: GPU sharing is disabled on this "
            "cluster");
  const Verdict m = Validate(PodYaml("    gpu-memory: \"2000\"\n"), Options{});
  ASSERT_FALSE(m.allowed);
  EXPECT_NE(m.message.find("metadata.annotations.gpu-memory: GPU sharing is disabled"),
            std::string::npos);
  EXPECT_TRUE(Validate(PodYaml("", "1"), Options{}).allowed);  // whole GPUs need no sharing
}

TEST(ValidatePod, PodsOfOtherSchedulersAndDeletionsAreNotJudged) {
  EXPECT_TRUE(Validate(PodYaml(Fraction("7"), "", "default-scheduler")).allowed);
  auto r = MakeReview(Operation::kDelete, "", PodYaml(Fraction("7")));
  EXPECT_TRUE(ValidatePod(r.request, SharingOn()).allowed);
}

TEST(ValidatePod, FractionMustBeStrictlyBetweenZeroAndOne) {
  for (const char* ok : {"0.5", ".25", "5e-1", "0.9995", "0.001", "0.0000000000000000001"}) {
    EXPECT_TRUE(Validate(PodYaml(Fraction(ok))).allowed) << ok;
  }
  for (const char* bad : {"1.0", "1", "0", "0.0", "-0.5", "1.5", "500m", "abc", "", "1e", "0.5Gi",
                          "0.99999999999999999999"}) {
    const Verdict v = Validate(PodYaml(Fraction(bad)));
    ASSERT_FALSE(v.allowed) << bad;
    EXPECT_EQ(v.message,
              "Pod team-a/train: metadata.annotations.gpu-fraction: must be a decimal number "
              "strictly between 0 and 1 (a whole GPU is requested as nvidia.com/gpu), got \"" +
                  std::string(bad) + "\"");
  }
}

TEST(ValidatePod, FractionWithAWholeGpuLimitIsDenied) {
  const Verdict v = Validate(PodYaml(Fraction("0.5"), "1"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: metadata.annotations.gpu-fraction: a GPU fraction cannot be "
            "combined with an nvidia.com/gpu limit");
  // An init container's limit counts too.
  const std::string init = PodYaml(Fraction("0.5")) +
                           "  initContainers:\n  - name: setup\n    resources:\n      limits:\n"
                           "        nvidia.com/gpu: \"1\"\n";
  EXPECT_FALSE(Validate(init).allowed);
}

TEST(ValidatePod, GpuMemoryWithFractionOrWholeGpuIsDenied) {
  const Verdict both = Validate(PodYaml(Fraction("0.5") + "    gpu-memory: \"1000\"\n"));
  ASSERT_FALSE(both.allowed);
  EXPECT_EQ(both.message,
            "Pod team-a/train: metadata.annotations.gpu-memory: gpu-memory cannot be combined "
            "with gpu-fraction");
  const Verdict whole = Validate(PodYaml("    gpu-memory: \"1000\"\n", "2"));
  ASSERT_FALSE(whole.allowed);
  EXPECT_EQ(whole.message,
            "Pod team-a/train: metadata.annotations.gpu-memory: gpu-memory cannot be combined "
            "with an nvidia.com/gpu limit");
}

TEST(ValidatePod, GpuMemoryMustBeAPositiveInteger) {
  EXPECT_TRUE(Validate(PodYaml("    gpu-memory: \"2000\"\n")).allowed);
  for (const char* bad : {"0", "-5", "1.5", "2Gi", "abc", "+5"}) {
    const Verdict v = Validate(PodYaml("    gpu-memory: \"" + std::string(bad) + "\"\n"));
    ASSERT_FALSE(v.allowed) << bad;
    EXPECT_EQ(v.message,
              "Pod team-a/train: metadata.annotations.gpu-memory: must be a positive "
              "integer (MiB), got \"" +
                  std::string(bad) + "\"");
  }
}

TEST(ValidatePod, NumDevicesNeedsAShareAndAPositiveInteger) {
  EXPECT_TRUE(Validate(PodYaml(Fraction("0.5") + "    gpu-fraction-num-devices: \"2\"\n")).allowed);
  const Verdict alone = Validate(PodYaml("    gpu-fraction-num-devices: \"2\"\n"));
  ASSERT_FALSE(alone.allowed);
  EXPECT_EQ(alone.message,
            "Pod team-a/train: metadata.annotations.gpu-fraction-num-devices: needs gpu-fraction, "
            "gpu-memory or NvFractions (the share of each device)");
  const Verdict zero = Validate(PodYaml(Fraction("0.5") + "    gpu-fraction-num-devices: \"0\"\n"));
  ASSERT_FALSE(zero.allowed);
  EXPECT_EQ(zero.message,
            "Pod team-a/train: metadata.annotations.gpu-fraction-num-devices: must be a positive "
            "integer, got \"0\"");
}

TEST(ValidatePod, MpsNeedsAGpuShare) {
  const Verdict v = Validate(PodYaml("    mps: \"true\"\n", "1"));
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: metadata.annotations.mps: \"true\" needs a GPU share (gpu-fraction, "
            "gpu-memory or NvFractions)");
  EXPECT_TRUE(Validate(PodYaml("    mps: \"true\"\n    gpu-memory: \"1000\"\n")).allowed);
  EXPECT_TRUE(Validate(PodYaml("    mps: \"true\"\n" + Fraction("0.5"))).allowed);
  EXPECT_TRUE(Validate(PodYaml("    mps: \"false\"\n")).allowed);
}

std::string TwoContainers(const std::string& sidecar_env, const std::string& annotations = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\n  namespace: team-a\n";
  if (!annotations.empty()) y += "  annotations:\n" + annotations;
  return y +
         "spec:\n  schedulerName: kai-scheduler\n  containers:\n  - name: main\n"
         "    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      valueFrom:\n"
         "        configMapKeyRef: {name: cm, key: NVIDIA_VISIBLE_DEVICES}\n"
         "  - name: sidecar\n    env:\n" +
         sidecar_env;
}

TEST(ValidatePod, BlockedVisibleDevicesAllowOnlyVoidOrNone) {
  Options o = SharingOn();
  o.block_nvidia_visible_devices = true;
  const std::string user_value = "    - name: NVIDIA_VISIBLE_DEVICES\n      value: \"0,1\"\n";
  const Verdict v = Validate(TwoContainers(user_value, Fraction("0.5")), o);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: spec.containers[1].env[0]: container \"sidecar\" sets "
            "NVIDIA_VISIBLE_DEVICES to \"0,1\"; only \"void\" or \"none\" are allowed (the device "
            "plugin assigns GPUs)");
  for (const char* ok : {"void", "none"}) {
    const std::string env =
        "    - name: NVIDIA_VISIBLE_DEVICES\n      value: \"" + std::string(ok) + "\"\n";
    EXPECT_TRUE(Validate(TwoContainers(env, Fraction("0.5")), o).allowed) << ok;
  }
  // Without the option, any value passes.
  EXPECT_TRUE(Validate(TwoContainers(user_value, Fraction("0.5"))).allowed);
}

TEST(ValidatePod, BlockedVisibleDevicesMayNotComeFromAReference) {
  Options o = SharingOn();
  o.block_nvidia_visible_devices = true;
  const std::string ref =
      "    - name: NVIDIA_VISIBLE_DEVICES\n      valueFrom:\n        configMapKeyRef: {name: x, "
      "key: y}\n";
  const Verdict v = Validate(TwoContainers(ref, Fraction("0.5")), o);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train: spec.containers[1].env[0]: container \"sidecar\" takes "
            "NVIDIA_VISIBLE_DEVICES from a reference; only the values \"void\" or \"none\" are "
            "allowed");
  // The fraction container's own reference (the mutation's) is exempt; without a GPU share the
  // first container is judged like any other.
  EXPECT_TRUE(
      Validate(TwoContainers("    - {name: OTHER, value: x}\n", Fraction("0.5")), o).allowed);
  const Verdict no_share = Validate(TwoContainers("    - {name: OTHER, value: x}\n"), o);
  ASSERT_FALSE(no_share.allowed);
  EXPECT_NE(no_share.message.find("spec.containers[0].env[0]: container \"main\""),
            std::string::npos);
}

}  // namespace
}  // namespace kai::admission
