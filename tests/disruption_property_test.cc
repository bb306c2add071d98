// Property tests for the disruptive actions (reclaim, preempt, consolidation, stale-gang eviction)
// over a couple of thousand random small clusters, each run through six simulated cycles with
// KAI's default configuration (gang-moved: with kai's restart-partly-moved-gangs option on, the
// other properties checked under that option too).
//
// Worlds: 2-6 nodes of 2-8 GPUs (8-32 cores, 32-128 GiB); a root queue with 2-4 leaves of random
// GPU quota (-1 allowed), over-quota weight 0-3 and limit (-1 allowed), some with a 10 minute
// reclaim/preempt min runtime; 2-12 PodGroups (train 50 / build 100 / inference 125) of 1-3 pods
// x 1-2 GPUs, minMember = pods or 1; about half running where they fit (first fit), a few gangs
// running one pod short (stale, some past their grace period).
//
// Every cycle runs twice from the same world: once by sim::RunCycle (which advances the world as
// `kai simulate` does) and once by a probe session that runs the configured actions one at a time,
// so that each action's decisions are judged against the state it started from. Properties:
//   overcommit        no node holds more than its allocatable GPU/CPU/memory/pods, counting what
//                     is held now (running, binding, releasing) and what will be held once
//                     releasing pods leave (running, binding, pipelined); also in the advanced
//                     world
//   node-accounting   the session's idle/releasing per node equal what its pods say
//   queue-accounting  the proportion plugin's live leaf allocation equals the sum over its pods
//   gang              no action leaves a gang (minMember > 1) with 0 < active pods < minMember
//                     unless it already was; in the advanced world a gang that stays short carries
//                     a stale stamp (or has a pod pipelined)
//   gang-pipelined    the same, for gangs with a pipelined pod (reported apart)
//   gang-moved        the advanced world has no gang split by a move (only with spec.args
//                     restart-partly-moved-gangs; KAI, the default, keeps the pods placed back on
//                     their own node running while their moved siblings are recreated)
//   preempt-queue     preempt evicts only in the preemptor's queue, strictly lower priority
//   reclaim-queue     reclaim evicts only from other queues
//   victim-preemptible  reclaim/preempt/consolidation never touch a non-preemptible job, nor a
//                     pod in the protected floor of a semi-preemptible one (~15% of PodGroups)
//   reclaim-in-quota  reclaim never evicts from a queue whose GPU allocation, even counting what
//                     it gained during the action, stayed at or below its deserved quota (the
//                     default config leaves queuePriorityInQuotaReclaim off, and all queues here
//                     share one priority)
//   reclaimer-fair-share  a queue that reclaimed ends the action within its GPU fair share
//   consolidation-moves  consolidation evicts nothing for good: every victim is re-placed
//   minruntime        a job protected by its queue's reclaim/preempt min runtime keeps minMember
//   queue-limit       no action raises a queue's GPU allocation above its limit
//   explained         every evicted or moved pod carries a reason naming the action (and the
//                     beneficiary for reclaim/preempt)
//   determinism       the probe session decides exactly what RunCycle decided
//   quiet-after-converged  after a cycle with no binds/evictions/pipelines, nothing is evicted
//   no-ping-pong      the world never returns to an earlier state after evicting something
// A failing property is minimised (jobs, nodes, queues removed while it still fails) and the
// smallest world is written as a `kai simulate` manifest (bench/generator.h's ToYaml) under
// ::testing::TempDir(). KAI_PROPERTY_SEED=<seed> checks one world and writes it out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.h"

#include "kai/core/framework/config.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/snapshot.h"

// bench/generator.cc is not in any library kai_tests links; compile its YAML writer here (the
// only test translation unit that does so).
#include "../bench/generator.cc"  // NOLINT(bugprone-suspicious-include)

#if defined(__SANITIZE_ADDRESS__)
#define KAI_PROPERTY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KAI_PROPERTY_ASAN 1
#endif
#endif

