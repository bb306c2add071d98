// Random `kai simulate` worlds for before/after decision comparisons (scripts/compare_decisions.sh
// builds and runs this): larger and more mixed than the property tests' worlds, so that placement
// meets many alike tasks, binpack and spread ranges, GPU sharing, releasing pods, nominated
// nodes and node selectors.
//
//   decision_worlds <out dir> <count> [first seed]
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "generator.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/typed_labels.h"

namespace kai::bench {
namespace {

int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool Chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

ShardObject RandomShard(std::mt19937_64& rng) {
  ShardObject shard;
  shard.meta.kind = "SchedulingShard";
  shard.meta.name = shard.meta.uid = "default";
  shard.placement_gpu = Chance(rng, 0.7) ? "binpack" : "spread";
  shard.placement_cpu = Chance(rng, 0.7) ? "binpack" : "spread";
  return shard;
}

void Mutate(std::mt19937_64& rng, ClusterState& st, UnixSeconds now) {
  std::vector<int64_t> free_gpu;
  for (NodeObject& n : st.nodes) {
    const int gpus = Chance(rng, 0.15) ? 0 : Uniform(rng, 1, 8);
    n.allocatable.milli_gpu = int64_t{gpus} * kMilliPerUnit;
    n.capacity.milli_gpu = n.allocatable.milli_gpu;
    n.meta.labels[std::string(keys::kNodeGpuCount)] = std::to_string(gpus);
    ReadTypedLabels(n);
    n.allocatable.milli_cpu = int64_t{Uniform(rng, 4, 40)} * kMilliPerUnit;
    free_gpu.push_back(n.allocatable.milli_gpu);
  }
  const int nodes = static_cast<int>(st.nodes.size());
  for (PodObject& p : st.pods) {
    const int kind = Uniform(rng, 0, 9);
    if (kind == 0) {
      p.request.milli_gpu = 0;  // CPU only
    } else if (kind <= 2) {
      p.request.milli_gpu = 0;
      p.gpu_sharing.fraction_milli = Uniform(rng, 1, 3) * 250;
    } else if (kind == 3) {
      p.request.milli_gpu = 0;
      p.gpu_sharing.memory_mib = Uniform(rng, 1, 4) * 20;
    } else {
      p.request.milli_gpu = int64_t{Uniform(rng, 1, 4)} * kMilliPerUnit;
    }
    p.request.milli_cpu = int64_t{Uniform(rng, 1, 4)} * kMilliPerUnit / 2;
    if (Chance(rng, 0.05)) p.nominated_node = "node-" + std::to_string(Uniform(rng, 0, nodes - 1));
    if (Chance(rng, 0.05)) {
      p.node_selector = {
          {"kai.scheduler/type", "node-" + std::to_string(Uniform(rng, 0, nodes - 1))}};
    }
  }
  // About a third of the jobs run (all their pods), where whole-GPU pods fit by GPU count.
  for (PodGroupObject& pg : st.pod_groups) {
    if (!Chance(rng, 0.35)) continue;
    bool releasing = Chance(rng, 0.15);
    for (PodObject& p : st.pods) {
      if (p.pod_group != pg.meta.name) continue;
      const int n = Uniform(rng, 0, nodes - 1);
      const int64_t need = p.gpu_sharing.fraction_milli || p.gpu_sharing.memory_mib
                               ? kMilliPerUnit
                               : p.request.milli_gpu;
      if (need > free_gpu[n]) continue;
      free_gpu[n] -= need;
      p.phase = "Running";
      p.node_name = st.nodes[n].meta.name;
      if (releasing) p.meta.deletion = now - 10;
    }
    pg.last_start = now - 600;
  }
}

ClusterState RandomWorld(uint64_t seed) {
  std::mt19937_64 rng(seed);
  ClusterShape shape;
  shape.nodes = Uniform(rng, 3, 60);
  shape.jobs = Uniform(rng, 5, 150);
  shape.pods_per_job = Chance(rng, 0.6) ? 1 : Uniform(rng, 2, 4);
  const int leaves = Uniform(rng, 1, 4);
  shape.queues = QueuesUnderDefault(leaves, Chance(rng, 0.5) ? -1 : Uniform(rng, 0, shape.nodes),
                                    -1, Uniform(rng, 0, 2));
  ClusterState st = Generate(shape);
  Mutate(rng, st, shape.now);
  st.shard = RandomShard(rng);
  return st;
}

}  // namespace
}  // namespace kai::bench

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <out dir> <count> [first seed]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int count = std::stoi(argv[2]);
  const uint64_t first = argc > 3 ? std::stoull(argv[3]) : 1;
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = first + static_cast<uint64_t>(i);
    std::ofstream(dir + "/world-" + std::to_string(seed) + ".yaml")
        << kai::bench::ToYaml(kai::bench::RandomWorld(seed));
  }
  return 0;
}
