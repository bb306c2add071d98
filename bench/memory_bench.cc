// Memory per object of the object model (ClusterState) and of the per-cycle Snapshot, on the
// production shape of bench/production_shape.h at two sizes:
//   BM_MemoryClusterState/1000/90000, /4000/140000   (nodes / pods)
//   BM_MemorySnapshot/1000/90000,     /4000/140000
// KAI's sizing model: ~17 KB per pod, 21 KB per node, 11 KB per PodGroup. Targets: < 1 KB per
// pod, < 2 KB per node.
//
// Three measures, as benchmark counters (bytes per object):
//   heap_*      live heap bytes (glibc mallinfo2: uordblks + hblkhd) before/after, exact
//               (malloc's chunk overhead included). The ClusterState is built in phases (nodes,
//               then PodGroups, then pods, each vector reserved up front), so each kind's bytes
//               are measured on their own; the snapshot is built in one call, so its total is
//               divided by pods (all-in, like KAI's per-pod figure) and split per kind by:
//   calc_*      analytic count: sizeof of the element plus the heap blocks it owns (strings past
//               the 15-byte SSO, map/vector nodes, hash-map entries), each rounded up to a glibc
//               chunk, plus its share of its vector's unused capacity. calc_vs_heap (analytic
//               total / measured heap) shows how complete the count is.
//   rss_*       resident set growth from /proc/self/statm (after malloc_trim), page-granular and
//               noisy at small sizes; reported for completeness.
// Each benchmark runs one iteration (the build is what is measured, not timed).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "kai/core/framework/config.h"
#include "kai/core/framework/session.h"
#include "kai/core/snapshot/snapshot.h"
#include "production_shape.h"