namespace kai {
namespace {

using testing::Chance;
using testing::Uniform;

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int kCycles = 6;
// CTest runs every TEST in its own process, so each one sweeps all worlds: keep a sweep short.
#ifdef KAI_PROPERTY_ASAN
constexpr int kWorlds = 150;
#else
constexpr int kWorlds = 1500;
#endif
constexpr int64_t kGi = int64_t{1} << 30;

// ---------------------------------------------------------------------------------------------
// Random worlds.

ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  return testing::PropertyMeta(std::move(kind), std::move(name), namespaced, "property-test");
}

QueueObject MakeQueue(const std::string& name, const std::string& parent, QueueResource gpu,
                      UnixSeconds creation) {
  QueueObject q;
  q.meta = Meta("Queue", name, false);
  q.meta.creation = creation;
  q.parent = parent;
  q.has_resources = true;
  q.gpu = gpu;
  q.cpu = {-1, -1, kMilliPerUnit};
  q.memory = {-1, -1, kMilliPerUnit};
  return q;
}

ClusterState RandomWorld(uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Picks semi-preemptible PodGroups apart, so that the worlds are otherwise unchanged.
  std::mt19937_64 semi_rng(seed ^ 0x5e3190eeULL);
  ClusterState st;
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"train", 50}, {"build", 100}, {"inference", 125}}) {
    PriorityClassObject pc;
    pc.meta = Meta("PriorityClass", name, false);
    pc.value = value;
    st.priority_classes.push_back(std::move(pc));
  }

  // Nodes, with the capacity left on each for placing running pods.
  const int nodes = Uniform(rng, 2, 6);
  std::vector<Resources> free;
  int total_gpus = 0;
  for (int i = 0; i < nodes; ++i) {
    NodeObject n;
    n.meta = Meta("Node", "node-" + std::to_string(i), false);
    const int gpus = Uniform(rng, 2, 8);
    total_gpus += gpus;
    n.meta.labels = {{std::string(keys::kNodeGpuCount), std::to_string(gpus)},
                     {"kai.scheduler/type", n.meta.name}};
    n.allocatable.milli_gpu = int64_t{gpus} * kMilliPerUnit;
    n.allocatable.milli_cpu = int64_t{Uniform(rng, 1, 4) * 8} * kMilliPerUnit;
    n.allocatable.memory = int64_t{Uniform(rng, 1, 4) * 32} * kGi;
    n.allocatable.pods = 110;
    n.capacity = n.allocatable;
    free.push_back(n.allocatable);
    ReadTypedLabels(n);
    st.nodes.push_back(std::move(n));
  }

  // Queues: one root, 2-4 leaves with random GPU quota / weight / limit.
  st.queues.push_back(MakeQueue("root", "", {-1, -1, kMilliPerUnit}, kNow - 7200));
  const int leaves = Uniform(rng, 2, 4);
  for (int i = 0; i < leaves; ++i) {
    QueueResource gpu;
    gpu.quota = Chance(rng, 0.15) ? -1 : int64_t{Uniform(rng, 0, total_gpus / 2)} * kMilliPerUnit;
    gpu.weight_milli = int64_t{Uniform(rng, 0, 3)} * kMilliPerUnit;
    gpu.limit =
        Chance(rng, 0.6)
            ? -1
            : std::max<int64_t>(gpu.quota, int64_t{Uniform(rng, 0, total_gpus)} * kMilliPerUnit);
    QueueObject q = MakeQueue("q" + std::to_string(i), "root", gpu, kNow - 3600 + i * 60);
    if (Chance(rng, 0.25)) q.reclaim_min_runtime = 600;
    if (Chance(rng, 0.25)) q.preempt_min_runtime = 600;
    st.queues.push_back(std::move(q));
  }

  // Jobs: 1-3 pods x 1-2 GPUs, minMember = pods or 1; about half running where they fit.
  static constexpr const char* kClasses[] = {"train", "build", "inference"};
  const int jobs = Uniform(rng, 2, 12);
  for (int j = 0; j < jobs; ++j) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", "job-" + std::to_string(j), true);
    pg.meta.creation = kNow - static_cast<UnixSeconds>(jobs - j) * 60;
    pg.queue = "q" + std::to_string(Uniform(rng, 0, leaves - 1));
    pg.meta.labels = {{std::string(keys::kQueueLabel), pg.queue}};
    pg.priority_class_name = kClasses[Uniform(rng, 0, 2)];
    const int pods = Uniform(rng, 1, 3);
    pg.min_member = Chance(rng, 0.5) ? pods : 1;
    if (Chance(semi_rng, 0.15)) pg.preemptibility = "semi-preemptible";
    Resources req;
    req.milli_gpu = int64_t{Uniform(rng, 1, 2)} * kMilliPerUnit;
    req.milli_cpu = int64_t{Uniform(rng, 1, 4)} * kMilliPerUnit;
    req.memory = int64_t{Uniform(rng, 1, 8)} * kGi;
    req.pods = 1;

    // Where the running pods go (first fit over a shuffled node order), if all of them fit.
    std::vector<int> placed;
    if (Chance(rng, 0.55)) {
      std::vector<Resources> trial = free;
      std::vector<int> order(nodes);
      for (int i = 0; i < nodes; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (int p = 0; p < pods; ++p) {
        for (int n : order) {
          if (FitsIn(req, trial[n])) {
            trial[n] -= req;
            placed.push_back(n);
            break;
          }
        }
      }
      if (static_cast<int>(placed.size()) == pods) {
        // A gang that lost a pod (failed or recreated): stale, maybe past its grace period.
        if (*pg.min_member > 1 && Chance(rng, 0.15)) {
          trial[placed.back()] += req;
          placed.pop_back();
          if (Chance(rng, 0.5)) pg.stale_since = kNow - 300;
        }
        free = std::move(trial);
        pg.last_start = kNow - Uniform(rng, 0, 3600);
      } else {
        placed.clear();
      }
    }

    for (int p = 0; p < pods; ++p) {
      const std::string node =
          p < static_cast<int>(placed.size()) ? st.nodes[placed[p]].meta.name : std::string();
      st.pods.push_back(testing::MemberPod(
          pg, Meta("Pod", pg.meta.name + "-" + std::to_string(p), true), req, node));
    }
    st.pod_groups.push_back(std::move(pg));
  }
  return st;
}

// ---------------------------------------------------------------------------------------------
// Checks.

using Violations = std::map<std::string, std::string>;  // property -> first failure
using Stats = std::map<std::string, int>;               // "<action> evicted|moved" -> pods

bool Holds(PodStatus s) {  // holds node resources now
  return IsActiveUsed(s) && s != PodStatus::kPipelined;
}
bool WillHold(PodStatus s) {  // holds node resources once releasing pods are gone
  return IsActiveAllocated(s);
}

struct PodState {
  PodStatus status;
  NodeId node;
  bool in_floor;  // protected floor of a semi-preemptible job
};

std::vector<PodState> States(const Session& s) {
  std::vector<PodState> out;
  out.reserve(s.snap().pods.size());
  for (const SnapPod& p : s.snap().pods) out.push_back({p.status, p.node, p.in_floor});
  return out;
}

class Checker {
 public:
  Checker(const ClusterState& world, int cycle, Violations& out, Stats* stats)
      : world_(world), cycle_(cycle), out_(out), stats_(stats) {}

