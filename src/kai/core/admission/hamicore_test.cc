#include "kai/core/admission/hamicore.h"

#include <gtest/gtest.h>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::MakeReview;

RandomSuffix Fixed() {
  return [](size_t) { return std::string("abcdefg"); };
}

Options HamiCore() {
  Options o;
  o.gpu_sharing_enabled = true;
  o.hami_core_enabled = true;
  return o;
}

std::string Pod(const std::string& annotations, const std::string& containers) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\n  namespace: team-a\n"
         "  annotations:\n" +
         annotations + "spec:\n  schedulerName: kai-scheduler\n" + containers;
}

const char* kOneContainer = "  containers:\n  - name: main\n    image: trainer\n";

std::string LimitEnv(const std::string& cm) {
  return R"({"name":"CUDA_DEVICE_MEMORY_LIMIT","valueFrom":{"configMapKeyRef":)"
         R"({"key":"CUDA_DEVICE_MEMORY_LIMIT","name":")" +
         cm + R"(","optional":true}}})";
}

// The patch operations that touch CUDA_DEVICE_MEMORY_LIMIT.
std::vector<PatchOp> LimitOps(const Verdict& v) {
  std::vector<PatchOp> out;
  for (const PatchOp& op : v.patch) {
    if (op.value_json.find("CUDA_DEVICE_MEMORY_LIMIT") != std::string::npos) out.push_back(op);
  }
  return out;
}

TEST(HamiCoreEnv, PointsAtTheCapabilitiesMapOptionally) {
  const EnvSetting e = CudaMemoryLimitEnv("train-abcdefg-shared-gpu-0");
  EXPECT_EQ(e.json, LimitEnv("train-abcdefg-shared-gpu-0"));
  EXPECT_EQ(e.entry.name, "CUDA_DEVICE_MEMORY_LIMIT");
  EXPECT_EQ(e.entry.key, "CUDA_DEVICE_MEMORY_LIMIT");
  EXPECT_TRUE(e.entry.value_from);
  EXPECT_TRUE(e.entry.optional);
}

TEST(HamiCoreMutate, FractionAndGpuMemoryPodsGetTheLimitAfterTheSharingEnvironment) {
  for (const char* annotation : {"    gpu-fraction: \"0.5\"\n", "    gpu-memory: \"4096\"\n"}) {
    auto r = MakeReview(Operation::kCreate, Pod(annotation, kOneContainer));
    const Verdict v = MutatePod(r.request, HamiCore(), Fixed());
    ASSERT_TRUE(v.allowed) << v.message;
    const std::vector<PatchOp> want = {
        {"add", "/spec/containers/0/env/-", LimitEnv("train-abcdefg-shared-gpu-0")}};
    EXPECT_EQ(LimitOps(v), want) << annotation;
    // After NVIDIA_VISIBLE_DEVICES, RUNAI_NUM_OF_GPUS and GPU_PORTION, as KAI appends it.
    const std::string pod = testing::Apply(r.request, v.patch);
    const size_t portion = pod.find("\"GPU_PORTION\""), limit = pod.find("\"CUDA_DEVICE");
    ASSERT_NE(limit, std::string::npos) << pod;
    EXPECT_LT(portion, limit) << pod;
  }
}

TEST(HamiCoreMutate, OffByDefaultAndNeverOnPodsWithoutAShare) {
  auto fraction = MakeReview(Operation::kCreate, Pod("    gpu-fraction: \"0.5\"\n", kOneContainer));
  Options off;
  off.gpu_sharing_enabled = true;
  EXPECT_TRUE(LimitOps(MutatePod(fraction.request, off, Fixed())).empty());
  auto whole =
      MakeReview(Operation::kCreate, Pod("    team: a\n",
                                         "  containers:\n  - name: main\n    resources:\n"
                                         "      limits:\n        nvidia.com/gpu: \"1\"\n"));
  const Verdict v = MutatePod(whole.request, HamiCore(), Fixed());
  ASSERT_TRUE(v.allowed);
  EXPECT_TRUE(LimitOps(v).empty());
}

TEST(HamiCoreMutate, GoesToTheNamedContainerEvenAnInitContainer) {
  auto named = MakeReview(Operation::kCreate,
                          Pod("    gpu-fraction: \"0.25\"\n    gpu-fraction-container-name: gpu\n",
                              "  containers:\n  - name: sidecar\n  - name: gpu\n"));
  EXPECT_EQ(LimitOps(MutatePod(named.request, HamiCore(), Fixed())),
            (std::vector<PatchOp>{
                {"add", "/spec/containers/1/env/-", LimitEnv("train-abcdefg-shared-gpu-1")}}));
  auto init = MakeReview(Operation::kCreate,
                         Pod("    gpu-fraction: \"0.25\"\n    gpu-fraction-container-name: warm\n",
                             "  initContainers:\n  - name: warm\n  containers:\n  - name: main\n"));
  EXPECT_EQ(LimitOps(MutatePod(init.request, HamiCore(), Fixed())),
            (std::vector<PatchOp>{
                {"add", "/spec/initContainers/0/env/-", LimitEnv("train-abcdefg-shared-gpu-i0")}}));
}

TEST(HamiCoreMutate, AUserValueIsReplacedAndTheMutatedPodIsLeftAsItIs) {
  auto r = MakeReview(Operation::kCreate,
                      Pod("    gpu-fraction: \"0.5\"\n    runai/shared-gpu-configmap: job-x\n",
                          "  containers:\n  - name: main\n    env:\n"
                          "    - name: CUDA_DEVICE_MEMORY_LIMIT\n      value: 80000m\n"));
  const Verdict v = MutatePod(r.request, HamiCore(), Fixed());
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(LimitOps(v),
            (std::vector<PatchOp>{{"replace", "/spec/containers/0/env/0", LimitEnv("job-x-0")}}));
  auto again = testing::Json(Operation::kCreate, testing::Apply(r.request, v.patch));
  const Verdict second = MutatePod(again.request, HamiCore(), Fixed());
  ASSERT_TRUE(second.allowed) << second.message;
  EXPECT_TRUE(second.patch.empty()) << PatchJson(second.patch);
  // A non-optional reference is made optional, as KAI's plugin writes it.
  auto strict = MakeReview(
      Operation::kCreate,
      Pod("    gpu-fraction: \"0.5\"\n    runai/shared-gpu-configmap: job-x\n",
          "  containers:\n  - name: main\n    env:\n    - name: CUDA_DEVICE_MEMORY_LIMIT\n"
          "      valueFrom:\n        configMapKeyRef: {name: job-x-0, key: "
          "CUDA_DEVICE_MEMORY_LIMIT}\n"));
  EXPECT_EQ(LimitOps(MutatePod(strict.request, HamiCore(), Fixed())),
            (std::vector<PatchOp>{{"replace", "/spec/containers/0/env/0", LimitEnv("job-x-0")}}));
}

}  // namespace
}  // namespace kai::admission
