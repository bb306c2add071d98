// The victim queue over an offer (solver.h VictimOffer): each leaf queue's list is read only as
// far as jobs are taken from it, `accept` is asked about a job only when the queue reaches it, and
// the jobs come out in the victim order whether the list was read lazily or given whole.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/actions/common/solver.h"
#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/sim/simulator.h"

namespace kai::actions {
namespace {

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z

// Queue q1 runs one-GPU jobs a (oldest), b, c, d (newest); queue q2 runs e. All preemptible.
std::string Cluster() {
  std::string y =
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n"
      "  allocatable: {cpu: '10', memory: 10Gi, pods: '110', nvidia.com/gpu: '8'}\n---\n"
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q1}\n---\n"
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q2}\n---\n";
  const std::vector<std::pair<std::string, std::string>> jobs = {
      {"a", "q1"}, {"b", "q1"}, {"c", "q1"}, {"d", "q1"}, {"e", "q2"}};
  int minute = 0;
  for (const auto& [name, queue] : jobs) {
    const std::string created = "'2025-01-01T10:0" + std::to_string(minute++) + ":00Z'";
    y += "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: default, creationTimestamp: " + created + "}\nspec: {queue: " + queue +
         ", minMember: 1}\n---\n";
    y += "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "-0, namespace: default, annotations: {pod-group-name: " + name +
         "}}\nspec:\n  schedulerName: kai-scheduler\n  nodeName: n1\n"
         "  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]\n"
         "status: {phase: Running}\n---\n";
  }
  return y;
}

class VictimQueueTest : public ::testing::Test {
 protected:
  VictimQueueTest() : state_(Load()), session_(BuildSnapshot(state_, kNow), SchedulerConfig{}) {}

  static ClusterState Load() {
    ClusterState state;
    const auto errors = ProblemsOf(DecodeManifestText(Cluster(), "test.yaml", state));
    EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());
    return state;
  }
  JobId Job(std::string_view name) const {
    for (JobId j = 0; j < static_cast<JobId>(session_.snap().jobs.size()); ++j) {
      if (session_.snap().jobs[j].name == name) return j;
    }
    ADD_FAILURE() << "no job " << name;
    return kNone;
  }
  std::vector<JobId> Jobs(const std::vector<std::string_view>& names) const {
    std::vector<JobId> out;
    for (std::string_view n : names) out.push_back(Job(n));
    return out;
  }
  QueueId Queue(std::string_view name) const { return session_.snap().jobs[Job(name)].queue; }
  // Every job the queue gives, in order, with the scenario's state untouched.
  static std::vector<JobId> Drain(VictimQueue& queue) {
    std::vector<JobId> out;
    while (!queue.Empty()) out.push_back(queue.Next().job);
    return out;
  }

  ClusterState state_;
  Session session_;
};

// Inside a queue the job scheduled last goes first: newest first.
TEST_F(VictimQueueTest, SortsEachLeafQueueNewestFirst) {
  const VictimsByQueue sorted = SortVictims(session_, Jobs({"a", "c", "b", "d", "e"}));
  EXPECT_EQ(sorted.by_queue[Queue("a")], Jobs({"d", "c", "b", "a"}));
  EXPECT_EQ(sorted.by_queue[Queue("e")], Jobs({"e"}));
  EXPECT_EQ(sorted.leaves.size(), 2u);
}

// `accept` is asked about one job per leaf when the queue is made, then about the next one of a
// leaf only when the one before it is taken; a job it refuses is passed over.
TEST_F(VictimQueueTest, ReadsEachLeafOnlyAsFarAsItTakes) {
  const VictimsByQueue sorted = SortVictims(session_, Jobs({"a", "b", "c", "d"}));
  std::vector<JobId> asked;
  VictimOffer offer{&sorted.by_queue, sorted.leaves, [&](JobId j) {
                      asked.push_back(j);
                      return j != Job("c");
                    }};
  VictimQueue queue(session_, offer);
  EXPECT_EQ(asked, Jobs({"d"}));
  EXPECT_EQ(queue.Next().job, Job("d"));
  EXPECT_EQ(asked, Jobs({"d", "c", "b"}));  // c refused, b drawn in its place
  EXPECT_EQ(queue.Next().job, Job("b"));
  EXPECT_EQ(asked, Jobs({"d", "c", "b", "a"}));
  EXPECT_EQ(queue.Next().job, Job("a"));
  EXPECT_TRUE(queue.Empty());
  EXPECT_EQ(asked.size(), 4u);  // each job asked once
}

// The lazy queue gives what the queue over the whole list gives (the accepted jobs), in the same
// order, across leaf queues; and slots are handed out as jobs are drawn.
TEST_F(VictimQueueTest, LazyOfferGivesTheOrderOfTheWholeList) {
  const std::vector<JobId> all = Jobs({"a", "b", "c", "d", "e"});
  VictimQueue whole(session_, Jobs({"a", "b", "d", "e"}));
  const std::vector<JobId> expected = Drain(whole);
  ASSERT_EQ(expected.size(), 4u);

  const VictimsByQueue sorted = SortVictims(session_, all);
  VictimScratch scratch(session_.snap().jobs.size());
  {
    VictimOffer offer{&sorted.by_queue, sorted.leaves, [&](JobId j) { return j != Job("c"); },
                      &scratch};
    VictimQueue lazy(session_, offer);
    EXPECT_EQ(lazy.Slot(Job("d")), lazy.Slot(Job("e")) == 0 ? 1 : 0);  // the two firsts drawn
    EXPECT_EQ(Drain(lazy), expected);
  }
  // The scratch is given back as it was lent.
  EXPECT_EQ(scratch.slots, std::vector<int>(session_.snap().jobs.size(), -1));
}

// A running job whose PodGroup names an inner queue: the manifest loader refuses it, but a live
// cluster can hold one (the informer does not validate). It is in no leaf queue's victim list, so
// a reclaim whose only candidate it is ends: the search draws nothing and fails, and the job
// keeps running.
TEST(VictimQueueInnerQueue, AReclaimWhoseOnlyCandidateRunsInAnInnerQueueEnds) {
  const std::string world = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '10', memory: 10Gi, pods: '110', nvidia.com/gpu: '1'}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec:
  resources:
    gpu: {quota: 0, limit: -1, overQuotaWeight: 0}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 0, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  resources:
    gpu: {quota: 1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: inner, namespace: default, creationTimestamp: '2025-01-01T10:00:00Z'}
spec: {queue: dept, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: inner-0, namespace: default, annotations: {pod-group-name: inner}}
spec:
  schedulerName: kai-scheduler
  nodeName: n1
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]
status: {phase: Running}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: want, namespace: default, creationTimestamp: '2025-01-01T11:00:00Z'}
spec: {queue: team-b, minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: want-0, namespace: default, annotations: {pod-group-name: want}}
spec:
  schedulerName: kai-scheduler
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]
status: {phase: Pending}
)";
  ClusterState state;
  const Status decoded = DecodeManifestText(world, "world.yaml", state);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const auto config = WithActions(ConfigFromShard(std::nullopt).value(), {"reclaim"}).value();
  const auto report = sim::RunCycle(state, config, sim::SimulateOptions{.now = kNow}, 1);
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::map<std::string, std::string> status;
  for (const auto& pod : report.value().pods) status[pod.name] = pod.status;
  EXPECT_EQ(status["inner-0"], "Running");
  EXPECT_EQ(status["want-0"], "Pending");
}

}  // namespace
}  // namespace kai::actions