  void Fail(const std::string& property, const std::string& detail) {
    if (!out_.count(property)) out_[property] = "cycle " + std::to_string(cycle_) + ": " + detail;
  }

  // Resources held on every node, now and once releasing pods are gone.
  void CheckNodes(const Session& s, const std::string& when) {
    const Snapshot& snap = s.snap();
    std::vector<Resources> now(snap.nodes.size()), later(snap.nodes.size());
    for (const SnapPod& p : snap.pods) {
      if (p.node == kNone) continue;
      if (Holds(p.status)) now[p.node] += p.obj->request;
      if (WillHold(p.status)) later[p.node] += p.obj->request;
    }
    for (size_t n = 0; n < snap.nodes.size(); ++n) {
      const Resources& alloc = snap.nodes[n].obj->allocatable;
      Shortage sh;
      if (!FitsIn(now[n], alloc, &sh)) {
        Fail("overcommit", when + ": node " + std::string(snap.nodes[n].name) + " holds " +
                               ToString(now[n]) + " > allocatable " + ToString(alloc));
      }
      // The session's own accounting (KAI's node_info: releasing pods move idle to releasing,
      // pipelined pods take from releasing).
      Resources releasing, pipelined, other;
      for (const SnapPod& p : snap.pods) {
        if (p.node != static_cast<NodeId>(n) || !IsActiveUsed(p.status)) continue;
        if (p.status == PodStatus::kReleasing) {
          releasing += p.obj->request;
        } else if (p.status == PodStatus::kPipelined) {
          pipelined += p.obj->request;
        } else {
          other += p.obj->request;
        }
      }
      const Resources idle = alloc - other - releasing;
      const Resources rel = releasing - pipelined;
      const SnapNode& node = snap.nodes[n];
      if (node.idle.milli_gpu != idle.milli_gpu || node.idle.milli_cpu != idle.milli_cpu ||
          node.idle.memory != idle.memory || node.releasing.milli_gpu != rel.milli_gpu ||
          node.releasing.milli_cpu != rel.milli_cpu || node.releasing.memory != rel.memory) {
        Fail("node-accounting", when + ": node " + std::string(node.name) + " idle " +
                                    ToString(node.idle) + " releasing " + ToString(node.releasing) +
                                    ", its pods say idle " + ToString(idle) + " releasing " +
                                    ToString(rel));
      }
      if (!FitsIn(later[n], alloc, &sh)) {
        Fail("overcommit", when + ": node " + std::string(snap.nodes[n].name) +
                               " will hold (incl. pipelined) " + ToString(later[n]) +
                               " > allocatable " + ToString(alloc));
      }
    }
  }

  static int ActiveCount(const Session& s, const SnapJob& job) {
    int n = 0;
    for (PodId p : job.pods) n += WillHold(s.snap().pods[p].status) ? 1 : 0;
    return n;
  }

  static bool Broken(int active, int min) { return min > 1 && active > 0 && active < min; }

  int64_t LeafGpus(const Session& s, QueueId q) const {
    int64_t sum = 0;
    for (const SnapPod& p : s.snap().pods) {
      if (p.job != kNone && s.snap().jobs[p.job].queue == q && IsActiveAllocated(p.status)) {
        sum += p.request.milli_gpu;
      }
    }
    return sum;
  }

  void CheckQueueAccounting(const Session& s, const std::string& when) {
    for (QueueId q = 0; q < static_cast<QueueId>(s.snap().queues.size()); ++q) {
      const SnapQueue& queue = s.snap().queues[q];
      if (!queue.IsLeaf()) continue;
      const int64_t mine = LeafGpus(s, q);
      if (mine != queue.allocated.milli_gpu) {
        Fail("queue-accounting", when + ": queue " + std::string(queue.name) + " allocated gpu " +
                                     std::to_string(queue.allocated.milli_gpu) +
                                     "m, its pods hold " + std::to_string(mine) + "m");
      }
    }
  }

  // Resolves a min runtime from `q` upward (the minruntime plugin's defaults are 0).
  static int64_t Runtime(const Snapshot& snap, QueueId q, bool reclaim) {
    for (; q != kNone; q = snap.queues[q].parent) {
      const auto& v = reclaim ? snap.queues[q].obj->reclaim_min_runtime
                              : snap.queues[q].obj->preempt_min_runtime;
      if (v) return *v;
    }
    return 0;
  }

