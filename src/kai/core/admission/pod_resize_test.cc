// The resize rule: a running pod's CPU or memory growth must fit its queue's limit and its
// parents'; shrinking, pods not yet placed, other schedulers' pods and unlimited queues pass.
#include "kai/core/admission/pod_resize.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kai/core/admission/test_support.h"

namespace kai::admission {
namespace {

using testing::MakeReview;

// Queue dept (cpu limit 16) with child team-a (cpu limit 9, memory limit 40 GB); team-a holds 8
// CPUs and 32 GB, dept 12 CPUs. PodGroup train is in team-a.
class FakeUsage : public QueueUsageLookup {
 public:
  FakeUsage() {
    QueueObject dept;
    dept.meta.name = "dept";
    dept.cpu.limit = 16'000;
    dept.memory.limit = -1;
    QueueObject team = dept;
    team.meta.name = "team-a";
    team.parent = "dept";
    team.cpu.limit = 9'000;
    team.memory.limit = 40'000'000'000;
    queues_ = {{"dept", dept}, {"team-a", team}};
    held_["dept"].milli_cpu = 12'000;
    held_["team-a"].milli_cpu = 8'000;
    held_["team-a"].memory = 32'000'000'000;
  }
  Result<std::optional<QueueHolding>> Queue(std::string_view name) const override {
    if (fail_) return Error{"the API server did not answer"};
    auto it = queues_.find(std::string(name));
    if (it == queues_.end()) return std::optional<QueueHolding>{};
    auto held = held_.find(std::string(name));
    return std::optional<QueueHolding>{
        QueueHolding{it->second, held == held_.end() ? Resources{} : held->second}};
  }
  Result<std::string> PodGroupQueue(std::string_view, std::string_view name) const override {
    return name == "train" ? std::string("team-a") : std::string();
  }
  std::map<std::string, QueueObject> queues_;
  std::map<std::string, Resources> held_;
  bool fail_ = false;
};

// A pod of PodGroup train on n1 whose container asks `cpu` and `memory`, admitted at 2 CPUs.
std::string Pod(const std::string& cpu, const std::string& memory = "4G",
                const std::string& node = "n1", const std::string& scheduler = "kai-scheduler") {
  return R"(
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  namespace: team-a
  annotations: {pod-group-name: train}
spec:
  schedulerName: )" +
         scheduler + "\n  nodeName: '" + node + R"('
  containers:
  - name: main
    resources:
      requests: {cpu: ')" +
         cpu + "', memory: " + memory + R"(}
status:
  phase: Running
  containerStatuses:
  - name: main
    allocatedResources: {cpu: '2', memory: 4G}
)";
}

Verdict Resize(const std::string& before, const std::string& after, const FakeUsage& usage) {
  const auto review = MakeReview(Operation::kUpdate, after, before);
  return ValidatePodResize(review.request, Options{}, usage);
}

TEST(PodResizeTest, AGrowthWithinTheQueueLimitIsAllowed) {
  FakeUsage usage;
  EXPECT_TRUE(Resize(Pod("2"), Pod("3"), usage).allowed);  // team-a: 8 + 1 <= 9
}

TEST(PodResizeTest, AGrowthPastTheQueueLimitIsRefusedNamingTheQueueAndTheAmounts) {
  FakeUsage usage;
  const Verdict v = Resize(Pod("2"), Pod("4"), usage);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(v.message,
            "Pod team-a/train-0: spec.containers[*].resources: the resize adds cpu 2 to queue "
            "team-a, which holds 8 of its limit of 9");
  EXPECT_EQ(v.reason, "queue_limit");
}

TEST(PodResizeTest, AParentQueueLimitCountsToo) {
  FakeUsage usage;
  usage.queues_["team-a"].cpu.limit = -1;
  usage.held_["dept"].milli_cpu = 15'000;
  const Verdict v = Resize(Pod("2"), Pod("4"), usage);
  ASSERT_FALSE(v.allowed);
  EXPECT_NE(v.message.find("to queue dept, which holds 15 of its limit of 16"), std::string::npos)
      << v.message;
}

TEST(PodResizeTest, MemoryGrowthIsCheckedInBytes) {
  FakeUsage usage;
  const Verdict v = Resize(Pod("2", "4G"), Pod("2", "13G"), usage);
  ASSERT_FALSE(v.allowed);
  EXPECT_NE(v.message.find("the resize adds memory"), std::string::npos) << v.message;
  EXPECT_TRUE(Resize(Pod("2", "4G"), Pod("2", "10G"), usage).allowed);  // 32 + 6 <= 40 GB
}

TEST(PodResizeTest, ShrinkingPendingAndForeignPodsPass) {
  FakeUsage usage;
  EXPECT_TRUE(Resize(Pod("2"), Pod("1"), usage).allowed);
  EXPECT_TRUE(Resize(Pod("2", "4G", ""), Pod("64", "4G", ""), usage).allowed);  // not placed
  EXPECT_TRUE(Resize(Pod("2", "4G", "n1", "default-scheduler"),
                     Pod("64", "4G", "n1", "default-scheduler"), usage)
                  .allowed);
}

TEST(PodResizeTest, AnUnreadableQueueDeniesWithTheCause) {
  FakeUsage usage;
  usage.fail_ = true;
  const Verdict v = Resize(Pod("2"), Pod("3"), usage);
  ASSERT_FALSE(v.allowed);
  EXPECT_NE(v.message.find("cannot check the queue limits: queue team-a: the API server did not "
                           "answer"),
            std::string::npos)
      << v.message;
}

TEST(PodResizeTest, AStaleInfeasibleVerdictDoesNotHideANewGrowth) {
  FakeUsage usage;
  const std::string infeasible =
      "  conditions:\n  - {type: PodResizePending, status: 'True', reason: Infeasible}\n";
  const Verdict v = Resize(Pod("2") + infeasible, Pod("4") + infeasible, usage);
  ASSERT_FALSE(v.allowed);
  EXPECT_NE(v.message.find("the resize adds cpu 2 to queue team-a"), std::string::npos)
      << v.message;
}

TEST(PodResizeTest, CreatesAreNotResizes) {
  FakeUsage usage;
  const auto review = MakeReview(Operation::kCreate, Pod("64"));
  EXPECT_TRUE(ValidatePodResize(review.request, Options{}, usage).allowed);
}

}  // namespace
}  // namespace kai::admission
