#pragma once
// Scenario generator for benchmarks: builds a kai::ClusterState in code, shaped like the Go test
// harness of KAI (pkg/scheduler/test_utils) builds its sessions, and writes any ClusterState as
// multi-document Kubernetes YAML that `kai simulate -f` loads.
//
// Harness facts reproduced (nodes_fake/nodes.go, jobs_fake/jobs.go, test_utils_builder.go):
//   node allocatable cpu "20000" (cores), memory "20G", pods 110; capacity cpu "30000", memory
//   "30G"; labels nvidia.com/gpu.count, nvidia.com/gpu.memory "100", mig-enabled "false",
//   nvidia.com/mig.strategy "", kai.scheduler/type = node name;
//   pod request cpu "1", memory "1G", nvidia.com/gpu "<g>", pods 1;
//   the i-th of n jobs is created at now - (n - i) minutes (older jobs first);
//   queues: cpu/memory quota -1, limit -1, overQuotaWeight 1; departments get
//   overQuotaWeight = their GPU quota; with no departments every leaf hangs under an implicit
//   `default` queue with gpu quota/limit/overQuotaWeight -1.
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/time.h"

namespace kai::bench {

// One queue. GPU amounts in devices (may be fractional); -1 = unlimited / no quota.
struct QueueSpec {
  std::string name;
  std::string parent;  // empty: a top-level queue
  double gpu_quota = -1;
  double gpu_limit = -1;
  double gpu_weight = 1;  // overQuotaWeight; -1 as the harness' implicit `default` queue
};

// One level of a generated Topology: every domain of the level above splits into `count` domains
// whose label values are <short_name><i> (i from 1), as KAI's scale test names them.
struct TopologyLevelShape {
  std::string label, short_name;
  int count = 1;
};

// One group of jobs (PodGroups with minMember = pods_per_job, each pod asking gpus_per_pod GPUs),
// named <prefix><i>, i from 0. `queues` receive the jobs round-robin (empty: every leaf queue of
// the shape, in listed order). Running jobs: pod p of job i runs on node (i * pods_per_job + p) %
// nodes (kEven: only the even-numbered jobs run, KAI's "half running, half pending").
struct JobGroup {
  enum class Run { kNone, kAll, kEven };
  std::string prefix = "job-";
  std::string name;  // the name of a single job (jobs == 1); empty: <prefix><i>
  int jobs = 0;
  int pods_per_job = 1;
  int gpus_per_pod = 1;
  std::vector<std::string> queues;
  std::string priority_class = "train";
  int priority = 50;
  Run run = Run::kNone;
};

struct ClusterShape {
  // Nodes, named <node_prefix><i>.
  int nodes = 100;
  std::string node_prefix = "node-";
  int gpus_per_node = 8;
  std::string node_cpu = "20000";  // allocatable, Kubernetes quantities (literal cores)
  std::string node_memory = "20G";
  int node_pods = 110;
  std::string node_cpu_capacity = "30000";
  std::string node_memory_capacity = "30G";
  int gpu_memory_mib = 100;  // nvidia.com/gpu.memory label

  // Jobs: `jobs` PodGroups with minMember = pods_per_job, each pod asking `gpus_per_pod` GPUs,
  // pending, round-robin over the leaf queues. Used when `job_groups` is empty; otherwise the
  // groups are generated in order, and the i-th of all n jobs is created at now - (n - i) minutes
  // as the harness does (earlier groups are older).
  std::vector<JobGroup> job_groups;
  int jobs = 500;
  int pods_per_job = 1;
  int gpus_per_pod = 1;
  std::string pod_cpu = "1";
  std::string pod_memory = "1G";
  std::string priority_class = "train";
  int priority = 50;

  // Topology "topology" over the nodes, levels coarsest first; the nodes fill the finest domains
  // in order, nodes_per_leaf each. Empty: no Topology. Every PodGroup gets a topologyConstraint
  // naming the levels below that are set.
  std::vector<TopologyLevelShape> topology_levels;
  int nodes_per_leaf = 1;
  std::string job_required_level, job_preferred_level;

  // Queue tree; leaves receive jobs round-robin (job i -> leaf i % leaves), in listed order.
  std::vector<QueueSpec> queues;

