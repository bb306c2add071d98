// Property test for SubGroups (hierarchical PodGroups) over random small clusters, each run through
// four simulated cycles with KAI's default configuration (allocate, consolidation, reclaim,
// preempt, stale-gang eviction).
//
// 3,000 worlds (well under a second in Release). Worlds: 2-5 nodes of 2-8 GPUs; a root queue with
// 2-3 leaves of random GPU quota and weight; 2-8 PodGroups of priority train or inference, half of
// them with a SubGroup tree: a root with 1-3 members, each a PodSet (minMember 0-2, 0-3 pods of 1
// GPU) or a SubGroupSet of 1-2 such PodSets (minSubGroup unset or 1); the other half flat (1-3
// pods, minMember 1 or all). About half of the PodGroups start fully running where they fit (first
// fit), so reclaim and preempt have victims with surplus pods.
//
// Property (floors): after every cycle, in the advanced world, a PodGroup that runs pods runs no
// PodSet partly (some pods active but fewer than its minMember) and satisfies its SubGroup tree
// (each SubGroupSet has minSubGroup satisfied members, all when unset), unless the PodGroup
// carries a stale stamp or holds a pipelined pod (its gang is waiting for freed resources), or, in
// KAI's default configuration, had a pod moved this cycle; with spec.args
// restart-partly-moved-gangs a PodGroup with a pod moved this cycle is no exception.
// Allocation places a PodSet's missing pods together, eviction takes surplus pods one at a time
// and a gang or surplus member only whole, and (with the option) a victim placed back on its node
// restarts with its moved or evicted siblings, so no cycle breaks a floor. (A PodSet left empty
// because its set needs fewer members is not partly running: KAI's stale-gang rule, which ignores
// minSubGroup, would stamp it; the default configuration runs no stale-gang eviction.)
#include <gtest/gtest.h>

#include "property_support.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "../bench/generator.h"  // ToYaml (compiled into kai_tests by disruption_property_test.cc)

#include "kai/core/framework/config.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {
namespace {

using testing::Chance;
using testing::Uniform;

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int kCycles = 4;
constexpr int kWorlds = testing::SweepWorlds(3000);

ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  return testing::PropertyMeta(std::move(kind), std::move(name), namespaced,
                               "subgroup-property-test");
}

class WorldBuilder {
 public:
  explicit WorldBuilder(uint64_t seed) : rng_(seed) {}

  ClusterState Build() {
    AddPriorityClasses();
    AddNodes();
    AddQueues();
    const int jobs = Uniform(rng_, 2, 8);
    for (int j = 0; j < jobs; ++j) AddJob(j, jobs);
    return std::move(st_);
  }

 private:
  void AddPriorityClasses() {
    for (const auto& [name, value] :
         {std::pair<const char*, int>{"train", 50}, {"inference", 125}}) {
      PriorityClassObject pc;
      pc.meta = Meta("PriorityClass", name, false);
      pc.value = value;
      st_.priority_classes.push_back(std::move(pc));
    }
  }

  void AddNodes() {
    const int nodes = Uniform(rng_, 2, 5);
    for (int i = 0; i < nodes; ++i) {
      NodeObject n;
      n.meta = Meta("Node", "node-" + std::to_string(i), false);
      const int gpus = Uniform(rng_, 2, 8);
      total_gpus_ += gpus;
      n.allocatable.milli_gpu = int64_t{gpus} * kMilliPerUnit;
      n.allocatable.milli_cpu = 64 * kMilliPerUnit;
      n.allocatable.memory = int64_t{256} << 30;
      n.allocatable.pods = 110;
      n.capacity = n.allocatable;
      free_.push_back(gpus);
      st_.nodes.push_back(std::move(n));
    }
  }

  QueueObject Queue(const std::string& name, const std::string& parent, QueueResource gpu) {
    QueueObject q;
    q.meta = Meta("Queue", name, false);
    q.meta.creation = kNow - 3600;
    q.parent = parent;
    q.has_resources = true;
    q.gpu = gpu;
    q.cpu = {-1, -1, kMilliPerUnit};
    q.memory = {-1, -1, kMilliPerUnit};
    return q;
  }

  void AddQueues() {
    st_.queues.push_back(Queue("root", "", {-1, -1, kMilliPerUnit}));
    leaves_ = Uniform(rng_, 2, 3);
    for (int i = 0; i < leaves_; ++i) {
      QueueResource gpu{int64_t{Uniform(rng_, 0, total_gpus_ / 2)} * kMilliPerUnit, -1,
                        int64_t{Uniform(rng_, 0, 2)} * kMilliPerUnit};
      st_.queues.push_back(Queue("q" + std::to_string(i), "root", gpu));
    }
  }

