#pragma once
// KAI issue #315's production cluster, built in code (header-only: CMake compiles only
// bench/*_bench.cc and bench/generator.cc into kai_bench, so helpers shared by several bench files
// live here as inline functions).
//
// Issue #315 (kai-scheduler/KAI-Scheduler): "4000+ nodes (including 100+ GPU nodes), 140000+
// pods (including 500+ GPU pods)"; the GPU pods were switched to KAI, and a pending Deployment of
// 6 (or 20) replicas x 4 GPUs was added; KAI's snapshot took 2.2 s and its actions 176-290 ms.
//
// The shape (ProductionShape defaults; every figure below scales with the fields):
//   nodes        `gpu_nodes` GPU nodes gpu-node-i (8 GPUs, 128 cores, 2Ti, 110 pods) and
//                nodes - gpu_nodes CPU-only nodes cpu-node-i (128 cores, 512Gi, 110 pods), each
//                with 6 (CPU) or 11 (GPU) production-like labels (hostname, os, arch, instance
//                type, zone, region; GPU count/memory/product, MIG strategy and mig-enabled).
//   queues       20 leaf queues queue-0..19 under the harness' implicit `default` (generator's
//                QueuesUnderDefault): each deserves 1/20 of the GPUs, overQuotaWeight 1.
//   priority     train (50, preemptible), inference (125, non-preemptible).
//   pods         one DaemonSet pod per node (default-scheduler, no PodGroup: foreign load);
//                one-GPU KAI pods (single-pod train jobs, 8 cores, 64Gi): 8 on each of the first
//                `full_gpu_nodes` GPU nodes, `gpus_per_node` / 2 on the other GPU nodes, all in
//                queues 0..9 (far over their quota of 1/20 of the GPUs); the rest are CPU pods of
//                KAI jobs (500m, 1Gi) spread round-robin over the CPU nodes, in jobs of 1, 1, 1,
//                4 pods (repeating; the single-pod ones are inference Deployments, the 4-pod
//                ones train jobs), job j in queue j % 20, namespace team-<queue>; every 20th CPU
//                job has Succeeded (its pods keep their node but hold nothing).
//   pending      issue #315's case 1, a Deployment of 6 replicas x 4 GPUs (six single-pod train
//                PodGroups in queue-10), and two train gangs: 2 pods x 8 GPUs (queue-11), 4 x 4
//                (queue-12). Only 4 GPUs are free on each half-full GPU node, so 4 replicas can
//                be allocated and the rest has to be reclaimed from queues 0..9 (the GPU demand,
//                840, exceeds the 800 GPUs: queues 0..9 sit above their fair share).
// Every running pod fits its node. Pods are created in this order: DaemonSet, GPU, CPU, pending;
// PodGroups: GPU jobs, CPU jobs, pending gangs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "generator.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/typed_labels.h"
#include "kai/core/model/cluster.h"

