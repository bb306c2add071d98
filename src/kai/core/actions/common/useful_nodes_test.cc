// What a disruptive search may skip without reading: victims that cannot help the preemptor
// (UsefulNodes, which the action also uses to list a placement's helpful victims once for all
// preemptors of that placement) and queues a queue-level victim filter refuses
// (SessionHooks::VictimQueueAllowed, which lets reclaim pass over a refused queue unread).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "kai/core/actions/common/solver.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/job_tasks.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/k8s/decode.h"

namespace kai::actions {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

std::string Node(std::string_view name, std::string_view gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + std::string(name) +
         "}\nstatus:\n  allocatable: {cpu: '16', memory: 64Gi, pods: '110', nvidia.com/gpu: '" +
         std::string(gpus) + "'}\n---\n";
}

// A job of `pods` pods in `queue` (minMember `min`), each asking `gpus` GPUs, on `node` (empty:
// pending).
std::string Job(std::string_view name, std::string_view queue, int pods, int min,
                std::string_view gpus, std::string_view node) {
  std::string y = "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " +
                  std::string(name) +
                  ", namespace: default, creationTimestamp: '2025-01-01T10:00:00Z'}\nspec: "
                  "{queue: " +
                  std::string(queue) + ", minMember: " + std::to_string(min) + "}\n---\n";
  for (int i = 0; i < pods; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + std::string(name) + "-" +
         std::to_string(i) +
         ", namespace: default, annotations: {pod-group-name: " + std::string(name) +
         "}}\nspec:\n  schedulerName: kai-scheduler\n";
    if (!node.empty()) y += "  nodeName: " + std::string(node) + "\n";
    y += "  containers: [{name: c, resources: {limits: {cpu: '1', nvidia.com/gpu: '" +
         std::string(gpus) + "'}}}]\nstatus: {phase: " + (node.empty() ? "Pending" : "Running") +
         "}\n---\n";
  }
  return y;
}

// gpu-node has 8 GPUs, cpu-node none. Running: a one-GPU job on gpu-node, a CPU job on cpu-node,
// and an elastic CPU job on cpu-node (3 pods, minMember 1: it gives its surplus pods one by one).
// Pending in team-b: a one-GPU job.
std::string World() {
  return Node("gpu-node", "8") + Node("cpu-node", "0") +
         "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n---\n"
         "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-b}\n---\n" +
         Job("on-gpu", "team-a", 1, 1, "1", "gpu-node") +
         Job("on-cpu", "team-a", 1, 1, "0", "cpu-node") +
         Job("elastic", "team-a", 3, 1, "0", "cpu-node") + Job("want", "team-b", 1, 1, "1", "");
}

class UsefulNodesTest : public ::testing::Test {
 protected:
  UsefulNodesTest() : state_(Load()), session_(BuildSnapshot(state_, kNow), SchedulerConfig{}) {}

  static ClusterState Load() {
    ClusterState state;
    const auto errors = ProblemsOf(DecodeManifestText(World(), "world.yaml", state));
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
    return state;
  }
  JobId JobNamed(std::string_view name) const {
    for (JobId j = 0; j < static_cast<JobId>(session_.snap().jobs.size()); ++j) {
      if (session_.snap().jobs[j].name == name) return j;
    }
    ADD_FAILURE() << "no job " << name;
    return kNone;
  }
  NodeId NodeNamed(std::string_view name) const {
    for (NodeId n = 0; n < static_cast<NodeId>(session_.snap().nodes.size()); ++n) {
      if (session_.snap().nodes[n].name == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return kNone;
  }
  bool Helps(UsefulNodes& useful, std::string_view job) const {
    const JobId j = JobNamed(job);
    return useful.Helps(j, JobGangLevel(session_.snap().jobs[j]));
  }

  ClusterState state_;
  Session session_;
};

TEST_F(UsefulNodesTest, ANodeWithoutTheGpusTheTaskAsksIsNotUseful) {
  UsefulNodes useful(session_, TasksToAllocate(session_, JobNamed("want"), /*real=*/false));
  EXPECT_TRUE(useful.Of(NodeNamed("gpu-node")));
  EXPECT_FALSE(useful.Of(NodeNamed("cpu-node")));
}

TEST_F(UsefulNodesTest, OnlyAVictimOnAUsefulNodeOrGivingPodsOneByOneHelps) {
  UsefulNodes useful(session_, TasksToAllocate(session_, JobNamed("want"), /*real=*/false));
  EXPECT_TRUE(Helps(useful, "on-gpu"));
  // It would give all it runs at once, on a node where the GPU job never runs: no victim.
  EXPECT_FALSE(Helps(useful, "on-cpu"));
  // Its surplus pods leave one by one: the search takes it (a later unit may count).
  EXPECT_TRUE(Helps(useful, "elastic"));
}

TEST_F(UsefulNodesTest, AQueueFilterRefusesEveryJobOfTheQueueAndOnlyThose) {
  const QueueId team_a = session_.snap().jobs[JobNamed("on-gpu")].queue;
  session_.AddVictimQueueFilter(DisruptionKind::kReclaim,
                                [team_a](const Session&, JobId, QueueId q) { return q != team_a; });
  const JobId want = JobNamed("want");
  EXPECT_FALSE(session_.VictimQueueAllowed(DisruptionKind::kReclaim, want, team_a));
  EXPECT_FALSE(session_.VictimAllowed(DisruptionKind::kReclaim, want, JobNamed("on-gpu")));
  EXPECT_FALSE(session_.VictimAllowed(DisruptionKind::kReclaim, want, JobNamed("elastic")));
  // Another queue, and another kind of disruption, are not refused.
  EXPECT_TRUE(session_.VictimQueueAllowed(DisruptionKind::kReclaim, want,
                                          session_.snap().jobs[want].queue));
  EXPECT_TRUE(session_.VictimAllowed(DisruptionKind::kPreempt, want, JobNamed("on-gpu")));
}

}  // namespace
}  // namespace kai::actions