  // A PodSet spec with `pods` pod names to create; returns the pod count.
  int AddPodSet(PodGroupObject& pg, const std::string& name, const std::string& parent) {
    SubGroupSpec sg;
    sg.name = name;
    sg.parent = parent;
    sg.min_member = Uniform(rng_, 0, 2);
    const int pods = Uniform(rng_, *sg.min_member, 3);
    pg.sub_groups.push_back(std::move(sg));
    for (int p = 0; p < pods; ++p) pod_sets_.push_back(name);
    return pods;
  }

  void AddTree(PodGroupObject& pg) {
    const int members = Uniform(rng_, 1, 3);
    for (int m = 0; m < members; ++m) {
      const std::string name = "m" + std::to_string(m);
      if (Chance(rng_, 0.6)) {
        AddPodSet(pg, name, "");
        continue;
      }
      SubGroupSpec set;
      set.name = name;
      if (Chance(rng_, 0.3)) set.min_sub_group = 1;
      pg.sub_groups.push_back(std::move(set));
      const int leaves = Uniform(rng_, 1, 2);
      for (int l = 0; l < leaves; ++l) AddPodSet(pg, name + "-" + std::to_string(l), name);
    }
    if (Chance(rng_, 0.2)) pg.min_sub_group = 1;
  }

  void AddJob(int j, int jobs) {
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", "job-" + std::to_string(j), true);
    pg.meta.creation = kNow - static_cast<UnixSeconds>(jobs - j) * 60;
    pg.queue = "q" + std::to_string(Uniform(rng_, 0, leaves_ - 1));
    pg.priority_class_name = Chance(rng_, 0.7) ? "train" : "inference";
    pod_sets_.clear();
    if (Chance(rng_, 0.5)) {
      AddTree(pg);
    } else {
      const int pods = Uniform(rng_, 1, 3);
      pg.min_member = Chance(rng_, 0.5) ? pods : 1;
      pod_sets_.assign(pods, "");
    }
    const std::vector<int> placed = PlaceAll();
    if (!placed.empty()) pg.last_start = kNow - 600;
    for (size_t p = 0; p < pod_sets_.size(); ++p) {
      PodObject pod;
      pod.meta = Meta("Pod", pg.meta.name + "-" + std::to_string(p), true);
      pod.meta.creation = pg.meta.creation;
      pod.scheduler_name = std::string(keys::kSchedulerName);
      pod.request.milli_gpu = kMilliPerUnit;
      pod.request.milli_cpu = kMilliPerUnit;
      pod.request.memory = int64_t{1} << 30;
      pod.request.pods = 1;
      pod.pod_group = pg.meta.name;
      pod.sub_group = pod_sets_[p];
      if (!pod.sub_group.empty())
        pod.meta.labels[std::string(keys::kSubGroupLabel)] = pod.sub_group;
      if (p < placed.size()) {
        pod.phase = "Running";
        pod.node_name = st_.nodes[placed[p]].meta.name;
      }
      st_.pods.push_back(std::move(pod));
    }
    st_.pod_groups.push_back(std::move(pg));
  }

  // First fit of every pod of the job (1 GPU each), or none.
  std::vector<int> PlaceAll() {
    std::vector<int> placed;
    if (pod_sets_.empty() || !Chance(rng_, 0.5)) return placed;
    std::vector<int> trial = free_;
    for (size_t p = 0; p < pod_sets_.size(); ++p) {
      for (size_t n = 0; n < trial.size(); ++n) {
        if (trial[n] > 0) {
          --trial[n];
          placed.push_back(static_cast<int>(n));
          break;
        }
      }
    }
    if (placed.size() != pod_sets_.size()) return {};
    free_ = std::move(trial);
    return placed;
  }

  std::mt19937_64 rng_;
  ClusterState st_;
  std::vector<int> free_;
  int total_gpus_ = 0;
  int leaves_ = 0;
  std::vector<std::string> pod_sets_;  // PodSet name of each pod of the job being built
};

// A PodSet running some of its pods, but fewer than its minMember.
bool PartlyRunningPodSet(const Snapshot& snap, const SnapJob& job) {
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    int active = 0;
    for (PodId p : job.PodsOf(static_cast<SubGroupIndex>(i))) {
      active += IsActiveUsed(snap.pods[p].status) ? 1 : 0;
    }
    if (active > 0 && active < job.sub_groups[i].min_member) return true;
  }
  return false;
}