  // One action's evictions, judged against the state it started from.
  void CheckAction(const Session& s, const std::string& action, const std::vector<PodState>& before,
                   const std::vector<std::optional<UnixSeconds>>& last_start_before,
                   const std::vector<int64_t>& leaf_before) {
    const Snapshot& snap = s.snap();
    const std::string when = "after " + action;
    CheckNodes(s, when);
    CheckQueueAccounting(s, when);

    // GPUs each leaf gained during the action (pods that became active).
    std::vector<int64_t> gained(snap.queues.size(), 0), after(snap.queues.size(), 0);
    for (PodId p = 0; p < static_cast<PodId>(snap.pods.size()); ++p) {
      const SnapPod& pod = snap.pods[p];
      if (pod.job == kNone) continue;
      const QueueId q = snap.jobs[pod.job].queue;
      if (IsActiveAllocated(pod.status)) after[q] += pod.request.milli_gpu;
      if (IsActiveAllocated(pod.status) && !IsActiveAllocated(before[p].status)) {
        gained[q] += pod.request.milli_gpu;
      }
    }
    for (QueueId q = 0; q < static_cast<QueueId>(snap.queues.size()); ++q) {
      const int64_t limit = snap.queues[q].gpu.limit;
      if (snap.queues[q].IsLeaf() && limit >= 0 && after[q] > limit && after[q] > leaf_before[q]) {
        Fail("queue-limit", when + ": queue " + std::string(snap.queues[q].name) + " rose from " +
                                std::to_string(leaf_before[q]) + "m to " +
                                std::to_string(after[q]) + "m GPUs, limit " +
                                std::to_string(limit) + "m");
      }
    }

    std::set<JobId> victim_jobs;
    std::set<QueueId> reclaimers;
    for (PodId p = 0; p < static_cast<PodId>(snap.pods.size()); ++p) {
      const SnapPod& pod = snap.pods[p];
      const bool was_active = IsActiveAllocated(before[p].status);
      const bool evicted = was_active && pod.status == PodStatus::kReleasing;
      const bool moved = was_active && pod.status == PodStatus::kPipelined &&
                         before[p].status != PodStatus::kPipelined;
      if (!evicted && !moved) continue;
      if (stats_) ++(*stats_)[action + (evicted ? " evicted" : " moved")];
      const std::string who = std::string(pod.ns) + "/" + std::string(pod.name);
      const std::string why = s.EvictionReason(p);
      if (why.empty()) {
        Fail("explained",
             when + ": " + who + " was " + (evicted ? "evicted" : "moved") + " without a reason");
        continue;
      }
      if (pod.job == kNone) continue;
      const SnapJob& victim = snap.jobs[pod.job];
      victim_jobs.insert(pod.job);
      const EvictionVerdict& e = s.Eviction(p);
      if (action == "allocate") Fail("explained", when + ": allocate evicted " + who);
      if (e.action != action) {
        Fail("explained", when + ": " + who + " carries reason \"" + why + "\"");
      }
      if (action == "stalegangeviction") continue;
      if (victim.semi_preemptible && before[p].in_floor) {
        Fail("victim-preemptible", when + ": " + who + " (in its semi-preemptible floor) " +
                                       (evicted ? "evicted" : "moved") + ": " + why);
      } else if (!victim.preemptible && !victim.semi_preemptible) {
        Fail("victim-preemptible", when + ": " + who + " (priority " +
                                       std::to_string(victim.priority) + ") evicted: " + why);
      }
      if (action == "consolidation" && evicted) {
        Fail("consolidation-moves", when + ": " + who + " evicted for good: " + why);
      }
      if (e.preemptor == kNone) {
        if (action == "reclaim" || action == "preempt") {
          Fail("explained", when + ": no beneficiary in \"" + why + "\"");
        }
        continue;
      }
      const SnapJob& ben = snap.jobs[e.preemptor];
      if (action == "preempt" && (ben.queue != victim.queue || victim.priority >= ben.priority)) {
        Fail("preempt-queue",
             when + ": " + who + " (queue " + std::string(snap.queues[victim.queue].name) +
                 ", priority " + std::to_string(victim.priority) + ") preempted for " +
                 std::string(ben.name) + " (queue " + std::string(snap.queues[ben.queue].name) +
                 ", priority " + std::to_string(ben.priority) + ")");
      }
      if (action == "reclaim" && ben.queue == victim.queue) {
        Fail("reclaim-queue", when + ": " + who + " reclaimed for " + std::string(ben.name) +
                                  " of its own queue " +
                                  std::string(snap.queues[victim.queue].name));
      }
      if (action == "reclaim" && evicted) reclaimers.insert(ben.queue);
      if (action == "reclaim" && evicted) {
        const SnapQueue& vq = snap.queues[victim.queue];
        const int64_t bound = leaf_before[victim.queue] + gained[victim.queue];
        if (vq.gpu.quota >= 0 && bound <= vq.gpu.quota) {
          Fail("reclaim-in-quota", when + ": " + who + " reclaimed from queue " +
                                       std::string(vq.name) + " holding at most " +
                                       std::to_string(bound) + "m GPUs, deserved " +
                                       std::to_string(vq.gpu.quota) + "m");
        }
      }
    }

    // A queue that reclaimed ends within its fair share (CanReclaim: allocated + request <= fair
    // share, and nothing else raises it during the action).
    for (QueueId q : reclaimers) {
      const SnapQueue& queue = snap.queues[q];
      if (after[q] > queue.fair_share.milli_gpu) {
        Fail("reclaimer-fair-share", when + ": queue " + std::string(queue.name) +
                                         " reclaimed up to " + std::to_string(after[q]) +
                                         "m GPUs, fair share " +
                                         std::to_string(queue.fair_share.milli_gpu) + "m");
      }
    }

    // Jobs protected by a min runtime keep at least minMember active pods.
    if (action == "reclaim" || action == "preempt") {
      for (JobId j : victim_jobs) {
        const SnapJob& job = snap.jobs[j];
        const auto& started = last_start_before[j];
        const int64_t runtime = Runtime(snap, job.queue, action == "reclaim");
        if (!started || s.now() >= *started + runtime) continue;
        if (ActiveCount(s, job) < job.MinAvailable()) {
          Fail("minruntime", when + ": job " + std::string(job.name) + " started at " +
                                 FormatRfc3339(*started) + ", queue min runtime " +
                                 std::to_string(runtime) + "s, left with " +
                                 std::to_string(ActiveCount(s, job)) + " < minMember " +
                                 std::to_string(job.MinAvailable()));
        }
      }
    }

    // Gangs: an action may not leave a gang partly placed unless it already was.
    for (JobId j = 0; j < static_cast<JobId>(snap.jobs.size()); ++j) {
      const SnapJob& job = snap.jobs[j];
      int was = 0;
      for (PodId p : job.pods) was += WillHold(before[p].status) ? 1 : 0;
      if (Broken(ActiveCount(s, job), job.MinAvailable()) && !Broken(was, job.MinAvailable())) {
        // A gang with a pipelined pod (placed or moved by an earlier solution of this action)
        // is reported apart: see NoGangLeftWithPipelinedPod.
        bool pipelined = false;
        for (PodId p : job.pods) pipelined |= snap.pods[p].status == PodStatus::kPipelined;
        Fail(pipelined ? "gang-pipelined" : "gang",
             when + ": gang " + std::string(job.name) + " left with " +
                 std::to_string(ActiveCount(s, job)) + " of minMember " +
                 std::to_string(job.MinAvailable()) + " (had " + std::to_string(was) + ")");
      }
    }
  }

