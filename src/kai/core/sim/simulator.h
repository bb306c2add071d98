#pragma once
// The embedded cluster behind `kai simulate`: runs scheduling cycles on a world of Kubernetes
// objects and moves the world on between cycles the way KAI's integration harness does
// (../shared/scenarios/FORMAT.md §4): Binding pods start Running on their node, Releasing pods are
// deleted and recreated Pending by their owner (unless their PodGroup is in `no_recreate`), and
// Pipelined pods are Pending again. Unlike KAI, a pending pod that ends a cycle Pipelined keeps its
// node as status.nominatedNodeName for the next cycle, where allocate serves it first (see
// docs/deviations.md); a moved pod is recreated without one.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/framework/reasons.h"
#include "kai/core/framework/session.h"
#include "kai/core/model/cluster.h"
#include "kai/core/snapshot/cache.h"
#include "kai/core/snapshot/gpu_accounting.h"
#include "kai/core/usage/usage_store.h"

namespace kai::sim {

struct PodReport {
  std::string ns, name, pod_group, queue, status, node;
  std::vector<std::string> gpu_groups;
  std::vector<std::string> numa_zones;  // the NUMA zones it holds or is predicted (snapshot/numa.h)
  std::vector<Reason> reasons;
  std::string eviction;  // why the pod was evicted this cycle (action, beneficiary, rule)
  EvictionVerdict eviction_verdict;
  std::string preemptor;  // the verdict's job as namespace/name ("" when none)
};

struct NodeReport {
  std::string name;
  int64_t idle_milli_gpus = 0;
  int64_t releasing_milli_gpus = 0;  // KAI's figure (ReleasingGpus::kai)
  ReleasingGpus releasing;           // what it is made of
};

struct QueueReport {
  std::string name, parent;
  Resources allocated, fair_share, requested;
  QueueQuota gpu, cpu, memory;
  int priority = 0;
};

struct CycleReport {
  int cycle = 0;
  SessionCounters counts;
  // Pending jobs the actions decided, and those they did not decide again (kept from the last
  // cycle, shared by a job of the same shape), summed over the actions.
  int64_t jobs_tried = 0, jobs_kept = 0, jobs_shared = 0;
  std::vector<PodReport> pods;
  std::vector<NodeReport> nodes;
  std::vector<QueueReport> queues;
};

struct SimulateOptions {
  UnixSeconds now = 0;
  int cycles = 1;
  std::set<std::string> no_recreate;         // PodGroup names whose evicted pods stay Releasing
  const usage::UsageStore* usage = nullptr;  // time-based fair share history, optional
  // Every queue's usage, already computed (kai whatif); used instead of `usage` when set.
  const std::map<std::string, usage::QueueUsage>* queue_usage = nullptr;
  // Report only the pods the cycle changed (and the queues, no nodes): what kai whatif reads,
  // without the cost of reporting every pod and node each cycle.
  bool report_changed_pods_only = false;
  Session::MonotonicClock monotonic_millis;  // the sessions' search clock (default: steady)
  // Checks every cycle that the incremental snapshot equals a full build (an error if not).
  bool verify_snapshot_cache = false;
  // Runs every cycle a second time with every pending job decided (SchedulerConfig::keep_verdicts
  // off) and fails on the first decision or reason that differs (framework/verdict_memo.h).
  bool verify_kept_verdicts = false;
};

// What carries from one cycle to the next: the snapshot, kept up to date incrementally, and what
// the world changed since the last cycle.
struct CycleCache {
  SnapshotCache cache;
  ClusterChanges changes;
  CycleVerdicts verdicts;       // the last cycle's verdicts on its pending jobs
  bool record_verdicts = true;  // a next cycle will read this cycle's (kai simulate's last: none)
};

// What RunSession carries between cycles (framework/verdict_memo.h): the last cycle's record,
// whether the cluster changed since, and where this cycle's record goes (null: none).
struct VerdictCarry {
  CycleVerdicts* previous = nullptr;  // Finish may take from it
  bool world_unchanged = false;
  CycleVerdicts* next = nullptr;
};

// The first difference between two closed sessions' decisions (every pod's status, node, GPU
// groups and eviction, every job's reasons and timers), as a line naming the pod or job; "" when
// they decided alike.
std::string DecisionDifference(const Session& want, const Session& got);

// Snapshot of `world` at `now`, with queue usage from the store when there is one.
Snapshot BuildSimSnapshot(const ClusterState& world, const SimulateOptions& options);

// Sets every queue's usage: its own record, or for a parent without one the sum of its children's
// (kai scheduler feeds its recorded history through this).
void ApplyQueueUsage(Snapshot& snap, const std::map<std::string, usage::QueueUsage>& usage);

// Runs the named actions on `session`, whose plugins and verdict memo are open: each started on
// the session, replayed from the memo where it replays the last cycle's, else executed; then the
// last action finished. The error names an unknown action.
Status RunActions(Session& session, const std::vector<std::string>& names);

// Opens the plugins, runs the configured actions on `snap` and closes the session, which then
// holds the cycle's outcome. Errors come from plugin configuration and unknown actions.
// `metrics_clock`, when given, times the session's measurements (framework/session_metrics.h).
Result<std::unique_ptr<Session>> RunSession(Snapshot snap, const SchedulerConfig& config,
                                            const Session::MonotonicClock& clock,
                                            const Session::MonotonicClock& metrics_clock = {},
                                            VerdictCarry carry = {});

// The report of a closed session: every pod, node and queue as the cycle left them.
CycleReport ReportCycle(const Session& s, int cycle);

// Runs one cycle on `world` and advances it. With `cycles`, the snapshot comes from its cache
// (updated from the previous cycle's); without, it is built in full. Errors come from plugin
// configuration (and a failed snapshot check).
Result<CycleReport> RunCycle(ClusterState& world, const SchedulerConfig& config,
                             const SimulateOptions& options, int cycle,
                             CycleCache* cycles = nullptr);

Result<std::vector<CycleReport>> Simulate(ClusterState world, const SchedulerConfig& config,
                                          const SimulateOptions& options);

}  // namespace kai::sim