// The first PodGroup of the world whose floors are broken, or "", leaving out the PodGroups in
// `excused`.
std::string BrokenFloor(const ClusterState& world, const std::set<std::string>& excused = {}) {
  const Snapshot snap = BuildSnapshot(world, kNow);
  for (const SnapJob& job : snap.jobs) {
    if (excused.count(std::string(job.name))) continue;
    bool active = false, pipelined = false;
    for (PodId p : job.pods) {
      active = active || IsActiveUsed(snap.pods[p].status);
      pipelined = pipelined || snap.pods[p].status == PodStatus::kPipelined;
    }
    if (!active || pipelined || job.obj->stale_since) continue;
    if (!PartlyRunningPodSet(snap, job) && IsJobSatisfied(job)) continue;
    std::string why = std::string(job.name) + " (";
    for (size_t i = 0; i < job.sub_groups.size(); ++i) {
      const SnapSubGroup& sg = job.sub_groups[i];
      if (!sg.pod_set) continue;
      why += std::string(sg.name) + ": min " + std::to_string(sg.min_member) + " pods";
      for (PodId p : job.PodsOf(static_cast<SubGroupIndex>(i))) {
        why += " " + std::string(PodStatusName(snap.pods[p].status));
      }
      why += "; ";
    }
    return why + ")";
  }
  return "";
}

// Runs the sweep. A move deletes the pod and its controller recreates it: in KAI's default
// configuration its siblings placed back on their own node keep running meanwhile, so a PodGroup
// with a pod moved this cycle is excused; with `restart_partly_moved_gangs` they restart with it,
// so no PodGroup is.
void ExpectFloorsHold(bool restart_partly_moved_gangs) {
  SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  config.restart_partly_moved_gangs = restart_partly_moved_gangs;
  sim::SimulateOptions options;
  options.now = kNow;
  options.verify_snapshot_cache = true;  // every cycle after the first runs on the cache
  int with_evictions = 0;
  // KAI_PROPERTY_SEED=<seed> checks that one world only.
  const char* only = std::getenv("KAI_PROPERTY_SEED");
  const uint64_t first = only ? std::stoull(only) : 1;
  const uint64_t last = only ? first : kWorlds;
  for (uint64_t seed = first; seed <= last; ++seed) {
    ClusterState world = WorldBuilder(seed).Build();
    const ClusterState start = world;
    ASSERT_EQ(BrokenFloor(world), "") << "seed " << seed << " starts broken";
    sim::CycleCache cycles;
    for (int cycle = 1; cycle <= kCycles; ++cycle) {
      auto report = sim::RunCycle(world, config, options, cycle, &cycles);
      ASSERT_TRUE(report.ok()) << report.error().message;
      with_evictions += report.value().counts.evictions > 0;
      std::string evictions;
      std::set<std::string> moved;
      for (const sim::PodReport& pod : report.value().pods) {
        if (pod.eviction.empty()) continue;
        evictions += "\n  " + pod.name + ": " + pod.eviction;
        if (pod.eviction.find("moved") != std::string::npos) moved.insert(pod.pod_group);
      }
      if (restart_partly_moved_gangs) moved.clear();
      const std::string broken = BrokenFloor(world, moved);
      if (broken.empty()) continue;
      const std::string detail = "seed " + std::to_string(seed) + " cycle " +
                                 std::to_string(cycle) + ": PodGroup " + broken + evictions;
      const std::string file = ::testing::TempDir() + "subgroup_property_seed" +
                               std::to_string(seed) +
                               (restart_partly_moved_gangs ? "_restart" : "") + ".yaml";
      std::ofstream(file) << "# kai simulate -f <this file> --now 2025-01-01T12:00:00Z --cycles "
                          << cycle << "\n"
                          << bench::ToYaml(start);
      ADD_FAILURE() << detail << "\nthe world before cycle 1: " << file;
      break;
    }
  }
  // The worlds must exercise eviction, or the property says little about it.
  if (!only) {
    EXPECT_GT(with_evictions, kWorlds / 20);
  }
}

TEST(SubGroupProperty, FloorsHoldForRunningGangs) { ExpectFloorsHold(false); }
TEST(SubGroupProperty, FloorsHoldForMovedGangsWithRestartOption) { ExpectFloorsHold(true); }

}  // namespace
}  // namespace kai
