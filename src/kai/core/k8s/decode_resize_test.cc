// In-place pod resize (KEP-1287): a running pod counts as kube-scheduler counts it, the largest
// of its spec, admitted and applied requests while a resize may happen, the admitted and applied
// ones once it is infeasible; only CPU and memory resize.
#include <gtest/gtest.h>

#include <string>

#include "kai/core/k8s/decode.h"

namespace kai {
namespace {

// A running pod whose container asks `spec` CPUs; `status` is the rest of its status.
std::string ResizedPod(const std::string& spec_cpu, const std::string& status) {
  return R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: main
    resources:
      requests: {cpu: ')" +
         spec_cpu + R"(', memory: 4Gi, nvidia.com/gpu: '1'}
      limits: {nvidia.com/gpu: '1'}
status:
  phase: Running
)" + status;
}

Result<PodObject> DecodePodText(const std::string& text) {
  ClusterState state;
  const Status decoded = DecodeManifestText(text, "test.yaml", state);
  if (!decoded.ok()) return decoded.error();
  return state.pods.at(0);
}

PodObject DecodeOk(const std::string& text) {
  auto pod = DecodePodText(text);
  EXPECT_TRUE(pod.ok()) << (pod.ok() ? "" : pod.error().message);
  return pod.ok() ? *pod : PodObject{};
}

constexpr const char* kAdmitted2 = R"(  containerStatuses:
  - name: main
    allocatedResources: {cpu: '2', memory: 4Gi, nvidia.com/gpu: '1'}
    resources:
      requests: {cpu: '2', memory: 4Gi, nvidia.com/gpu: '1'}
)";

TEST(DecodeResizeTest, AnUpsizeNotYetAdmittedCountsAtItsNewSize) {
  const PodObject p = DecodeOk(ResizedPod("6", kAdmitted2));
  EXPECT_EQ(p.request.milli_cpu, 6000);
  EXPECT_EQ(p.request.milli_gpu, 1000);
}

TEST(DecodeResizeTest, ADownsizeNotYetAppliedKeepsTheOldSize) {
  const PodObject p = DecodeOk(ResizedPod("1", kAdmitted2));
  EXPECT_EQ(p.request.milli_cpu, 2000);
}

TEST(DecodeResizeTest, AnInfeasibleResizeCountsWhatTheKubeletAdmitted) {
  const std::string cond = R"(  conditions:
  - {type: PodResizePending, status: 'True', reason: Infeasible}
)";
  EXPECT_EQ(DecodeOk(ResizedPod("64", std::string(kAdmitted2) + cond)).request.milli_cpu, 2000);
  // Kubernetes 1.27-1.32 said it in status.resize.
  const std::string legacy = "  resize: Infeasible\n";
  const PodObject p = DecodeOk(ResizedPod("64", std::string(kAdmitted2) + legacy));
  EXPECT_EQ(p.request.milli_cpu, 2000);
  EXPECT_EQ(p.request.milli_gpu, 1000);  // extended resources do not resize: the spec's
}

TEST(DecodeResizeTest, ADeferredResizeMayStillHappen) {
  const std::string cond = R"(  conditions:
  - {type: PodResizePending, status: 'True', reason: Deferred}
)";
  EXPECT_EQ(DecodeOk(ResizedPod("6", std::string(kAdmitted2) + cond)).request.milli_cpu, 6000);
}

TEST(DecodeResizeTest, WithoutStatusResourcesTheSpecCounts) {
  const std::string plain = "  containerStatuses:\n  - {name: main, ready: true}\n";
  EXPECT_EQ(DecodeOk(ResizedPod("6", plain)).request.milli_cpu, 6000);
}

TEST(DecodeResizeTest, AMalformedAdmittedQuantityNamesTheField) {
  const std::string bad = R"(  containerStatuses:
  - name: main
    allocatedResources: {cpu: lots}
)";
  auto p = DecodePodText(ResizedPod("6", bad));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find(
                "Pod default/p: status.containerStatuses[0].allocatedResources.cpu: invalid "
                "quantity \"lots\""),
            std::string::npos)
      << p.error().message;
}

}  // namespace
}  // namespace kai
