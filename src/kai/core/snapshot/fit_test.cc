#include "kai/core/snapshot/fit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/k8s/decode.h"

namespace kai {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Node n1 (8 GPUs) has three shared GPUs in use, named n1-gpu0, n1-gpu01 and n1-gpu2, each half
// taken; n1-gpu9 is named by a pod that has finished (not in use).
std::string Cluster(const std::string& pending_devices) {
  std::string y = R"(
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.count: '8', nvidia.com/gpu.memory: '100'}}
status:
  allocatable: {cpu: '64', memory: 64Gi, pods: '110', nvidia.com/gpu: '8'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: job, namespace: default}
spec: {queue: q1}
)";
  auto pod = [&](const std::string& name, const std::string& fraction, const std::string& group,
                 const std::string& phase, const std::string& devices) {
    y += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  annotations: {pod-group-name: job, gpu-fraction: '" + fraction +
         "', gpu-fraction-num-devices: '" + devices + "'}\n";
    if (!group.empty()) y += "  labels: {runai-gpu-group: " + group + "}\n";
    y += "spec:\n  schedulerName: kai-scheduler\n";
    if (!group.empty()) y += "  nodeName: n1\n";
    y += "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\nstatus: {phase: " + phase +
         "}\n";
  };
  pod("r0", "0.5", "n1-gpu0", "Running", "1");
  pod("r1", "0.5", "n1-gpu01", "Running", "1");
  pod("r2", "0.5", "n1-gpu2", "Running", "1");
  pod("done", "0.5", "n1-gpu9", "Succeeded", "1");
  pod("pending", "0.75", "", "Pending", pending_devices);
  return y;
}

std::vector<std::string> Chosen(const std::string& devices) {
  ClusterState state;
  const auto errors = ProblemsOf(DecodeManifestText(Cluster(devices), "test.yaml", state));
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
  Session s(BuildSnapshot(state, kNow), ConfigFromShard(std::nullopt).value());
  EXPECT_TRUE(s.OpenPlugins().ok());
  PodId pending = kNone;
  for (PodId p = 0; p < static_cast<PodId>(s.snap().pods.size()); ++p) {
    if (s.snap().pods[p].name == "pending") pending = p;
  }
  const SnapNode& node = s.snap().nodes[s.snap().node_by_name.at("n1")];
  const auto choice = ChooseSharedGpus(s.snap().pods[pending], node, false, [&](const GpuGroup* g) {
    return s.ScoreGpu(pending, node, g);
  });
  EXPECT_TRUE(choice.has_value());
  if (!choice) return {};
  EXPECT_TRUE(choice->new_group);
  return choice->groups;
}

// A new group is named "<node>-gpu<k>" for the first k no group in use has: "n1-gpu01" does not
// take k = 1 (k is written without leading zeros), and a finished pod's group is free again.
TEST(NewGpuGroupName, FirstNumberNoGroupInUseHas) {
  EXPECT_EQ(Chosen("1"), (std::vector<std::string>{"n1-gpu1"}));
  EXPECT_EQ(Chosen("3"), (std::vector<std::string>{"n1-gpu1", "n1-gpu3", "n1-gpu4"}));
}

}  // namespace
}  // namespace kai
