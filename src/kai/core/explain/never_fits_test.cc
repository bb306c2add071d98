// Node verdicts tell "fits later" (resources others hold) from "never fits" (the pod and the
// node themselves: a request beyond the empty node, a selector, a taint).
#include <gtest/gtest.h>

#include <string>

#include "kai/core/framework/reasons.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

std::string Node(const std::string& name, int gpus, const std::string& extra = "") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: {host: " + name +
         "}\n" + extra +
         "status:\n  allocatable: {cpu: '8', memory: 8Gi, pods: '110', "
         "nvidia.com/gpu: '" +
         std::to_string(gpus) + "'}\n---\n";
}

std::string Pod(const std::string& name, int gpus, const std::string& node = "",
                const std::string& selector = "") {
  std::string s =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: default}\nspec: {queue: q, minMember: 1}\n---\n";
  s += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
       "\n  namespace: default\n  annotations: {pod-group-name: " + name +
       "}\nspec:\n  schedulerName: kai-scheduler\n";
  if (!node.empty()) s += "  nodeName: " + node + "\n";
  if (!selector.empty()) s += "  nodeSelector: {" + selector + "}\n";
  s += "  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '" + std::to_string(gpus) +
       "'}}}]\n";
  s += node.empty() ? "---\n" : "status: {phase: Running}\n---\n";
  return s;
}

const NodesReason* NodesReasonOf(const sim::CycleReport& report, const std::string& pod,
                                 FitCode code) {
  for (const auto& p : report.pods) {
    if (p.name != pod) continue;
    for (const Reason& r : p.reasons) {
      const auto* n = r.As<NodesReason>();
      if (n && n->code == code) return n;
    }
  }
  return nullptr;
}

TEST(NeverFits, ARequestBeyondTheEmptyNodeNeverFitsAndAFullNodeFitsLater) {
  // small: 2 GPUs, empty; big: 8 GPUs, all held by a running pod. A 4-GPU pod never fits
  // small and fits big later.
  const std::string yaml = testutil::kUnlimitedQueue + Node("small", 2) + Node("big", 8) +
                           Pod("holder", 8, "big") + Pod("want4", 4);
  const auto report = testutil::AllocateOnce(yaml);
  const NodesReason* r = NodesReasonOf(report, "want4", FitCode::kInsufficientResources);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->nodes, 2);
  EXPECT_EQ(r->never_nodes, 1);
}

TEST(NeverFits, ASelectorMismatchNeverFits) {
  const std::string yaml =
      testutil::kUnlimitedQueue + Node("n1", 8) + Node("n2", 8) + Pod("picky", 1, "", "host: n3");
  const auto report = testutil::AllocateOnce(yaml);
  const NodesReason* r = NodesReasonOf(report, "picky", FitCode::kNodeSelectorMismatch);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->nodes, 2);
  EXPECT_EQ(r->never_nodes, 2);
}

TEST(NeverFits, StaticCodesAreThePodAndNodeOwnProperties) {
  EXPECT_TRUE(IsStaticMismatch(FitCode::kTaintNotTolerated));
  EXPECT_TRUE(IsStaticMismatch(FitCode::kGpuSharingUnsupported));
  EXPECT_FALSE(IsStaticMismatch(FitCode::kInsufficientResources));
  EXPECT_FALSE(IsStaticMismatch(FitCode::kNodeUnusable));
  EXPECT_FALSE(IsStaticMismatch(FitCode::kTooManyPods));
}

}  // namespace
}  // namespace kai