  // Runs the configured actions one by one on a session of `world_`; returns the final states.
  std::vector<std::pair<std::string, std::string>> Probe(const SchedulerConfig& config) {
    Session s(BuildSnapshot(world_, kNow), config);
    EXPECT_TRUE(s.OpenPlugins().ok());
    CheckNodes(s, "at cycle start");
    for (const std::string& name : config.actions) {
      const std::vector<PodState> before = States(s);
      std::vector<std::optional<UnixSeconds>> last_start;
      for (const SnapJob& j : s.snap().jobs) last_start.push_back(j.last_start);
      std::vector<int64_t> leaf_before(s.snap().queues.size());
      for (QueueId q = 0; q < static_cast<QueueId>(leaf_before.size()); ++q) {
        leaf_before[q] = LeafGpus(s, q);
      }
      FindAction(name)->make()->Execute(s);
      CheckAction(s, name, before, last_start, leaf_before);
    }
    s.Close();
    std::vector<std::pair<std::string, std::string>> out;
    for (const SnapPod& p : s.snap().pods) {
      out.emplace_back(std::string(PodStatusName(p.status)),
                       p.node == kNone ? "" : std::string(s.snap().nodes[p.node].name));
    }
    return out;
  }

 private:
  const ClusterState& world_;
  int cycle_;
  Violations& out_;
  Stats* stats_;
};

// Running pods per PodGroup in a world (what a gang has once the cycle's changes are applied).
std::map<std::string, int> RunningPerGroup(const ClusterState& w) {
  std::map<std::string, int> out;
  for (const PodObject& p : w.pods) {
    if (p.phase == "Running" && !p.meta.deletion) ++out[p.pod_group];
  }
  return out;
}

std::string Fingerprint(const ClusterState& w) {
  std::ostringstream o;
  for (const PodObject& p : w.pods) {
    o << p.meta.name << ' ' << p.phase << ' ' << p.node_name << ' ' << p.meta.deletion.has_value()
      << ' ' << p.nominated_node << '\n';
  }
  for (const PodGroupObject& pg : w.pod_groups) {
    o << pg.meta.name << ' ' << pg.last_start.value_or(-1) << ' ' << pg.stale_since.value_or(-1)
      << '\n';
  }
  return o.str();
}

// Node over-commit in the advanced world, from the objects alone.
void CheckWorldNodes(const ClusterState& w, Checker& c) {
  std::map<std::string, Resources> held;
  for (const PodObject& p : w.pods) {
    if (p.node_name.empty() || p.phase == "Succeeded" || p.phase == "Failed") continue;
    held[p.node_name] += p.request;
  }
  for (const NodeObject& n : w.nodes) {
    if (!FitsIn(held[n.meta.name], n.allocatable)) {
      c.Fail("overcommit", "advanced world: node " + n.meta.name + " holds " +
                               ToString(held[n.meta.name]) + " > " + ToString(n.allocatable));
    }
  }
}

