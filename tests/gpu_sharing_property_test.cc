// Property tests for GPU sharing over random small clusters, each run through several simulated
// cycles with KAI's default configuration (all five actions).
//
// Worlds: 1-4 nodes of 1-4 GPUs (device memory 100 MiB or 40,000 MiB); two leaf queues of random
// GPU quota; 3-14 single-pod jobs (train 50 or build 100) asking a fraction (0.05-0.95, some on
// 2 devices), gpu-memory, or 1-2 whole GPUs; some pods start Running on a node with a group
// label when they fit there (first fit), so that every action has work.
// After every cycle, from the pods' own status, node and groups:
//   group-capacity   on every shared GPU the memory of pods holding it now (allocated, binding,
//                    running, releasing) is at most the device memory, and so is the memory of
//                    the pods that will hold it once releasing pods leave (not releasing, incl.
//                    pipelined): a GPU group never holds more than 1.0
//   no-shared-whole  a shared pod never lands on a GPU held whole: on each node, shared groups
//                    plus whole GPUs held (now, and once releasing pods leave) fit the devices
//   devices          a shared pod's groups are distinct and as many as it asked devices
// And, on the same worlds, a Statement's random shared-GPU operations (allocate, pipeline, evict,
// restart, nested checkpoints) roll back to exactly the node accounting, GPU groups (order and
// counters) and pod placement of the checkpoint.
// And, with whole-GPU pods too, after every operation and rollback, on every node (KAI's
// node_info accounting, where a Pipelined pod is used and lowers releasing):
//   adds-up          idle + used - promised = allocatable, where `used` counts every pod on the
//                    node (a Releasing one until it is gone, also once moved away as a shared
//                    pod's first instance) and `promised` is what the node's Pipelined pods
//                    ask: equivalently idle + used + releasing = allocatable + what Releasing
//                    pods hold (counted in both used and releasing). Checked for cpu, memory and
//                    pods; GPUs too on a node without shared GPUs, whose GPUs follow the group
//                    rules instead
//   releasing-parts  KAI's releasing = freed - promised (BreakdownReleasing), promised from idle
//                    within promised; without shared GPUs, freed and promised are the whole GPUs
//                    of the node's Releasing and Pipelined pods
#include <gtest/gtest.h>

#include "property_support.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../bench/generator.h"
#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/framework/statement.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/fit.h"