  UnixSeconds now = 1735732800;  // 2025-01-01T12:00:00Z
};

// Leaf queues queue-0..queue-(n-1) under the harness' implicit `default` top queue
// (gpu quota -1, limit -1, overQuotaWeight -1).
std::vector<QueueSpec> QueuesUnderDefault(int leaves, double gpu_quota, double gpu_limit,
                                          double gpu_weight);

// KAI's createBenchmarkTopology (pkg/scheduler/actions/benchmark_test.go): nodes x 8 GPUs,
// `jobs` pending one-pod one-GPU jobs of priority train (50), round-robin over queue-0..3;
// queue-0/1 under dept-a, queue-2/3 under dept-b; each queue deserves a quarter of the GPUs
// (overQuotaWeight 1, no limit); each department deserves half (overQuotaWeight = that half).
ClusterShape KaiAllocateShape(int nodes, int jobs);

// The other shapes of KAI's benchmark_test.go, with KAI's queues as in KaiAllocateShape:
// createBenchmarkTopologyWithRunningJobs: every job running, job i on node i % nodes;
ClusterShape KaiRunningShape(int nodes, int jobs);
// createBenchmarkTopologyWithMixedJobs: the even-numbered jobs running (on node i % nodes), the
// odd ones pending;
ClusterShape KaiMixedShape(int nodes, int jobs);
// createBenchmarkTopologyWithManyQueues: `queues` leaves queue-i under dept-(i % d),
// d = ceil(queues / 4); each leaf deserves gpus / queues (overQuotaWeight 1), each department
// gpus / d (overQuotaWeight = that);
ClusterShape KaiManyQueuesShape(int nodes, int jobs, int queues);
// createBenchmarkTopologyWithGangJobs: pending jobs of `tasks` one-GPU pods (minMember = tasks).
ClusterShape KaiGangShape(int nodes, int jobs, int tasks);

// KAI's reclaim benchmarks (pkg/scheduler/actions/integration_tests/reclaim/
// reclaim_large_job_topology_test.go, reclaim_many_single_gpu_topology_test.go,
// pkg/scheduler/actions/reclaim/reclaim_benchmark_test.go). Nodes `node<i>` x 8 GPUs, both
// queues under the harness' implicit `default`, overQuotaWeight 0, priority train:
// ReclaimLargeJobs: nodes * 8 running one-GPU jobs `running-job-<i>` of queue-0 (deserved 0), job i
// on node i % nodes; a pending gang `very-large-job` of nodes / 2 pods x 8 GPUs in queue-1
// (deserved nodes * 8).
ClusterShape KaiReclaimLargeJobsShape(int nodes);
// ReclaimUnschedulableDistributedJob: the same running jobs with queue-0 deserving
// nodes * 8 - 80 + 1, and a pending gang `unschedulable-distributed-job` of 10 pods x 8 GPUs in
// queue-1 (deserved 80): reclaiming 80 GPUs would take queue-0 below its deserved quota.
ClusterShape KaiReclaimUnschedulableShape(int nodes);
// ReclaimManySingleGPUJobs: nodes * 8 running one-GPU jobs `many-single-gpu-running-job-<i>` of
// many-single-gpu-running-queue (deserved 0), and as many pending one-GPU jobs
// `many-single-gpu-pending-job-<i>` of many-single-gpu-pending-queue (deserved nodes * 8).
ClusterShape KaiReclaimManySingleGPUShape(int nodes);

// KAI's topology scale test (test/e2e/scale, "Allocate with preferred topology": 48.7 s end to
// end): 512 nodes x 8 GPUs as 4 zones x 8 blocks x 8 racks x 2 nodes, one gang of 512 pods x
// 2 GPUs (no CPU or memory request) with preferred level rack (`preferred_level`, "" for none).
ClusterShape KaiTopologyShape(const std::string& preferred_level);

// The 10,000-pod world of `kai explain` (bench/explain_bench.cc): 1,000 nodes x 8 GPUs;
// `per_node` x 1,000 running one-GPU jobs `run-<i>`, `per_node` on each node, in queue-0..3
// (GPU quota and limit: what each runs); pending one-GPU jobs `wait-<i>` of those queues up to
// 10,000 pods in all; `frag-gang` (4 pods x 2 GPUs) in queue `team` (GPU quota `team_quota`, no
// limit); `limit-gang` (8 pods x 1 GPU) in queue `capped` (GPU limit 4) when `with_limit_gang`.
// The running jobs are of priority class build (100, non-preemptible) or, when `preemptible`,
// train (50).
ClusterShape ExplainWorldShape(int per_node, bool preemptible, double team_quota,
                               bool with_limit_gang);

// Builds the cluster. Every object has meta.kind, meta.uid (= name) and, when namespaced,
// meta.ns "default".
ClusterState Generate(const ClusterShape& shape);

// Multi-document YAML (FORMAT.md §2): PriorityClasses, Nodes, Queues, PodGroups, Pods,
// BindRequests. Covers the fields the generator fills plus taints, node selectors, tolerations,
// node names, phases and deletion timestamps; affinity, sub-groups and GPU-sharing annotations are
// written only as the annotations/labels they came from.
std::string ToYaml(const ClusterState& state);

// The same GPUs and requests through Dynamic Resource Allocation: each node's GPUs become the
// devices of one ResourceSlice (driver gpu.nvidia.com, the node's nvidia.com/gpu set to 0), each
// GPU pod asks for its GPUs through its own ResourceClaim (generated from a template) of the
// DeviceClass gpu.nvidia.com.
void MoveGpusToDra(ClusterState& world);

// NUMA zones for every node: a NodeResourceTopology of `zones` equal zones (single-numa-node, pod
// scope) splitting the node's CPUs, memory and GPUs, and every pod Guaranteed, asking its GPUs
// and whole CPUs aligned (the numa plugin's input; enable the plugin to use it).
void AddNumaZones(ClusterState& world, int zones);

}  // namespace kai::bench