Violations CheckWorld(ClusterState world, const SchedulerConfig& config, Stats* stats = nullptr) {
  Violations v;
  sim::SimulateOptions options;
  options.now = kNow;
  options.verify_snapshot_cache = true;  // every cycle after the first runs on the cache
  sim::CycleCache cycles;
  std::vector<std::string> prints = {Fingerprint(world)};
  std::vector<SessionCounters> counts;
  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    Checker checker(world, cycle, v, stats);
    const auto running_before = RunningPerGroup(world);
    const auto probe = checker.Probe(config);

    auto report = sim::RunCycle(world, config, options, cycle, &cycles);
    if (!report.ok()) {
      v["determinism"] = "RunCycle failed: " + report.error().message;
      return v;
    }
    const sim::CycleReport& rep = report.value();
    counts.push_back(rep.counts);
    for (size_t i = 0; i < rep.pods.size() && i < probe.size(); ++i) {
      if (rep.pods[i].status != probe[i].first || rep.pods[i].node != probe[i].second) {
        checker.Fail("determinism", "pod " + rep.pods[i].name + ": RunCycle " + rep.pods[i].status +
                                        "@" + rep.pods[i].node + ", probe " + probe[i].first + "@" +
                                        probe[i].second);
        break;
      }
    }

    // The advanced world.
    CheckWorldNodes(world, checker);
    const auto running = RunningPerGroup(world);
    std::set<std::string> moved, pipelined;  // groups with a moved victim / a pipelined pod
    for (const sim::PodReport& p : rep.pods) {
      if (p.status != "Pipelined") continue;
      pipelined.insert(p.pod_group);
      if (!p.eviction.empty()) moved.insert(p.pod_group);
    }
    for (const PodGroupObject& pg : world.pod_groups) {
      const int min = pg.min_member.value_or(1);
      auto count = [&](const std::map<std::string, int>& m) {
        auto it = m.find(pg.meta.name);
        return it == m.end() ? 0 : it->second;
      };
      if (!Checker::Broken(count(running), min)) continue;
      const std::string runs = "advanced world: gang " + pg.meta.name + " runs " +
                               std::to_string(count(running)) + " of minMember " +
                               std::to_string(min) + " (ran " +
                               std::to_string(count(running_before)) + ")";
      if (moved.count(pg.meta.name)) {
        checker.Fail("gang-moved", runs + ": some of its pods were moved, the others stayed");
      } else if (!Checker::Broken(count(running_before), min)) {
        checker.Fail("gang", runs);
      } else if (!pg.stale_since && !pipelined.count(pg.meta.name)) {
        checker.Fail("gang", runs + " and carries no stale stamp");
      }
    }

    // Convergence: once a cycle changed nothing, later cycles evict nothing.
    for (int k = 0; k + 1 < static_cast<int>(counts.size()); ++k) {
      const SessionCounters& c = counts[k];
      if (c.binds == 0 && c.evictions == 0 && c.pipelines == 0 && rep.counts.evictions > 0) {
        checker.Fail("quiet-after-converged", "cycle " + std::to_string(k + 1) +
                                                  " changed nothing, yet cycle " +
                                                  std::to_string(cycle) + " evicted " +
                                                  std::to_string(rep.counts.evictions) + " pods");
        break;
      }
    }
    // Ping-pong: a state seen before, with evictions since.
    const std::string print = Fingerprint(world);
    for (size_t k = 0; k < prints.size(); ++k) {
      if (prints[k] != print) continue;
      int evictions = 0;
      for (size_t c = k; c < counts.size(); ++c) evictions += counts[c].evictions;
      if (evictions > 0) {
        std::string why;
        for (const sim::PodReport& p : rep.pods) {
          if (!p.eviction.empty()) why += "; " + p.ns + "/" + p.name + ": " + p.eviction;
        }
        checker.Fail("no-ping-pong", "the world after cycle " + std::to_string(cycle) +
                                         " equals the world after cycle " + std::to_string(k) +
                                         ", with " + std::to_string(evictions) +
                                         " evictions in between" + why);
      }
    }
    prints.push_back(print);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Minimisation: drop jobs, then nodes (with the jobs on them), then leaf queues (with their jobs)
// while the property still fails.

ClusterState WithoutJobs(const ClusterState& w,
                         const std::function<bool(const PodGroupObject&)>& drop) {
  ClusterState out = w;
  std::set<std::string> dropped;
  out.pod_groups.clear();
  for (const PodGroupObject& pg : w.pod_groups) {
    if (drop(pg)) {
      dropped.insert(pg.meta.name);
    } else {
      out.pod_groups.push_back(pg);
    }
  }
  out.pods.clear();
  for (const PodObject& p : w.pods) {
    if (!dropped.count(p.pod_group)) out.pods.push_back(p);
  }
  return out;
}

ClusterState Minimise(ClusterState w, const SchedulerConfig& config, const std::string& property) {
  auto fails = [&](const ClusterState& c) { return CheckWorld(c, config).count(property) > 0; };
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t j = 0; j < w.pod_groups.size() && !progress; ++j) {
      const std::string name = w.pod_groups[j].meta.name;
      ClusterState c =
          WithoutJobs(w, [&](const PodGroupObject& pg) { return pg.meta.name == name; });
      if (fails(c)) w = std::move(c), progress = true;
    }
    for (size_t n = 0; n < w.nodes.size() && !progress && w.nodes.size() > 1; ++n) {
      const std::string node = w.nodes[n].meta.name;
      std::set<std::string> on_node;
      for (const PodObject& p : w.pods) {
        if (p.node_name == node) on_node.insert(p.pod_group);
      }
      ClusterState c =
          WithoutJobs(w, [&](const PodGroupObject& pg) { return on_node.count(pg.meta.name) > 0; });
      c.nodes.erase(c.nodes.begin() + static_cast<std::ptrdiff_t>(n));
      if (fails(c)) w = std::move(c), progress = true;
    }
    for (size_t q = 1; q < w.queues.size() && !progress && w.queues.size() > 2; ++q) {
      const std::string queue = w.queues[q].meta.name;
      ClusterState c = WithoutJobs(w, [&](const PodGroupObject& pg) { return pg.queue == queue; });
      c.queues.erase(c.queues.begin() + static_cast<std::ptrdiff_t>(q));
      if (fails(c)) w = std::move(c), progress = true;
    }
  }
  return w;
}

// ---------------------------------------------------------------------------------------------
// The sweep, run once and shared by the per-property tests.

struct Failure {
  uint64_t seed = 0;
  std::string detail;                                    // on the original world
  std::string min_detail;                                // on the minimised world
  std::string yaml;                                      // the minimised world
  int count = 0;                                         // worlds failing this property
  std::vector<std::pair<uint64_t, std::string>> others;  // further failing seeds (a few)
};

struct Sweep {
  std::map<std::string, Failure> failures;
  int worlds = 0;
  Stats stats;
};

// Which configuration a sweep runs: KAI's default, or with kai's opt-in whole-gang restart.
enum class Gangs { kKaiDefault, kRestartPartlyMoved };

// Names the minimised manifests of a sweep apart from the other's.
std::string ManifestName(const std::string& property, Gangs gangs) {
  return "disruption_property_" + property +
         (gangs == Gangs::kRestartPartlyMoved ? "_restart" : "") + ".yaml";
}

