// Property: the job queue pops, after any mix of pops, pushes and allocations, the job that a
// plain recomputation of KAI's order would pick: inside each leaf queue the first job by
// Session::JobBefore, and at every level the children scanned in order with Session::QueueBefore
// (a later child takes the lead only when it goes strictly first). The queue keeps scans between
// pops (Session::QueueVersion, equal queue-order keys) and, for allocate, orders jobs by sort keys
// read when they enter; both must be invisible here.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kai/core/actions/common/job_queue.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/snapshot/snapshot.h"
#include "property_support.h"

namespace kai {
namespace {

using testing::Chance;
using testing::Uniform;

constexpr UnixSeconds kNow = 1'700'000'000;

ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  return testing::PropertyMeta(std::move(kind), std::move(name), namespaced, "job-queue-test");
}

QueueObject MakeQueue(const std::string& name, const std::string& parent, int64_t gpu_quota,
                      int priority, UnixSeconds creation) {
  QueueObject q;
  q.meta = Meta("Queue", name, false);
  q.meta.creation = creation;
  q.parent = parent;
  q.has_resources = true;
  q.gpu = {gpu_quota, -1, kMilliPerUnit};
  q.cpu = {-1, -1, kMilliPerUnit};
  q.memory = {-1, -1, kMilliPerUnit};
  q.priority = priority;
  return q;
}

// 1-2 departments of 1-3 leaf queues; 5-40 jobs of 1-3 pods, some partly running (so gang levels
// differ), with few distinct priorities and creation times (so the tie-breakers decide often).
ClusterState RandomWorld(uint64_t seed) {
  std::mt19937_64 rng(seed);
  ClusterState st;
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"train", 50}, {"build", 100}, {"inference", 125}}) {
    PriorityClassObject pc;
    pc.meta = Meta("PriorityClass", name, false);
    pc.value = value;
    st.priority_classes.push_back(std::move(pc));
  }
  for (int i = 0; i < 3; ++i) {
    NodeObject n;
    n.meta = Meta("Node", "node-" + std::to_string(i), false);
    n.allocatable = {.milli_cpu = 512 * kMilliPerUnit,
                     .memory = int64_t{1} << 42,
                     .milli_gpu = 64 * kMilliPerUnit,
                     .pods = 1000};
    n.capacity = n.allocatable;
    st.nodes.push_back(std::move(n));
  }
  std::vector<std::string> leaves;
  const int departments = Uniform(rng, 1, 2);
  for (int d = 0; d < departments; ++d) {
    const std::string dept = "dept-" + std::to_string(d);
    st.queues.push_back(MakeQueue(dept, "", Uniform(rng, 0, 8) * kMilliPerUnit,
                                  Uniform(rng, 0, 1) * 50 + 100,
                                  kNow - 7200 + d * Uniform(rng, 0, 1)));
    const int n = Uniform(rng, 1, 3);
    for (int i = 0; i < n; ++i) {
      const std::string name = dept + "-q" + std::to_string(i);
      st.queues.push_back(MakeQueue(name, dept, Uniform(rng, 0, 6) * kMilliPerUnit,
                                    Uniform(rng, 0, 1) * 50 + 100,
                                    kNow - 3600 + Uniform(rng, 0, 1)));
      leaves.push_back(name);
    }
  }
  static constexpr const char* kClasses[] = {"train", "build", "inference"};
  const int jobs = Uniform(rng, 5, 40);
  for (int j = 0; j < jobs; ++j) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup",
                   "job-" + std::to_string(Uniform(rng, 0, 999)) + "-" + std::to_string(j), true);
    pg.meta.creation = kNow - Uniform(rng, 0, 3) * 60;
    pg.queue = leaves[Uniform(rng, 0, static_cast<int>(leaves.size()) - 1)];
    pg.meta.labels = {{std::string(keys::kQueueLabel), pg.queue}};
    pg.priority_class_name = kClasses[Uniform(rng, 0, 2)];
    const int pods = Uniform(rng, 1, 3);
    pg.min_member = Uniform(rng, 1, pods);
    const int running = Uniform(rng, 0, pods - 1);
    Resources req{.milli_cpu = Uniform(rng, 0, 2) * kMilliPerUnit,
                  .memory = 0,
                  .milli_gpu = Uniform(rng, 0, 2) * kMilliPerUnit / 2,
                  .pods = 1};
    for (int p = 0; p < pods; ++p) {
      const std::string node = p < running ? st.nodes[Uniform(rng, 0, 2)].meta.name : "";
      st.pods.push_back(testing::MemberPod(
          pg, Meta("Pod", pg.meta.name + "-" + std::to_string(p), true), req, node));
    }
    st.pod_groups.push_back(std::move(pg));
  }
  return st;
}