namespace kai {
namespace {

using testing::Chance;
using testing::Uniform;

constexpr UnixSeconds kNow = 1735732800;  // 2025-01-01T12:00:00Z
constexpr int kWorlds = testing::SweepWorlds(2000);
constexpr int kCycles = 4;

ObjectMeta Meta(std::string kind, std::string name, bool namespaced) {
  ObjectMeta m = testing::PropertyMeta(std::move(kind), std::move(name), namespaced,
                                       "gpu-sharing-property-test");
  m.creation = kNow - 600;
  return m;
}

QueueObject Queue(const std::string& name, const std::string& parent, int64_t quota) {
  QueueObject q;
  q.meta = Meta("Queue", name, false);
  q.parent = parent;
  q.has_resources = true;
  q.gpu = {quota, -1, kMilliPerUnit};
  q.cpu = {-1, -1, kMilliPerUnit};
  q.memory = {-1, -1, kMilliPerUnit};
  return q;
}

struct NodeSpec {
  int devices;
  int64_t memory;
};

// Memory a pod takes on each of its devices on a node of `memory` MiB devices (KAI's rule).
int64_t PodMemory(const PodObject& p, int64_t memory) {
  if (p.gpu_sharing.fraction_milli > 0) {
    return static_cast<int64_t>(static_cast<double>(p.gpu_sharing.fraction_milli) / 1000 *
                                static_cast<double>(memory));
  }
  return p.gpu_sharing.memory_mib;
}

ClusterState RandomWorld(uint64_t seed, std::vector<NodeSpec>& specs) {
  std::mt19937_64 rng(seed);
  ClusterState w;
  w.priority_classes.push_back({Meta("PriorityClass", "train", false), 50, false});
  w.priority_classes.push_back({Meta("PriorityClass", "build", false), 100, false});
  const int nodes = Uniform(rng, 1, 4);
  int total = 0;
  specs.clear();
  for (int i = 0; i < nodes; ++i) {
    NodeObject n;
    n.meta = Meta("Node", "node" + std::to_string(i), false);
    const NodeSpec spec{Uniform(rng, 1, 4), Uniform(rng, 0, 1) ? 100 : 40000};
    specs.push_back(spec);
    total += spec.devices;
    n.meta.labels["nvidia.com/gpu.count"] = std::to_string(spec.devices);
    n.meta.labels["nvidia.com/gpu.memory"] = std::to_string(spec.memory);
    ReadTypedLabels(n);
    n.allocatable.milli_gpu = spec.devices * kMilliPerUnit;
    n.allocatable.milli_cpu = 64000;
    n.allocatable.memory = int64_t{256} << 30;
    n.allocatable.pods = Uniform(rng, 0, 3) == 0 ? 4 : 110;
    n.capacity = n.allocatable;
    w.nodes.push_back(std::move(n));
  }
  w.queues.push_back(Queue("root", "", -1));
  w.queues.push_back(Queue("qa", "root", Uniform(rng, 0, total) * kMilliPerUnit));
  w.queues.push_back(Queue("qb", "root", Uniform(rng, 0, total) * kMilliPerUnit));
  // Memory placed so far per node and group, for starting pods Running consistently.
  std::vector<std::vector<int64_t>> used(nodes);
  std::vector<int> whole_used(nodes, 0);
  const int jobs = Uniform(rng, 3, 14);
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "job" + std::to_string(j);
    PodGroupObject pg;
    pg.meta = Meta("PodGroup", name, true);
    pg.meta.creation = kNow - 600 + j;
    pg.queue = Uniform(rng, 0, 1) ? "qa" : "qb";
    pg.priority_class_name = Uniform(rng, 0, 3) == 0 ? "build" : "train";
    pg.min_member = 1;
    PodObject p;
    p.meta = Meta("Pod", name + "-0", true);
    p.meta.creation = pg.meta.creation;
    p.scheduler_name = "kai-scheduler";
    p.pod_group = name;
    p.request.milli_cpu = 1000;
    p.request.memory = int64_t{1} << 30;
    p.request.pods = 1;
    const int kind = Uniform(rng, 0, 9);
    if (kind < 6) {
      p.gpu_sharing.fraction_milli = 50 * Uniform(rng, 1, 19);
      if (Uniform(rng, 0, 4) == 0) p.gpu_sharing.num_devices = 2;
    } else if (kind < 8) {
      p.gpu_sharing.memory_mib = 10 * Uniform(rng, 1, 9);
    } else {
      p.request.milli_gpu = Uniform(rng, 1, 2) * kMilliPerUnit;
    }
    // Start a single-device pod Running where it fits (first fit), a third of the time.
    if (Uniform(rng, 0, 2) == 0 && p.gpu_sharing.num_devices == 1) {
      for (int n = 0; n < nodes && p.node_name.empty(); ++n) {
        const int64_t groups = static_cast<int64_t>(used[n].size());
        if (p.request.milli_gpu > 0) {
          const int need = static_cast<int>(p.request.milli_gpu / kMilliPerUnit);
          if (whole_used[n] + groups + need <= specs[n].devices) {
            whole_used[n] += need;
            p.node_name = "node" + std::to_string(n);
          }
          continue;
        }
        const int64_t m = PodMemory(p, specs[n].memory);
        for (size_t g = 0; g < used[n].size(); ++g) {
          if (used[n][g] + m <= specs[n].memory) {
            used[n][g] += m;
            p.node_name = "node" + std::to_string(n);
            p.gpu_groups = {"g" + std::to_string(g)};
            break;
          }
        }
        if (p.node_name.empty() && whole_used[n] + groups < specs[n].devices &&
            m <= specs[n].memory) {
          used[n].push_back(m);
          p.node_name = "node" + std::to_string(n);
          p.gpu_groups = {"g" + std::to_string(groups)};
        }
      }
      if (!p.node_name.empty()) p.phase = "Running";
    }
    w.pod_groups.push_back(std::move(pg));
    w.pods.push_back(std::move(p));
  }
  return w;
}

bool HoldsNow(const std::string& s) {
  return s == "Allocated" || s == "Binding" || s == "Bound" || s == "Running" || s == "Releasing" ||
         s == "StuckInReleasing";
}
bool WillHold(const std::string& s) {
  return s == "Allocated" || s == "Binding" || s == "Bound" || s == "Running" || s == "Pipelined";
}

// Returns the first violated property with a description, or "" when all hold.
std::string Check(const ClusterState& w, const std::vector<NodeSpec>& specs,
                  const sim::CycleReport& rep) {
  for (int phase = 0; phase < 2; ++phase) {
    auto counts = phase == 0 ? HoldsNow : WillHold;
    std::map<std::string, std::map<std::string, int64_t>> group_memory;
    std::map<std::string, int64_t> whole;
    for (size_t i = 0; i < rep.pods.size(); ++i) {
      const sim::PodReport& r = rep.pods[i];
      const PodObject& p = w.pods[i];
      if (r.node.empty() || !counts(r.status)) continue;
      const int n = std::stoi(r.node.substr(4));
      if (!p.gpu_sharing.IsShared()) {
        whole[r.node] += p.request.milli_gpu / kMilliPerUnit;
        continue;
      }
      const std::set<std::string> distinct(r.gpu_groups.begin(), r.gpu_groups.end());
      if (static_cast<int64_t>(distinct.size()) != p.gpu_sharing.num_devices ||
          distinct.size() != r.gpu_groups.size()) {
        return "devices: pod " + r.name + " on " + std::to_string(r.gpu_groups.size()) +
               " groups, asked " + std::to_string(p.gpu_sharing.num_devices);
      }
      for (const std::string& g : r.gpu_groups) {
        group_memory[r.node][g] += PodMemory(p, specs[n].memory);
      }
    }
    for (const auto& [node, groups] : group_memory) {
      const NodeSpec& spec = specs[std::stoi(node.substr(4))];
      for (const auto& [g, m] : groups) {
        if (m > spec.memory) {
          return "group-capacity: " + node + " group " + g + " holds " + std::to_string(m) +
                 " of " + std::to_string(spec.memory) + " MiB (" + (phase ? "will" : "now") + ")";
        }
      }
    }
    for (size_t n = 0; n < specs.size(); ++n) {
      const std::string node = "node" + std::to_string(n);
      const int64_t groups = group_memory.count(node) ? group_memory[node].size() : 0;
      if (groups + whole[node] > specs[n].devices) {
        return "no-shared-whole: " + node + " has " + std::to_string(groups) + " shared and " +
               std::to_string(whole[node]) + " whole GPUs held of " +
               std::to_string(specs[n].devices) + " (" + (phase ? "will" : "now") + ")";
      }
    }
  }
  return "";
}

// The world and the cycle's outcome, for a failure message.
std::string Describe(const ClusterState& w, const std::vector<NodeSpec>& specs,
                     const sim::CycleReport& rep) {
  std::string out;
  for (size_t n = 0; n < specs.size(); ++n) {
    out += "node" + std::to_string(n) + ": " + std::to_string(specs[n].devices) + " GPUs of " +
           std::to_string(specs[n].memory) + " MiB\n";
  }
  for (size_t i = 0; i < rep.pods.size(); ++i) {
    const PodObject& p = w.pods[i];
    const sim::PodReport& r = rep.pods[i];
    out += r.name + " (" + p.pod_group + ", frac " + std::to_string(p.gpu_sharing.fraction_milli) +
           " mem " + std::to_string(p.gpu_sharing.memory_mib) + " x" +
           std::to_string(p.gpu_sharing.num_devices) + " whole " +
           std::to_string(p.request.milli_gpu) + ") was " + p.phase + "@" + p.node_name + " -> " +
           r.status + "@" + r.node + " [";
    for (const auto& g : r.gpu_groups) out += g + " ";
    out += "] " + r.eviction + "\n";
  }
  return out;
}

TEST(GpuSharingProperty, GroupsNeverOverfilledNorSharedWithWholeGpus) {
  const SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  sim::SimulateOptions options;
  options.now = kNow;
  options.verify_snapshot_cache = true;  // every cycle after the first runs on the cache
  int placed_shared = 0;
  for (uint64_t seed = 1; seed <= kWorlds; ++seed) {
    std::vector<NodeSpec> specs;
    ClusterState world = RandomWorld(seed, specs);
    sim::CycleCache cycles;
    for (int cycle = 1; cycle <= kCycles; ++cycle) {
      const ClusterState before = world;
      auto rep = sim::RunCycle(world, config, options, cycle, &cycles);
      ASSERT_TRUE(rep.ok()) << "seed " << seed << ": " << rep.error().message;
      const std::string failure = Check(before, specs, rep.value());
      ASSERT_EQ(failure, "") << "seed " << seed << " cycle " << cycle << "\n"
                             << Describe(before, specs, rep.value()) << "world:\n"
                             << bench::ToYaml(before);
      for (size_t i = 0; i < rep.value().pods.size(); ++i) {
        placed_shared +=
            before.pods[i].gpu_sharing.IsShared() && rep.value().pods[i].status == "Binding";
      }
    }
  }
  // The sweep must exercise sharing, or it proves nothing.
  EXPECT_GT(placed_shared, kWorlds);
}

// What a rollback must restore: the pods' placement and the nodes' accounting and GPU groups
// (not the derived virtually-evicted flag, which a statement re-derives from its log).
struct GroupState {
  std::string name;
  int64_t used, releasing, allocated;
  bool has_allocated, marked_releasing;
  friend bool operator==(const GroupState&, const GroupState&) = default;
};
struct NodeAccount {
  Resources idle, releasing, used;
  std::vector<GroupState> groups;
  std::vector<PodId> pods;  // sorted
  friend bool operator==(const NodeAccount&, const NodeAccount&) = default;
};
struct PodPlace {
  PodStatus status;
  NodeId node;
  std::vector<std::string> groups;
  friend bool operator==(const PodPlace&, const PodPlace&) = default;
};
struct Placement {
  std::vector<NodeAccount> nodes;
  std::vector<PodPlace> pods;
  friend bool operator==(const Placement&, const Placement&) = default;
};

Placement CapturePlacement(const Session& s) {
  Placement out;
  for (const SnapNode& n : s.snap().nodes) {
    NodeAccount a{n.idle, n.releasing, n.used, {}, n.pods};
    for (const GpuGroup& g : n.gpu_groups) {
      a.groups.push_back(
          {g.name, g.used, g.releasing, g.allocated, g.has_allocated, g.marked_releasing});
    }
    std::sort(a.pods.begin(), a.pods.end());
    out.nodes.push_back(std::move(a));
  }
  for (const SnapPod& p : s.snap().pods) {
    out.pods.push_back({p.status, p.node, p.gpu_groups});
  }
  return out;
}

// The first difference between two placements, for a failure message.
std::string FirstDifference(const Placement& a, const Placement& b) {
  for (size_t n = 0; n < a.nodes.size(); ++n) {
    const NodeAccount& x = a.nodes[n];
    const NodeAccount& y = b.nodes[n];
    if (x.idle != y.idle || x.releasing != y.releasing || x.used != y.used) {
      return "node " + std::to_string(n) + " accounting";
    }
    if (x.pods != y.pods) return "node " + std::to_string(n) + " pods";
    if (x.groups != y.groups) {
      std::string out = "node " + std::to_string(n) + " groups:";
      for (const auto& [name, g] :
           {std::pair{"now", &x.groups}, std::pair{"expected", &y.groups}}) {
        out += std::string(" ") + name;
        for (const GroupState& st : *g) {
          out += " " + st.name + "(" + std::to_string(st.used) + "," +
                 std::to_string(st.releasing) + "," + std::to_string(st.allocated) + ")";
        }
      }
      return out;
    }
  }
  for (size_t p = 0; p < a.pods.size(); ++p) {
    const PodPlace& x = a.pods[p];
    const PodPlace& y = b.pods[p];
    if (!(x == y)) {
      return "pod " + std::to_string(p) + ": status " + std::to_string(int(x.status)) + "/" +
             std::to_string(int(y.status)) + " node " + std::to_string(x.node) + "/" +
             std::to_string(y.node) + " groups " + std::to_string(x.groups.size()) + "/" +
             std::to_string(y.groups.size());
    }
  }
  return "";
}

// One random shared-GPU operation on the statement; false when the drawn one does not apply.
bool RandomSharedOperation(std::mt19937_64& rng, Session& s, Statement& stmt) {
  const auto pod = static_cast<PodId>(Uniform(rng, 0, static_cast<int>(s.snap().pods.size()) - 1));
  const auto node =
      static_cast<NodeId>(Uniform(rng, 0, static_cast<int>(s.snap().nodes.size()) - 1));
  const SnapPod& p = s.snap().pods[pod];
  if (!p.share.IsShared()) return false;
  switch (p.status) {
    case PodStatus::kPending:
    case PodStatus::kReleasing: {
      const bool pipeline = p.status == PodStatus::kReleasing || Chance(rng, 0.5);
      auto choice = s.ChooseSharedGpus(pod, node, pipeline);
      if (!choice) return false;
      if (pipeline || choice->releasing) {
        stmt.Pipeline(pod, node, std::move(choice->groups));
      } else {
        stmt.Allocate(pod, node, std::move(choice->groups));
      }
      return true;
    }
    case PodStatus::kRunning:
      if (Chance(rng, 0.3)) {
        stmt.Restart(pod);
      } else {
        stmt.Evict(pod);
      }
      return true;
    case PodStatus::kPipelined:
      stmt.Evict(pod);
      return true;
    default:
      return false;
  }
}

// One random operation on any pod (whole GPUs too); false when the drawn one does not apply.
bool RandomOperation(std::mt19937_64& rng, Session& s, Statement& stmt) {
  const auto pod = static_cast<PodId>(Uniform(rng, 0, static_cast<int>(s.snap().pods.size()) - 1));
  const SnapPod& p = s.snap().pods[pod];
  if (p.share.IsShared()) return RandomSharedOperation(rng, s, stmt);
  const auto node =
      static_cast<NodeId>(Uniform(rng, 0, static_cast<int>(s.snap().nodes.size()) - 1));
  const SnapNode& n = s.snap().nodes[node];
  switch (p.status) {
    case PodStatus::kPending:
      if (!Chance(rng, 0.5) && FitsIdle(p, n)) {
        stmt.Allocate(pod, node);
      } else if (FitsIdleOrReleasing(p, n)) {
        stmt.Pipeline(pod, node);
      } else {
        return false;
      }
      return true;
    default:
      if (!IsActiveAllocated(p.status) || p.node == kNone) return false;
      stmt.Evict(pod);
      return true;
  }
}

// The first node whose accounting breaks adds-up or releasing-parts (see the top), or "".
std::string AccountingBreak(const Snapshot& snap) {
  for (const SnapNode& n : snap.nodes) {
    Resources promised, releasing_gpus, pipelined_gpus;
    for (PodId p : n.pods) {
      const SnapPod& pod = snap.pods[p];
      if (pod.status == PodStatus::kPipelined) promised += pod.request;
      if (pod.share.IsShared()) continue;
      if (pod.status == PodStatus::kReleasing) releasing_gpus.milli_gpu += pod.request.milli_gpu;
      if (pod.status == PodStatus::kPipelined) pipelined_gpus.milli_gpu += pod.request.milli_gpu;
    }
    Resources sum = n.idle;
    sum += n.used;
    sum -= promised;
    const bool shared = !n.gpu_groups.empty();
    const std::string at = "node " + std::string(n.name) + ": ";
    if (sum.milli_cpu != n.allocatable.milli_cpu || sum.memory != n.allocatable.memory ||
        sum.pods != n.allocatable.pods || (!shared && sum.milli_gpu != n.allocatable.milli_gpu)) {
      return at + "idle + used - promised = cpu " + std::to_string(sum.milli_cpu) + " memory " +
             std::to_string(sum.memory) + " pods " + std::to_string(sum.pods) + " gpu " +
             std::to_string(sum.milli_gpu) + ", allocatable cpu " +
             std::to_string(n.allocatable.milli_cpu) + " gpu " +
             std::to_string(n.allocatable.milli_gpu);
    }
    const ReleasingGpus r = BreakdownReleasing(snap, n);
    if (r.kai != n.releasing.milli_gpu || r.freed - r.promised != r.kai ||
        r.promised_from_idle < 0 || r.promised_from_idle > std::max<int64_t>(0, r.promised)) {
      return at + "releasing parts kai " + std::to_string(r.kai) + " freed " +
             std::to_string(r.freed) + " promised " + std::to_string(r.promised) + " from idle " +
             std::to_string(r.promised_from_idle);
    }
    if (!shared &&
        (r.freed != releasing_gpus.milli_gpu || r.promised != pipelined_gpus.milli_gpu)) {
      return at + "freed " + std::to_string(r.freed) + " promised " + std::to_string(r.promised) +
             ", pods release " + std::to_string(releasing_gpus.milli_gpu) + " and were promised " +
             std::to_string(pipelined_gpus.milli_gpu);
    }
  }
  return "";
}

TEST(GpuSharingProperty, NodeAccountingAddsUpAfterEveryOperationAndRollback) {
  const SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  int operations = 0, rollbacks = 0;
  for (uint64_t seed = 1; seed <= kWorlds; ++seed) {
    std::vector<NodeSpec> specs;
    const ClusterState world = RandomWorld(seed, specs);
    Session s(BuildSnapshot(world, kNow), config);
    ASSERT_TRUE(s.OpenPlugins().ok());
    ASSERT_EQ(AccountingBreak(s.snap()), "") << "seed " << seed << " at open";
    std::mt19937_64 rng(seed);
    Statement stmt(s);
    std::vector<size_t> checkpoints;
    for (int step = 0; step < 40; ++step) {
      if (Chance(rng, 0.25)) checkpoints.push_back(stmt.Checkpoint());
      operations += RandomOperation(rng, s, stmt);
      ASSERT_EQ(AccountingBreak(s.snap()), "") << "seed " << seed << " step " << step;
      if (!checkpoints.empty() && Chance(rng, 0.15)) {
        const auto back = static_cast<size_t>(Uniform(rng, 0, int(checkpoints.size()) - 1));
        stmt.Rollback(checkpoints[back]);
        checkpoints.resize(back);
        ++rollbacks;
        ASSERT_EQ(AccountingBreak(s.snap()), "") << "seed " << seed << " rollback at " << step;
      }
    }
  }
  EXPECT_GT(operations, 10 * kWorlds);  // the sweep must act and roll back, or it proves nothing
  EXPECT_GT(rollbacks, kWorlds);
}

TEST(GpuSharingProperty, StatementRollbackRestoresGpuStateExactly) {
  const SchedulerConfig config = ConfigFromShard(std::nullopt).value();
  int rollbacks = 0;
  for (uint64_t seed = 1; seed <= kWorlds; ++seed) {
    std::vector<NodeSpec> specs;
    const ClusterState world = RandomWorld(seed, specs);
    Session s(BuildSnapshot(world, kNow), config);
    ASSERT_TRUE(s.OpenPlugins().ok());
    std::mt19937_64 rng(seed);
    Statement stmt(s);
    std::vector<std::pair<size_t, Placement>> checkpoints;
    for (int step = 0; step < 40; ++step) {
      if (Chance(rng, 0.25)) checkpoints.emplace_back(stmt.Checkpoint(), CapturePlacement(s));
      RandomSharedOperation(rng, s, stmt);
      if (!checkpoints.empty() && Chance(rng, 0.15)) {
        const auto back = static_cast<size_t>(Uniform(rng, 0, int(checkpoints.size()) - 1));
        stmt.Rollback(checkpoints[back].first);
        ASSERT_EQ(FirstDifference(CapturePlacement(s), checkpoints[back].second), "")
            << "seed " << seed << " step " << step << "\n"
            << bench::ToYaml(world);
        checkpoints.resize(back);
        ++rollbacks;
      }
    }
  }
  EXPECT_GT(rollbacks, kWorlds);  // the sweep must roll back, or it proves nothing
}

}  // namespace
}  // namespace kai
