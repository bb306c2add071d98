#include "kai/core/k8s/nvfractions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/k8s/decode.h"

namespace kai::nvfractions {
namespace {

const std::string kRequest = RequestKey("main");
const std::string kLimit = LimitKey("main");

PodFacts Facts(std::vector<Annotation> annotations, bool whole_gpu = false) {
  return {std::move(annotations), {"init", "main", "side"}, whole_gpu};
}

// The broken rule's field and message, "" when the pod parses.
std::string ErrorOf(const PodFacts& pod) {
  const Parsed p = ParseNvFractions(pod);
  return p.error ? p.error->field + ": " + p.error->message : "";
}

TEST(NvFractionsTest, KeysNameTheContainer) {
  EXPECT_EQ(kRequest, "nvidia.com/container.main.gpu-memory.request");
  EXPECT_EQ(kLimit, "nvidia.com/container.main.gpu-memory.limit");
  EXPECT_EQ(DevicesKey("main"), "nvidia.com/container.main.gpus.devices");
  EXPECT_EQ(DevicesContainer("nvidia.com/container.main.gpus.devices"), "main");
  EXPECT_FALSE(DevicesContainer("nvidia.com/container..gpus.devices"));
  EXPECT_FALSE(DevicesContainer(kRequest));
}

TEST(NvFractionsTest, APodWithoutTheAnnotationsAsksForNothing) {
  const Parsed p = ParseNvFractions(Facts({{"gpu-memory", "1024"}, {"other", "x"}}));
  EXPECT_FALSE(p.request);
  EXPECT_FALSE(p.error);
}

TEST(NvFractionsTest, TheRequestIsReadInMib) {
  const Parsed p = ParseNvFractions(Facts({{kRequest, "7680Mi"}, {kLimit, "8Gi"}}));
  ASSERT_TRUE(p.request) << ErrorOf(Facts({{kRequest, "7680Mi"}, {kLimit, "8Gi"}}));
  EXPECT_EQ(p.request->container, "main");
  EXPECT_EQ(p.request->request_mib, 7680);
  EXPECT_EQ(p.request->limit_mib, 8192);
}

TEST(NvFractionsTest, DecimalUnitsRoundUpToWholeMib) {
  // 1024M = 1,024,000,000 bytes = 976.56 MiB: the runtime reads 977.
  const Parsed p = ParseNvFractions(Facts({{kRequest, "1024M"}}));
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->request_mib, 977);
  EXPECT_EQ(ParseNvFractions(Facts({{kRequest, "1"}})).request->request_mib, 1);
}

TEST(NvFractionsTest, TheRequestDefaultsToTheLimit) {
  const Parsed p = ParseNvFractions(Facts({{kLimit, "4Gi"}}));
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->request_mib, 4096);
  EXPECT_EQ(p.request->limit_mib, 4096);
}

TEST(NvFractionsTest, AnInitContainerMayTakeTheShare) {
  const Parsed p = ParseNvFractions(Facts({{RequestKey("init"), "1Gi"}}));
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->container, "init");
}

TEST(NvFractionsTest, BadQuantitiesAreRefused) {
  for (const char* bad : {"0", "-1Gi", "abc", "1GB", "", "99999999999999999999Ei"}) {
    EXPECT_EQ(ErrorOf(Facts({{kRequest, bad}})),
              "metadata.annotations." + kRequest +
                  ": must be a positive memory quantity (such as 7680Mi), got \"" + bad + "\"");
  }
  EXPECT_NE(ErrorOf(Facts({{kRequest, "1Gi"}, {kLimit, "0"}})).find(kLimit + ": must be"),
            std::string::npos);
}

TEST(NvFractionsTest, ARequestAboveTheLimitIsRefused) {
  EXPECT_EQ(ErrorOf(Facts({{kRequest, "8Gi"}, {kLimit, "8191Mi"}})),
            "metadata.annotations." + kRequest + ": the request 8Gi is above the limit 8191Mi");
  // Compared exactly, in bytes: 1024M is below 977Mi though both round to 977 MiB.
  EXPECT_EQ(ErrorOf(Facts({{kRequest, "1024M"}, {kLimit, "977Mi"}})), "");
  EXPECT_NE(ErrorOf(Facts({{kRequest, "977Mi"}, {kLimit, "1024M"}})), "");
}

TEST(NvFractionsTest, OnlyOneContainerMayAsk) {
  EXPECT_EQ(ErrorOf(Facts({{kRequest, "1Gi"}, {RequestKey("side"), "1Gi"}})),
            "metadata.annotations." + RequestKey("side") +
                ": NvFractions annotations name containers \"main\" and \"side\"; only one "
                "container of a pod may request a GPU fraction");
}

