// MIG instances count in queue accounting as the GPUs of their profile: one
// nvidia.com/mig-<g>g.<m>gb instance is g GPUs (KAI's GetGpusQuota).
#include <gtest/gtest.h>

#include <string>

#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/snapshot/snapshot.h"
#include "kai/testing/allocate_once.h"

namespace kai {
namespace {

TEST(MigQuota, ProfileGpusComeFromTheResourceName) {
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-1g.10gb"), 1);
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-3g.40gb"), 3);
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-7g.80gb"), 7);
  EXPECT_EQ(MigProfileGpus("nvidia.com/gpu"), 0);
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-3g"), 0);
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-g.10gb"), 0);
  EXPECT_EQ(MigProfileGpus("nvidia.com/mig-2g.10gbx"), 0);
}

// A MIG node with four 2g.20gb instances; queue q may hold 3 GPUs. Each pod asks one instance
// (2 GPUs for the queue), so the second pod would take q to 4 GPUs: it stays Pending over the
// limit although the node still has instances.
std::string World(int queue_gpu_limit) {
  std::string yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: node0
  labels:
    nvidia.com/gpu.memory: '80000'
    node-role.kubernetes.io/mig-enabled: 'true'
    nvidia.com/mig.strategy: mixed
status:
  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/mig-2g.20gb: '4'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec:
  resources:
    gpu: {quota: 0, limit: LIMIT, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
)";
  yaml.replace(yaml.find("LIMIT"), 5, std::to_string(queue_gpu_limit));
  for (const char* name : {"a", "b"}) {
    const std::string n(name);
    yaml += "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg-" +
            n + ", namespace: default, creationTimestamp: '2025-01-01T11:0" +
            (n == "a" ? "0" : "1") +
            ":00Z'}\nspec: {queue: q, minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  "
            "name: " +
            n +
            "\n  namespace: default\n  creationTimestamp: '2025-01-01T11:00:00Z'\n"
            "  annotations: {pod-group-name: pg-" +
            n +
            "}\nspec:\n  schedulerName: kai-scheduler\n  containers:\n  - name: main\n"
            "    resources:\n      requests: {cpu: '1', nvidia.com/mig-2g.20gb: '1'}\n"
            "      limits: {nvidia.com/mig-2g.20gb: '1'}\nstatus: {phase: Pending}\n";
  }
  return yaml;
}

const sim::PodReport& Pod(const sim::CycleReport& r, const std::string& name) {
  for (const auto& p : r.pods) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pod " + name);
}

TEST(MigQuota, InstancesCountAgainstTheQueueLimit) {
  const sim::CycleReport limited = testutil::AllocateOnce(World(3));
  EXPECT_EQ(Pod(limited, "a").status, "Binding");
  EXPECT_EQ(Pod(limited, "b").status, "Pending");
  bool over_limit = false;
  for (const Reason& r : Pod(limited, "b").reasons) {
    over_limit = over_limit ||
                 (r.kind() == ReasonKind::kOverLimit && r.QueueCap()->resource == "nvidia.com/gpu");
  }
  EXPECT_TRUE(over_limit);

  const sim::CycleReport roomy = testutil::AllocateOnce(World(4));
  EXPECT_EQ(Pod(roomy, "a").status, "Binding");
  EXPECT_EQ(Pod(roomy, "b").status, "Binding");
  bool seen = false;
  for (const auto& q : roomy.queues) {
    if (q.name != "q") continue;
    seen = true;
    EXPECT_EQ(q.allocated.milli_gpu, 4000);  // two instances of 2 GPUs
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace kai