Sweep DoSweep(Gangs gangs) {
  Sweep s;
  SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  config.restart_partly_moved_gangs = gangs == Gangs::kRestartPartlyMoved;
  std::mt19937_64 seeds(20250101);
  // KAI_PROPERTY_SEED=<seed> checks that one world only and writes it out as a manifest.
  const char* only = std::getenv("KAI_PROPERTY_SEED");
  for (int i = 0; i < (only ? 1 : kWorlds); ++i) {
    const uint64_t seed = only ? std::stoull(only) : seeds();
    if (only) {
      std::ofstream(::testing::TempDir() + "disruption_property_seed.yaml")
          << bench::ToYaml(RandomWorld(seed));
    }
    const ClusterState world = RandomWorld(seed);
    ++s.worlds;
    const Violations v = CheckWorld(world, config, &s.stats);
    for (const auto& [property, detail] : v) {
      Failure& f = s.failures[property];
      if (f.count++ == 0) {
        f.seed = seed;
        f.detail = detail;
      } else if (f.others.size() < 8) {
        f.others.emplace_back(seed, detail);
      }
    }
  }
  // Minimise the first failing world of each property.
  for (auto& [property, f] : s.failures) {
    const ClusterState min = Minimise(RandomWorld(f.seed), config, property);
    const Violations v = CheckWorld(min, config);
    f.min_detail = v.count(property) ? v.at(property) : "(lost while minimising)";
    f.yaml = "# kai simulate -f <this file> --now 2025-01-01T12:00:00Z --cycles " +
             std::to_string(kCycles) + "\n# " + property + ": " + f.min_detail + "\n" +
             bench::ToYaml(min);
    std::ofstream(::testing::TempDir() + ManifestName(property, gangs)) << f.yaml;
  }
  return s;
}

// Each configuration's sweep runs once per process and is shared by the per-property tests.
const Sweep& RunSweep(Gangs gangs = Gangs::kKaiDefault) {
  if (gangs == Gangs::kRestartPartlyMoved) {
    static const Sweep restart = DoSweep(Gangs::kRestartPartlyMoved);
    return restart;
  }
  static const Sweep kai_default = DoSweep(Gangs::kKaiDefault);
  return kai_default;
}

std::string Others(const Failure& f) {
  std::string out;
  for (const auto& [seed, detail] : f.others) {
    out += "\n  also seed " + std::to_string(seed) + ": " + detail;
  }
  return out;
}

// Fails when `property` failed on some world. A property with a known, reported bug is skipped
// instead (with the failures in the message) while that bug still shows; once it is fixed the
// test passes and the note should go.
void ExpectHolds(const std::string& property, const char* known_bug = nullptr,
                 Gangs gangs = Gangs::kKaiDefault) {
  const Sweep& s = RunSweep(gangs);
  auto it = s.failures.find(property);
  if (it == s.failures.end()) return;
  const Failure& f = it->second;
  std::ostringstream msg;
  msg << property << " fails on " << f.count << " of " << s.worlds << " worlds; first seed "
      << f.seed << ": " << f.detail << Others(f) << "\nminimised: " << f.min_detail
      << "\nmanifest (also in " << ::testing::TempDir() << ManifestName(property, gangs) << "):\n"
      << f.yaml;
  if (known_bug) GTEST_SKIP() << "known bug: " << known_bug << "\n" << msg.str();
  ADD_FAILURE() << msg.str();
}

TEST(DisruptionProperty, NoNodeOvercommit) { ExpectHolds("overcommit"); }
TEST(DisruptionProperty, NoGangBelowMinimum) { ExpectHolds("gang"); }
TEST(DisruptionProperty, NoGangLeftWithPipelinedPod) {
  // A gang placed or moved by an earlier solution of the same action (one pod Pipelined, one
  // Running) is a victim with all its active-allocated pods, Pipelined ones included, as KAI's
  // GetTasksToEvict takes them: never a lone pod evicted while its sibling keeps a reservation.
  ExpectHolds("gang-pipelined");
}
TEST(DisruptionProperty, NoGangPartlyMoved) {
  // With spec.args restart-partly-moved-gangs, a victim gang that loses pods to a move or an
  // eviction restarts whole: a pod placed back on its own node is restarted with its siblings
  // rather than kept running below minMember (kai's opt-in, docs/deviations.md; KAI, the default,
  // un-evicts it). The option keeps every other property as well.
  const Sweep& s = RunSweep(Gangs::kRestartPartlyMoved);
  for (const auto& [property, failure] : s.failures) {
    ExpectHolds(property, nullptr, Gangs::kRestartPartlyMoved);
  }
}
TEST(DisruptionProperty, PreemptStaysInQueueAndPriority) { ExpectHolds("preempt-queue"); }
TEST(DisruptionProperty, ReclaimCrossesQueues) { ExpectHolds("reclaim-queue"); }
TEST(DisruptionProperty, OnlyPreemptibleVictims) { ExpectHolds("victim-preemptible"); }
TEST(DisruptionProperty, NoReclaimFromQueueWithinDeserved) { ExpectHolds("reclaim-in-quota"); }
TEST(DisruptionProperty, ReclaimerEndsWithinFairShare) { ExpectHolds("reclaimer-fair-share"); }
TEST(DisruptionProperty, ConsolidationOnlyMoves) { ExpectHolds("consolidation-moves"); }
TEST(DisruptionProperty, MinRuntimeProtects) { ExpectHolds("minruntime"); }
TEST(DisruptionProperty, QueueLimitRespected) { ExpectHolds("queue-limit"); }
TEST(DisruptionProperty, QueueAccountingMatchesPods) { ExpectHolds("queue-accounting"); }
TEST(DisruptionProperty, NodeAccountingMatchesPods) { ExpectHolds("node-accounting"); }
TEST(DisruptionProperty, EvictionsExplained) { ExpectHolds("explained"); }
TEST(DisruptionProperty, ProbeMatchesRunCycle) { ExpectHolds("determinism"); }
TEST(DisruptionProperty, QuietAfterConverged) { ExpectHolds("quiet-after-converged"); }
TEST(DisruptionProperty, NoPingPong) {
  // Reclaim or consolidation pipelines the beneficiary onto room a victim frees. Without care the
  // victim, recreated Pending, is served first next cycle (queue order may prefer its queue),
  // retakes the room and is evicted again, every cycle (KAI behaves so). kai keeps the pipelined
  // node as the beneficiary's nominated node and allocate serves nominated jobs first. A longer
  // cycle (reclaim, then a preempt taking the queue above its fair share, then a reclaim back) is
  // broken by the proportion plugin's preempt validator (docs/deviations.md).
  ExpectHolds("no-ping-pong");
}