TEST(NvFractionsTest, TheContainerMustExist) {
  EXPECT_EQ(ErrorOf(Facts({{RequestKey("ghost"), "1Gi"}})),
            "metadata.annotations." + RequestKey("ghost") +
                ": the pod has no container or init container named \"ghost\"");
  // A name with a dot is no container name (a DNS label).
  EXPECT_NE(ErrorOf(Facts({{RequestKey("a.b"), "1Gi"}})).find("named \"a.b\""), std::string::npos);
}

TEST(NvFractionsTest, LegacyAnnotationsAndWholeGpusDoNotCombine) {
  EXPECT_EQ(ErrorOf(Facts({{"gpu-fraction", "0.5"}, {kRequest, "1Gi"}})),
            "metadata.annotations." + kRequest +
                ": NvFractions cannot be combined with the gpu-fraction annotation (ask for the "
                "GPU share one way)");
  EXPECT_NE(ErrorOf(Facts({{"gpu-memory", "1024"}, {kRequest, "1Gi"}})).find("gpu-memory"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(Facts({{kRequest, "1Gi"}}, true)),
            "metadata.annotations." + kRequest +
                ": a pod asking for GPU memory through NvFractions must not also request "
                "nvidia.com/gpu");
}

TEST(NvFractionsTest, TheFractionContainerNameMustMatch) {
  EXPECT_EQ(ErrorOf(Facts({{"gpu-fraction-container-name", "main"}, {kRequest, "1Gi"}})), "");
  EXPECT_EQ(ErrorOf(Facts({{"gpu-fraction-container-name", "side"}, {kRequest, "1Gi"}})),
            "metadata.annotations.gpu-fraction-container-name: names container \"side\", but "
            "the NvFractions annotations are for container \"main\"");
}

TEST(NvFractionsTest, RelevantKeys) {
  EXPECT_TRUE(Relevant(kRequest));
  EXPECT_TRUE(Relevant(kLimit));
  EXPECT_TRUE(Relevant("gpu-fraction"));
  EXPECT_TRUE(Relevant("gpu-fraction-container-name"));
  EXPECT_FALSE(Relevant(DevicesKey("main")));
  EXPECT_FALSE(Relevant("nvidia.com/container.main.other"));
  EXPECT_TRUE(HasNvFractions({{kLimit, "1"}}));
  EXPECT_FALSE(HasNvFractions({{"gpu-memory", "1"}}));
}

// --- the pod decoder ---

std::string PodYaml(const std::string& annotations, const std::string& gpu = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
         "  annotations:\n" +
         annotations +
         "spec:\n  schedulerName: kai-scheduler\n  initContainers:\n  - name: setup\n"
         "  containers:\n  - name: main\n    resources: {requests: {cpu: '1'" +
         gpu + "}}\n";
}

TEST(NvFractionsDecodeTest, TheRequestBecomesTheGpuMemoryOfThePod) {
  ClusterState state;
  const Status s =
      DecodeManifestText(PodYaml("    nvidia.com/container.main.gpu-memory.request: 1024M\n"
                                 "    nvidia.com/container.main.gpu-memory.limit: 2Gi\n"
                                 "    gpu-fraction-num-devices: '2'\n"),
                         "t.yaml", state);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(state.pods.size(), 1u);
  EXPECT_EQ(state.pods[0].gpu_sharing.memory_mib, 977);
  EXPECT_EQ(state.pods[0].gpu_sharing.num_devices, 2);
  EXPECT_TRUE(state.pods[0].gpu_sharing.IsShared());
}

TEST(NvFractionsDecodeTest, BrokenRulesNameThePodAndTheField) {
  ClusterState state;
  const Status s =
      DecodeManifestText(PodYaml("    nvidia.com/container.setup.gpu-memory.request: 4Gi\n"
                                 "    nvidia.com/container.setup.gpu-memory.limit: 2Gi\n"),
                         "t.yaml", state);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("t.yaml: Pod default/p: metadata.annotations.nvidia.com/"
                                   "container.setup.gpu-memory.request: the request 4Gi is "
                                   "above the limit 2Gi"),
            std::string::npos)
      << s.error().message;
}

TEST(NvFractionsDecodeTest, AWholeGpuIsReportedOnce) {
  ClusterState state;
  const Status s = DecodeManifestText(
      PodYaml("    nvidia.com/container.main.gpu-memory.request: 4Gi\n", ", nvidia.com/gpu: '1'"),
      "t.yaml", state);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(ProblemsOf(s).size(), 1u) << s.error().message;
  EXPECT_NE(s.error().message.find("through NvFractions must not also request nvidia.com/gpu"),
            std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace kai::nvfractions