// KAI's order recomputed from scratch over the jobs still queued.
class Reference {
 public:
  explicit Reference(const Session& s) : s_(s) {}

  JobId Next(const std::set<JobId>& queued) const {
    std::optional<std::pair<QueueId, JobId>> best;
    for (QueueId root : s_.snap().root_queues) Consider(Best(root, queued), best);
    return best ? best->second : kNone;
  }

 private:
  std::optional<std::pair<QueueId, JobId>> Best(QueueId q, const std::set<JobId>& queued) const {
    const SnapQueue& queue = s_.snap().queues[q];
    if (queue.IsLeaf()) {
      std::optional<JobId> first;
      for (JobId j : queued) {
        if (s_.snap().jobs[j].queue != q) continue;
        if (!first || s_.JobBefore(j, *first)) first = j;
      }
      if (!first) return std::nullopt;
      return std::pair{q, *first};
    }
    std::optional<std::pair<QueueId, JobId>> best;
    for (QueueId c : queue.children) {
      auto child = Best(c, queued);
      if (child) child->first = c;  // compared as the child queue with its best job
      Consider(child, best);
    }
    if (best) best->first = q;
    return best;
  }

  void Consider(const std::optional<std::pair<QueueId, JobId>>& cand,
                std::optional<std::pair<QueueId, JobId>>& best) const {
    if (!cand) return;
    if (!best || s_.QueueBefore(cand->first, cand->second, best->first, best->second)) {
      best = cand;
    }
  }

  const Session& s_;
};

PodId FirstPending(const Session& s, JobId j) {
  for (PodId p : s.snap().jobs[j].pods) {
    if (s.snap().pods[p].status == PodStatus::kPending) return p;
  }
  return kNone;
}

// Pops every job, allocating one pending pod of most popped jobs and pushing some back (as
// allocate does with a job that still has pending pods); each pop must match the reference.
void CheckWorld(uint64_t seed, bool fixed_jobs) {
  const ClusterState world = RandomWorld(seed);
  Session s(BuildSnapshot(world, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  actions::JobQueue queue(s, actions::JobQueueOptions{.jobs_fixed_while_queued = fixed_jobs});
  std::set<JobId> queued;
  for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
    if (actions::JobHasPending(s, j) && actions::JobIsReady(s, j)) queued.insert(j);
  }
  std::mt19937_64 rng(seed * 7919 + 1);
  const Reference reference(s);
  for (int step = 0; step < 200 && !queue.Empty(); ++step) {
    const JobId want = reference.Next(queued);
    const JobId got = queue.Pop();
    ASSERT_EQ(got, want) << "seed " << seed << " step " << step << " fixed " << fixed_jobs;
    queued.erase(got);
    if (Chance(rng, 0.2)) continue;  // not placed: nothing changes
    const PodId pod = FirstPending(s, got);
    ASSERT_NE(pod, kNone);
    Statement stmt(s);
    stmt.Allocate(pod, static_cast<NodeId>(Uniform(rng, 0, 2)));
    stmt.Commit();
    if (actions::JobHasPending(s, got) && Chance(rng, 0.6)) {
      queue.Push(got);
      queued.insert(got);
    }
  }
  EXPECT_TRUE(queue.Empty());
}

TEST(JobQueueProperty, PopsTheRecomputedOrder) {
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(testing::SweepWorlds(400)); ++seed) {
    CheckWorld(seed, /*fixed_jobs=*/false);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(JobQueueProperty, SortKeysPopTheRecomputedOrder) {
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(testing::SweepWorlds(400)); ++seed) {
    CheckWorld(seed, /*fixed_jobs=*/true);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kai