// The sweep must exercise the disruptive paths, or the properties above prove little.
TEST(DisruptionProperty, SweepExercisesDisruption) {
  const Sweep& s = RunSweep();
  if (std::getenv("KAI_PROPERTY_SEED")) GTEST_SKIP() << "one seed only";
  EXPECT_GE(s.worlds, kWorlds);
  std::string summary;
  for (const auto& [what, pods] : s.stats) summary += "\n  " + what + ": " + std::to_string(pods);
  std::cout << "pods evicted or moved over " << s.worlds << " worlds:" << summary << "\n";
  for (const char* what : {"reclaim evicted", "reclaim moved", "preempt evicted",
                           "consolidation moved", "stalegangeviction evicted"}) {
    EXPECT_GT(s.stats.count(what) ? s.stats.at(what) : 0, 0) << what << summary;
  }
#ifndef KAI_PROPERTY_ASAN  // 7 of the 1,500 worlds; the ASan sweep's 150 may have none
  // KAI's default moves some gangs in part, so NoGangPartlyMoved (the same worlds with kai's
  // restart-partly-moved-gangs) has splits to prevent.
  EXPECT_EQ(s.failures.count("gang-moved"), 1u) << "no gang moved in part" << summary;
#endif
}

// The checker itself: a hand-made bad decision must trip the properties it breaks.
TEST(DisruptionProperty, CheckerCatchesBadDecisions) {
  ClusterState w;
  for (const auto& [name, value] : {std::pair<const char*, int>{"train", 50}, {"build", 100}}) {
    PriorityClassObject pc;
    pc.meta = Meta("PriorityClass", name, false);
    pc.value = value;
    w.priority_classes.push_back(pc);
  }
  NodeObject n;
  n.meta = Meta("Node", "node-0", false);
  n.allocatable = {.milli_cpu = 32000, .memory = 64 * kGi, .milli_gpu = 4000, .pods = 110};
  n.capacity = n.allocatable;
  w.nodes.push_back(n);
  w.queues.push_back(MakeQueue("root", "", {-1, -1, 1000}, kNow - 7200));
  w.queues.push_back(MakeQueue("q0", "root", {4000, 4000, 1000}, kNow - 3600));
  w.queues.back().reclaim_min_runtime = 600;
  w.queues.push_back(MakeQueue("q1", "root", {0, 0, 1000}, kNow - 3000));
  auto job = [&](const std::string& name, const std::string& queue, const char* pc, int pods,
                 int64_t gpus, bool running) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", name, true);
    pg.meta.creation = kNow - 600;
    pg.queue = queue;
    pg.priority_class_name = pc;
    pg.min_member = pods;
    if (running) pg.last_start = kNow - 60;
    w.pod_groups.push_back(pg);
    for (int i = 0; i < pods; ++i) {
      PodObject p;
      p.meta = Meta("Pod", name + "-" + std::to_string(i), true);
      p.scheduler_name = std::string(keys::kSchedulerName);
      p.pod_group = name;
      p.request = {.milli_cpu = 1000, .memory = kGi, .milli_gpu = gpus, .pods = 1};
      if (running) p.phase = "Running", p.node_name = "node-0";
      w.pods.push_back(p);
    }
  };
  job("victim", "q0", "train", 2, 1000, true);  // 2 of 4 GPUs, q0 within its deserved 4
  job("big", "q1", "build", 1, 4000, false);    // q1 has limit 0

  Session s(BuildSnapshot(w, kNow), ConfigFromShard(std::nullopt).value());
  ASSERT_TRUE(s.OpenPlugins().ok());
  const std::vector<PodState> before = States(s);
  const std::vector<std::optional<UnixSeconds>> last_start = {kNow - 60, std::nullopt};
  const std::vector<int64_t> leaf_before = {2000, 2000, 0};  // root, q0, q1
  {
    Statement stmt(s);
    stmt.Evict(0);        // half of the victim gang, reclaimed for a job of its own queue
    stmt.Allocate(2, 0);  // 4 GPUs onto a node with 3 left after the eviction
    stmt.Commit();
  }
  s.SetEviction(0, {EvictionKind::kEvicted, "reclaim", 0,
                    std::make_shared<const std::string>("test"), false});
  Violations v;
  Checker(w, 1, v, nullptr).CheckAction(s, "reclaim", before, last_start, leaf_before);
  for (const char* property : {"overcommit", "gang", "reclaim-queue", "reclaim-in-quota",
                               "minruntime", "queue-limit", "victim-preemptible"}) {
    if (std::string(property) == "victim-preemptible") {
      EXPECT_FALSE(v.count(property)) << "train victims are preemptible";
      continue;
    }
    EXPECT_TRUE(v.count(property)) << property << " not detected";
  }
}

}  // namespace
}  // namespace kai