namespace kai::bench {

struct ProductionShape {
  int nodes = 4000;
  int gpu_nodes = 100;
  int gpus_per_node = 8;
  int pods = 140000;  // all pods, DaemonSet and pending ones included
  int queues = 20;
  int full_gpu_nodes = 96;   // GPU nodes running `gpus_per_node` one-GPU pods; the others half
  int succeeded_every = 20;  // every n-th CPU job has Succeeded (0: none)
  UnixSeconds now = 1735732800;
};

namespace production_detail {

struct PendingGang {
  const char* name;
  int queue, pods, gpus;
};
inline constexpr PendingGang kPendingGangs[] = {
    {"deploy-4gpu-0", 10, 1, 4}, {"deploy-4gpu-1", 10, 1, 4}, {"deploy-4gpu-2", 10, 1, 4},
    {"deploy-4gpu-3", 10, 1, 4}, {"deploy-4gpu-4", 10, 1, 4}, {"deploy-4gpu-5", 10, 1, 4},
    {"gang-2x8", 11, 2, 8},      {"gang-4x4", 12, 4, 4}};
inline constexpr int kCpuJobSizes[] = {1, 1, 1, 4};

inline int PendingPods() {
  int n = 0;
  for (const auto& g : kPendingGangs) n += g.pods;
  return n;
}
inline int GpuRunningPods(const ProductionShape& s) {
  return s.full_gpu_nodes * s.gpus_per_node +
         (s.gpu_nodes - s.full_gpu_nodes) * (s.gpus_per_node / 2);
}
// The GPU node of the j-th running GPU pod.
inline int GpuNodeOf(const ProductionShape& s, int j) {
  const int full = s.full_gpu_nodes * s.gpus_per_node;
  return j < full ? j / s.gpus_per_node : s.full_gpu_nodes + (j - full) / (s.gpus_per_node / 2);
}
inline int CpuPods(const ProductionShape& s) {
  return std::max(0, s.pods - s.nodes - GpuRunningPods(s) - PendingPods());
}
inline int CpuJobs(const ProductionShape& s) {
  int pods = CpuPods(s), jobs = 0;
  for (int j = 0; pods > 0; ++j, ++jobs) pods -= kCpuJobSizes[j % 4];
  return jobs;
}
inline int CpuJobSize(const ProductionShape& s, int j, int first_pod) {
  return std::min(kCpuJobSizes[j % 4], CpuPods(s) - first_pod);
}
inline bool CpuJobSucceeded(const ProductionShape& s, int j) {
  return s.succeeded_every > 0 && j % s.succeeded_every == s.succeeded_every - 1;
}
inline std::string QueueName(int q) { return "queue-" + std::to_string(q); }
inline std::string TeamNs(int q) { return "team-" + std::to_string(q); }
inline std::string GpuNodeName(int i) { return "gpu-node-" + std::to_string(i); }
inline std::string CpuNodeName(int i) { return "cpu-node-" + std::to_string(i); }

inline ObjectMeta Meta(const char* kind, std::string name, std::string ns, UnixSeconds created) {
  ObjectMeta m;
  m.kind = kind;
  m.uid = name;
  m.name = std::move(name);
  m.ns = std::move(ns);
  m.creation = created;
  m.source = "production";
  return m;
}

inline Resources Res(int64_t milli_cpu, int64_t memory, int64_t gpus, int64_t pods) {
  Resources r;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  r.milli_gpu = gpus * kMilliPerUnit;
  r.pods = pods;
  return r;
}

inline constexpr int64_t kGi = int64_t{1} << 30;

inline PodGroupObject MakePodGroup(std::string name, int queue, const char* priority_class,
                                   int min_member, UnixSeconds created, bool started,
                                   UnixSeconds now) {
  PodGroupObject pg;
  pg.meta = Meta("PodGroup", std::move(name), TeamNs(queue), created);
  pg.meta.labels = {{std::string(keys::kQueueLabel), QueueName(queue)}};
  pg.queue = QueueName(queue);
  pg.priority_class_name = priority_class;
  pg.min_member = min_member;
  if (started) pg.last_start = now - 60;
  return pg;
}

inline PodObject MakeKaiPod(const std::string& job, int index, int queue, UnixSeconds created,
                            const Resources& request) {
  PodObject p;
  p.meta = Meta("Pod", job + "-" + std::to_string(index), TeamNs(queue), created);
  p.meta.labels = {{std::string(keys::kQueueLabel), QueueName(queue)},
                   {"app", job},
                   {"pod-template-hash", "7d4b9c8f5"}};
  p.meta.annotations = {{std::string(keys::kPodGroupAnnotation), job}};
  p.scheduler_name = std::string(keys::kSchedulerName);
  p.request = request;
  p.pod_group = job;
  return p;
}

}  // namespace production_detail

// Queues and priority classes (through the generator), no nodes, pods or PodGroups.
inline ClusterState ProductionBase(const ProductionShape& s) {
  ClusterShape base;
  base.nodes = 0;
  base.jobs = 0;
  const double gpus = static_cast<double>(s.gpu_nodes) * s.gpus_per_node;
  base.queues = QueuesUnderDefault(s.queues, gpus / s.queues, -1, 1);
  base.now = s.now;
  ClusterState st = Generate(base);  // priority class `train` (50) and the queues
  PriorityClassObject inference;
  inference.meta.kind = "PriorityClass";
  inference.meta.name = inference.meta.uid = "inference";
  inference.value = 125;
  st.priority_classes.push_back(std::move(inference));
  return st;
}

inline void AddProductionNodes(ClusterState& st, const ProductionShape& s) {
  using namespace production_detail;
  st.nodes.reserve(st.nodes.size() + s.nodes);
  for (int i = 0; i < s.nodes; ++i) {
    const bool gpu = i < s.gpu_nodes;
    NodeObject n;
    n.meta =
        Meta("Node", gpu ? GpuNodeName(i) : CpuNodeName(i - s.gpu_nodes), "", s.now - 86400 * 30);
    n.meta.labels = {
        {"kubernetes.io/hostname", n.meta.name},
        {"kubernetes.io/os", "linux"},
        {"kubernetes.io/arch", "amd64"},
        {"node.kubernetes.io/instance-type", gpu ? "p5.48xlarge" : "m7i.32xlarge"},
        {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)},
        {"topology.kubernetes.io/region", "region-1"},
    };
    if (gpu) {
      n.meta.labels.emplace(std::string(keys::kNodeGpuCount), std::to_string(s.gpus_per_node));
      n.meta.labels.emplace(std::string(keys::kNodeGpuMemory), "81559");
      n.meta.labels.emplace("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
      n.meta.labels.emplace("nvidia.com/mig.strategy", "single");
      n.meta.labels.emplace("node-role.kubernetes.io/mig-enabled", "false");
      n.allocatable = Res(128'000, 2048 * kGi, s.gpus_per_node, 110);
    } else {
      n.allocatable = Res(128'000, 512 * kGi, 0, 110);
    }
    n.capacity = n.allocatable;
    ReadTypedLabels(n);
    st.nodes.push_back(std::move(n));
  }
}

inline void AddProductionPodGroups(ClusterState& st, const ProductionShape& s) {
  using namespace production_detail;
  const int gpu_jobs = GpuRunningPods(s), cpu_jobs = CpuJobs(s);
  const int total = gpu_jobs + cpu_jobs;
  st.pod_groups.reserve(st.pod_groups.size() + total + std::size(kPendingGangs));
  for (int j = 0; j < gpu_jobs; ++j) {
    st.pod_groups.push_back(MakePodGroup("gpu-job-" + std::to_string(j), j % (s.queues / 2),
                                         "train", 1, s.now - (total - j) * 10, true, s.now));
  }
  for (int j = 0, first = 0; j < cpu_jobs; ++j) {
    const int size = CpuJobSize(s, j, first);
    first += size;
    st.pod_groups.push_back(MakePodGroup("cpu-job-" + std::to_string(j), j % s.queues,
                                         size == 1 ? "inference" : "train", size,
                                         s.now - (cpu_jobs - j) * 10, true, s.now));
  }
  for (const PendingGang& g : kPendingGangs) {
    st.pod_groups.push_back(MakePodGroup(g.name, g.queue, "train", g.pods, s.now - 60, false, 0));
  }
}

inline void AddProductionPods(ClusterState& st, const ProductionShape& s) {
  using namespace production_detail;
  const int cpu_nodes = s.nodes - s.gpu_nodes;
  st.pods.reserve(st.pods.size() + s.pods);
  // DaemonSet pods: one per node, another scheduler's.
  for (int i = 0; i < s.nodes; ++i) {
    const std::string& node = st.nodes[i].meta.name;
    PodObject p;
    p.meta = Meta("Pod", "node-exporter-" + std::to_string(i), "monitoring", s.now - 86400);
    p.meta.labels = {{"app", "node-exporter"}, {"controller-revision-hash", "5f6c8b7d9"}};
    p.scheduler_name = "default-scheduler";
    p.node_name = node;
    p.phase = "Running";
    p.request = Res(100, kGi / 8, 0, 1);
    st.pods.push_back(std::move(p));
  }
  // Running one-GPU pods.
  const int gpu_jobs = GpuRunningPods(s), cpu_jobs = CpuJobs(s);
  const int total = gpu_jobs + cpu_jobs;
  for (int j = 0; j < gpu_jobs; ++j) {
    PodObject p = MakeKaiPod("gpu-job-" + std::to_string(j), 0, j % (s.queues / 2),
                             s.now - (total - j) * 10, Res(8'000, 64 * kGi, 1, 1));
    p.node_name = GpuNodeName(GpuNodeOf(s, j));
    p.phase = "Running";
    st.pods.push_back(std::move(p));
  }
  // CPU pods, round-robin over the CPU nodes.
  int c = 0;
  for (int j = 0; j < cpu_jobs; ++j) {
    const int size = CpuJobSize(s, j, c);
    const std::string job = "cpu-job-" + std::to_string(j);
    const bool done = CpuJobSucceeded(s, j);
    for (int i = 0; i < size; ++i, ++c) {
      PodObject p =
          MakeKaiPod(job, i, j % s.queues, s.now - (cpu_jobs - j) * 10, Res(500, kGi, 0, 1));
      p.node_name = CpuNodeName(c % cpu_nodes);
      p.phase = done ? "Succeeded" : "Running";
      st.pods.push_back(std::move(p));
    }
  }
  // Pending GPU gangs.
  for (const PendingGang& g : kPendingGangs) {
    for (int i = 0; i < g.pods; ++i) {
      st.pods.push_back(MakeKaiPod(g.name, i, g.queue, s.now - 60,
                                   Res(g.gpus * 12'000, g.gpus * 128 * kGi, g.gpus, 1)));
    }
  }
}

inline ClusterState BuildProduction(const ProductionShape& s) {
  ClusterState st = ProductionBase(s);
  AddProductionNodes(st, s);
  AddProductionPodGroups(st, s);
  AddProductionPods(st, s);
  return st;
}

// Indices (into st.pods) of the first `count` Running CPU pods taken at an even stride: the pods
// the churn benchmarks flip between Running and Succeeded.
inline std::vector<size_t> ChurnPods(const ClusterState& st, const ProductionShape& s, int count) {
  using namespace production_detail;
  const size_t first = static_cast<size_t>(s.nodes + GpuRunningPods(s));
  const size_t n = static_cast<size_t>(CpuPods(s));
  std::vector<size_t> out;
  if (count <= 0 || n == 0) return out;
  const size_t stride = std::max<size_t>(1, n / static_cast<size_t>(count));
  for (size_t i = first; i < first + n && static_cast<int>(out.size()) < count; i += stride) {
    size_t k = i;
    while (k < first + n && st.pods[k].phase != "Running") ++k;
    if (k < first + n) out.push_back(k);
  }
  return out;
}

}  // namespace kai::bench