namespace kai::bench {
namespace {

struct Mem {
  double heap = 0;  // live heap bytes
  double rss = 0;   // resident bytes
};

Mem Measure() {
  malloc_trim(0);
  Mem m;
  const struct mallinfo2 mi = mallinfo2();
  m.heap = static_cast<double>(mi.uordblks + mi.hblkhd);
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.rss = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return m;
}

// ---- analytic count --------------------------------------------------------------------------
// A glibc chunk for an n-byte request (64-bit): 8 bytes of header, 16-byte alignment, 32 minimum.
size_t Chunk(size_t n) { return n == 0 ? 0 : std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }
size_t Heap(const std::string& s) { return s.capacity() > 15 ? Chunk(s.capacity() + 1) : 0; }
template <class T>
size_t VecBlock(const std::vector<T>& v) {
  return Chunk(v.capacity() * sizeof(T));
}
size_t Heap(const std::vector<std::string>& v) {
  size_t n = VecBlock(v);
  for (const auto& s : v) n += Heap(s);
  return n;
}
// A CompactVector owns nothing while empty, else a heap std::vector (header and element block).
template <class T>
size_t VecBlock(const CompactVector<T>& v) {
  return v.empty() ? 0 : Chunk(sizeof(std::vector<T>)) + VecBlock(v.vec());
}
size_t Heap(const CompactVector<std::string>& v) {
  size_t n = VecBlock(v);
  for (const auto& s : v) n += Heap(s);
  return n;
}
// InternedStrings own nothing: their text is in the process-wide pool, counted by PoolBytes.
size_t Heap(const InternedString&) { return 0; }
size_t Heap(const Labels& m) {
  // One block of sorted entries (keys interned), plus the values past SSO.
  size_t n = Chunk(m.BlockBytes());
  for (const auto& [k, v] : m) n += Heap(v);
  return n;
}
// Growth of the string pool: an unordered_set node (next pointer, the string, cached hash) and a
// bucket pointer each; pooled strings past SSO (a few dozen label keys) are not counted.
double PoolBytes(size_t added) {
  return static_cast<double>(added * (Chunk(8 + sizeof(std::string) + 8) + 8));
}
size_t Heap(const Resources& r) { return VecBlock(r.scalars); }
size_t Heap(const ObjectMeta& m) {
  return Heap(m.kind) + Heap(m.name) + Heap(m.ns) + Heap(m.uid) + Heap(m.labels) +
         Heap(m.annotations) + Heap(m.source);
}
size_t Heap(const std::vector<SelectorRequirement>& v) {
  size_t n = VecBlock(v);
  for (const auto& r : v) n += Heap(r.key) + Heap(r.op) + Heap(r.values);
  return n;
}
size_t Bytes(const NodeObject& o) {
  size_t n = sizeof(o) + Heap(o.meta) + Heap(o.allocatable) + Heap(o.capacity) +
             VecBlock(o.taints) + Heap(o.bad_conditions);
  for (const auto& t : o.taints) n += Heap(t.key) + Heap(t.value) + Heap(t.effect);
  return n;
}
size_t Bytes(const PodObject& o) {
  size_t n = sizeof(o) + Heap(o.meta) + Heap(o.scheduler_name) + Heap(o.node_name) + Heap(o.phase) +
             Heap(o.priority_class_name) + Heap(o.request) + Heap(o.node_selector) +
             VecBlock(o.required_node_affinity) + VecBlock(o.tolerations) +
             VecBlock(o.required_pod_affinity) + VecBlock(o.required_pod_anti_affinity) +
             VecBlock(o.preferred_pod_affinity) + VecBlock(o.preferred_pod_anti_affinity) +
             Heap(o.nominated_node) + Heap(o.gpu_groups) + Heap(o.pod_group) + Heap(o.sub_group);
  for (const auto& t : o.required_node_affinity) {
    n += Heap(t.match_expressions) + Heap(t.match_fields);
  }
  for (const auto& t : o.tolerations)
    n += Heap(t.key) + Heap(t.op) + Heap(t.value) + Heap(t.effect);
  return n;  // pod (anti-)affinity terms are not used by the production shape (their blocks are)
}
size_t Bytes(const PodGroupObject& o) {
  size_t n = sizeof(o) + Heap(o.meta) + Heap(o.queue) + Heap(o.priority_class_name) +
             Heap(o.preemptibility) + VecBlock(o.sub_groups);
  for (const auto& g : o.sub_groups) n += Heap(g.name) + Heap(g.parent);
  return n;
}

// One entry of an unordered_map<string_view, int32_t> with cached hash: next pointer, value, hash.
constexpr size_t kHashEntry = 8 + sizeof(std::pair<const std::string_view, int32_t>) + 8;

size_t Bytes(const SnapNode& n) {
  return sizeof(n) + Heap(n.allocatable) + Heap(n.idle) + Heap(n.releasing) + Heap(n.used) +
         Heap(n.unusable_reason) + VecBlock(n.pods) + Chunk(kHashEntry) + 8 /*bucket*/ +
         sizeof(int32_t) /*name rank*/;
}
size_t Bytes(const SnapPod& p) { return sizeof(p) + Heap(p.request) + Heap(p.gpu_groups); }
size_t Bytes(const SnapJob& j) { return sizeof(j) + VecBlock(j.pods); }
size_t Bytes(const SnapQueue& q) {
  return sizeof(q) + VecBlock(q.children) + Heap(q.fair_share) + Heap(q.allocated) +
         Heap(q.allocated_non_preemptible) + Heap(q.requested) + Chunk(kHashEntry) + 8;
}
// Every element's bytes plus the vector's unused capacity (growth slack).
template <class T>
double Sum(const std::vector<T>& v) {
  size_t n = (v.capacity() - v.size()) * sizeof(T);
  for (const auto& x : v) n += Bytes(x);
  return static_cast<double>(n);
}
double Per(double bytes, size_t count) { return count ? bytes / static_cast<double>(count) : 0; }

ProductionShape ShapeOf(const benchmark::State& state) {
  ProductionShape s;
  s.nodes = static_cast<int>(state.range(0));
  s.pods = static_cast<int>(state.range(1));
  return s;
}

void KaiModel(benchmark::State& state, const ClusterState& st, double kai_total) {
  // KAI's sizing model for the same object counts, and kai's total as a fraction of it.
  const double model = 17e3 * static_cast<double>(st.pods.size()) +
                       21e3 * static_cast<double>(st.nodes.size()) +
                       11e3 * static_cast<double>(st.pod_groups.size());
  state.counters["kai_model_MB"] = model / 1e6;
  state.counters["vs_kai_model"] = model > 0 ? kai_total / model : 0;
}

void BM_MemoryClusterState(benchmark::State& state) {
  const ProductionShape shape = ShapeOf(state);
  for (auto _ : state) {
    const Mem m0 = Measure();
    ClusterState st = ProductionBase(shape);
    const Mem m1 = Measure();
    const size_t pool1 = InternedString::PoolSize();
    AddProductionNodes(st, shape);
    const Mem m2 = Measure();
    const size_t pool2 = InternedString::PoolSize();
    AddProductionPodGroups(st, shape);
    const Mem m3 = Measure();
    const size_t pool3 = InternedString::PoolSize();
    AddProductionPods(st, shape);
    const Mem m4 = Measure();
    const size_t pool4 = InternedString::PoolSize();
    const size_t nodes = st.nodes.size(), pods = st.pods.size(), pgs = st.pod_groups.size();
    state.counters["nodes"] = static_cast<double>(nodes);
    state.counters["pods"] = static_cast<double>(pods);
    state.counters["podgroups"] = static_cast<double>(pgs);
    state.counters["heap_per_node"] = Per(m2.heap - m1.heap, nodes);
    state.counters["heap_per_podgroup"] = Per(m3.heap - m2.heap, pgs);
    state.counters["heap_per_pod"] = Per(m4.heap - m3.heap, pods);
    state.counters["heap_total_MB"] = (m4.heap - m0.heap) / 1e6;
    state.counters["rss_per_node"] = Per(m2.rss - m1.rss, nodes);
    state.counters["rss_per_podgroup"] = Per(m3.rss - m2.rss, pgs);
    state.counters["rss_per_pod"] = Per(m4.rss - m3.rss, pods);
    state.counters["rss_total_MB"] = (m4.rss - m0.rss) / 1e6;
    // Each kind is charged the strings it added to the pool (label keys, namespaces, node names).
    const double calc_nodes = Sum(st.nodes) + PoolBytes(pool2 - pool1),
                 calc_pgs = Sum(st.pod_groups) + PoolBytes(pool3 - pool2),
                 calc_pods = Sum(st.pods) + PoolBytes(pool4 - pool3);
    state.counters["calc_per_node"] = Per(calc_nodes, nodes);
    state.counters["calc_per_podgroup"] = Per(calc_pgs, pgs);
    state.counters["calc_per_pod"] = Per(calc_pods, pods);
    state.counters["calc_vs_heap"] =
        (calc_nodes + calc_pgs + calc_pods) / std::max(1.0, m4.heap - m1.heap);
    KaiModel(state, st, m4.heap - m0.heap);
    benchmark::DoNotOptimize(st.pods.data());
  }
}

void BM_MemorySnapshot(benchmark::State& state) {
  const ProductionShape shape = ShapeOf(state);
  const ClusterState st = BuildProduction(shape);
  for (auto _ : state) {
    const Mem m0 = Measure();
    Snapshot snap = BuildSnapshot(st, shape.now);
    const Mem m1 = Measure();
    const size_t nodes = st.nodes.size(), pods = st.pods.size(), pgs = st.pod_groups.size();
    state.counters["nodes"] = static_cast<double>(nodes);
    state.counters["pods"] = static_cast<double>(pods);
    state.counters["podgroups"] = static_cast<double>(pgs);
    const double heap = m1.heap - m0.heap;
    state.counters["heap_total_MB"] = heap / 1e6;
    state.counters["heap_all_in_per_pod"] = Per(heap, pods);
    state.counters["rss_total_MB"] = (m1.rss - m0.rss) / 1e6;
    state.counters["rss_all_in_per_pod"] = Per(m1.rss - m0.rss, pods);
    const double calc_nodes = Sum(snap.nodes) + VecBlock(snap.node_name_rank) -
                              4.0 * static_cast<double>(snap.node_name_rank.size());
    const double calc_pods = Sum(snap.pods), calc_jobs = Sum(snap.jobs);
    const double calc_queues = Sum(snap.queues);
    state.counters["calc_per_node"] = Per(calc_nodes, nodes);
    state.counters["calc_per_pod"] = Per(calc_pods, pods);
    state.counters["calc_per_podgroup"] = Per(calc_jobs, pgs);
    state.counters["calc_vs_heap"] =
        (calc_nodes + calc_pods + calc_jobs + calc_queues) / std::max(1.0, heap);
    // The state's share of the same model, for KAI's all-in comparison.
    const double state_bytes = Sum(st.nodes) + Sum(st.pods) + Sum(st.pod_groups);
    KaiModel(state, st, heap + state_bytes);
    state.counters["state_plus_snapshot_per_pod"] = Per(heap + state_bytes, pods);

    // Session (plugins open: fair share, per-session tables) on top of the snapshot.
    Session s(std::move(snap), ConfigFromShard(std::nullopt).value());
    const bool ok = s.OpenPlugins().ok();
    const Mem m2 = Measure();
    if (!ok) state.SkipWithError("OpenPlugins failed");
    state.counters["session_extra_MB"] = (m2.heap - m1.heap) / 1e6;
    benchmark::DoNotOptimize(s.snap().pods.data());
  }
}

BENCHMARK(BM_MemoryClusterState)
    ->Args({1000, 90000})
    ->Args({4000, 140000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemorySnapshot)
    ->Args({1000, 90000})
    ->Args({4000, 140000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kai::bench
