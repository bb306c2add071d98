// kai_soak: memory under churn (bench/README.md, "Soak: memory under churn").
//
// Simulates a long-running scheduler: nodes and pods are created, updated and deleted with
// ever-new names (nodes, pods and namespaces are never reused, so any pool or index that keeps
// what it once saw grows), ~100 changes a simulated second. The process's RSS (/proc/self/statm)
// is read once a simulated second and reported per simulated minute as the minute's largest
// reading (the allocator's top of heap moves by a few hundred KB within a minute; the peak is the
// stable figure and the one a memory limit meets). The verdict compares the second half with its
// start: the largest RSS of minutes M/2+1..M may exceed that of minute M/2 by at most
// --tolerance (2 %).
//
// Two sources of changes:
//   fakeapi (default): the real informer path. tests/fakeapi/fake_apiserver.py is started; the
//     churn goes in through its control API (POST /_control/objects, one batch per simulated
//     second), and an Informer with the scheduler's watches lists and watches it; the main thread
//     applies the informer's deltas between cycles (Informer::Apply) and, every --cycle-every
//     simulated seconds, runs a scheduling cycle on the incremental snapshot as
//     src/kai/daemons/scheduler/scheduler.cc does (SnapshotCache::Update, Lend, sim::RunSession,
//     Return).
//   direct: no server. The same objects are written as API JSON, parsed (doc::ParseJson) and
//     decoded (DecodeObject) and applied to the ClusterState the way Informer::Apply does (a
//     key -> index map, in-place replacement, removals compacted and re-indexed, the snapshot
//     told what changed). Faster; it leaves out HTTP, the reflector threads and the queue.
//
// The clock is compressed: a simulated minute is 60 x --changes-per-second changes, run as fast
// as the source allows (or --speedup times real time).
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/doc.h"
#include "kai/core/sim/simulator.h"
#include "kai/core/snapshot/cache.h"
#include "kai/core/util/interned_string.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/informer.h"

#ifndef KAI_SOURCE_DIR
#define KAI_SOURCE_DIR "."
#endif

namespace kai::soak {
namespace {

struct Options {
  int minutes = 60;
  int changes_per_second = 100;
  double speedup = 0;  // 0: as fast as the source allows
  std::string source = "fakeapi";
  std::string fake_server = KAI_SOURCE_DIR "/tests/fakeapi/fake_apiserver.py";
  int nodes = 200;              // live nodes at steady state
  int pods = 2000;              // live pods at steady state
  int node_churn_every = 20;    // one change in this many is a node's
  int pods_per_namespace = 20;  // namespaces are never reused either
  int cycle_every = 1;          // simulated seconds between scheduling cycles (0: none)
  double tolerance = 0.02;      // allowed RSS growth over the second half
  bool default_malloc = false;  // keep glibc\'s dynamic mmap threshold (noisier RSS)
};

// ---- the churn --------------------------------------------------------------------------------

// One change, as the control API takes it: op create|update|delete and the whole object.
struct Change {
  std::string op;
  std::string kind;  // Node | Pod
  std::string ns, name;
  std::string json;  // the object (metadata only for a delete)
};

struct PodRecord {
  std::string name, ns, node;
  bool running = false;
};

// A dotted-quad style node name, as cloud providers give them; past 15 characters, so each one
// is a heap block wherever it is kept.
std::string NodeName(uint64_t seq) {
  return "ip-10-" + std::to_string((seq >> 16) & 255) + "-" + std::to_string((seq >> 8) & 255) +
         "-" + std::to_string(seq & 255) + "." + std::to_string(seq >> 24) +
         ".soak.compute.internal";
}

std::string NodeJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","uid":"uid-)" +
         name + R"(","labels":{"kubernetes.io/hostname":")" + name +
         R"(","node-role.kubernetes.io/worker":""}},"spec":{},"status":{)"
         R"("capacity":{"cpu":"32","memory":"128Gi","pods":"110","nvidia.com/gpu":"8"},)"
         R"("allocatable":{"cpu":"32","memory":"128Gi","pods":"110","nvidia.com/gpu":"8"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string PodJson(const PodRecord& p) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + p.name + R"(","namespace":")" +
         p.ns + R"(","uid":"uid-)" + p.ns + "-" + p.name + R"(","labels":{"app":")" +
         p.name.substr(0, p.name.size() - 1) +
         R"(","kai.scheduler/queue":"soak"}},"spec":{"schedulerName":"kai-scheduler",)"
         R"("nodeName":")" +
         p.node +
         R"(","containers":[{"name":"c","resources":)"
         R"({"requests":{"cpu":"100m","memory":"256Mi"}}}]},"status":{"phase":")" +
         (p.running ? "Running" : "Pending") + R"("}})";
}

std::string MetaJson(const std::string& kind, const std::string& ns, const std::string& name) {
  std::string meta = R"({"name":")" + name + "\"";
  if (!ns.empty()) meta += R"(,"namespace":")" + ns + "\"";
  return R"({"apiVersion":"v1","kind":")" + kind + R"(","metadata":)" + meta + "}}";
}

// Generates the changes: a steady population of nodes and pods whose members are replaced, never
// renamed back. Pods are created Pending on a live node, turn Running, and are deleted oldest
// first; a node is drained (no new pods) and deleted once its pods are gone.
class Churn {
 public:
  explicit Churn(const Options& o) : o_(o) {}

  Change Next() {
    ++step_;
    if (step_ % o_.node_churn_every == 0 || nodes_.empty()) return NodeStep();
    if (!to_run_.empty() && step_ % 2 == 0) {
      if (auto c = RunStep()) return *c;
    }
    if (static_cast<int>(pods_.size()) < o_.pods) return CreatePod();
    return DeletePod(pods_.begin());
  }

  size_t live_nodes() const { return nodes_.size(); }
  size_t live_pods() const { return pods_.size(); }

 private:
  Change NodeStep() {
    for (auto it = draining_.begin(); it != draining_.end(); ++it) {
      if (PodsOn(*it) == 0) {
        const std::string name = *it;
        draining_.erase(it);
        nodes_.erase(name);
        return {"delete", "Node", "", name, MetaJson("Node", "", name)};
      }
    }
    if (static_cast<int>(order_.size()) >= o_.nodes) {
      draining_.push_back(order_.front());
      order_.pop_front();
    }
    const std::string name = NodeName(next_node_++);
    nodes_[name] = 0;
    order_.push_back(name);
    return {"create", "Node", "", name, NodeJson(name)};
  }

  std::optional<Change> RunStep() {
    while (!to_run_.empty()) {
      auto it = pods_.find(to_run_.front());
      to_run_.pop_front();
      if (it == pods_.end()) continue;
      it->second.running = true;
      return Change{"update", "Pod", it->second.ns, it->second.name, PodJson(it->second)};
    }
    return std::nullopt;
  }

  Change CreatePod() {
    const uint64_t seq = next_pod_++;
    PodRecord p;
    p.name = "soak-pod-" + std::to_string(seq);
    p.ns = "soak-ns-" + std::to_string(seq / static_cast<uint64_t>(o_.pods_per_namespace));
    p.node = order_[std::uniform_int_distribution<size_t>(0, order_.size() - 1)(rng_)];
    ++nodes_[p.node];
    to_run_.push_back(seq);
    Change c{"create", "Pod", p.ns, p.name, PodJson(p)};
    pods_.emplace(seq, std::move(p));
    return c;
  }

  Change DeletePod(std::map<uint64_t, PodRecord>::iterator it) {
    const PodRecord p = std::move(it->second);
    pods_.erase(it);
    --nodes_[p.node];
    return {"delete", "Pod", p.ns, p.name, MetaJson("Pod", p.ns, p.name)};
  }

  int PodsOn(const std::string& node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? 0 : it->second;
  }

  const Options& o_;
  std::mt19937_64 rng_{20261201};
  uint64_t step_ = 0, next_node_ = 0, next_pod_ = 0;
  std::unordered_map<std::string, int> nodes_;  // live node -> pods on it
  std::deque<std::string> order_;               // schedulable nodes, oldest first
  std::deque<std::string> draining_;            // nodes waiting for their pods to go
  std::map<uint64_t, PodRecord> pods_;          // live pods by creation order
  std::deque<uint64_t> to_run_;                 // pods still Pending, oldest first
};

// ---- memory -------------------------------------------------------------------------------------

struct Sample {
  int minute = 0;
  int64_t changes = 0;
  size_t nodes = 0, pods = 0;
  double rss_mib = 0;   // the largest RSS sampled in the minute (once a simulated second)
  double heap_mib = 0;  // live heap at the minute's end (mallinfo2)
  size_t interned = 0;
};

double RssMiB() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1048576.0;
}

double HeapMiB() {
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd) / 1048576.0;
}

void PrintHeader() {
  std::printf("%6s %10s %6s %6s %9s %9s %9s\n", "minute", "changes", "nodes", "pods", "rss_MiB",
              "heap_MiB", "interned");
}

void PrintSample(const Sample& s) {
  std::printf("%6d %10lld %6zu %6zu %9.2f %9.2f %9zu\n", s.minute,
              static_cast<long long>(s.changes), s.nodes, s.pods, s.rss_mib, s.heap_mib,
              s.interned);
  std::fflush(stdout);
}

// Largest RSS of the second half against the RSS at its start.
bool Verdict(const std::vector<Sample>& samples, double tolerance) {
  const size_t half = samples.size() / 2;
  if (half == 0) {
    std::printf("verdict: too few minutes\n");
    return false;
  }
  const Sample& base = samples[half - 1];
  Sample peak;
  for (size_t i = half; i < samples.size(); ++i) {
    peak.rss_mib = std::max(peak.rss_mib, samples[i].rss_mib);
    peak.heap_mib = std::max(peak.heap_mib, samples[i].heap_mib);
    peak.interned = std::max(peak.interned, samples[i].interned);
  }
  const double growth = (peak.rss_mib - base.rss_mib) / base.rss_mib;
  const bool ok = growth <= tolerance;
  std::printf(
      "verdict: %s: max RSS of minutes %zu-%zu %.2f MiB vs %.2f MiB at minute %d: %+.2f %% "
      "(tolerance %.1f %%); heap %.2f MiB at most after %.2f (%+.2f %%); interned strings %zu "
      "at most after %zu\n",
      ok ? "PASS" : "FAIL", half + 1, samples.size(), peak.rss_mib, base.rss_mib, base.minute,
      100.0 * growth, 100.0 * tolerance, peak.heap_mib, base.heap_mib,
      100.0 * (peak.heap_mib - base.heap_mib) / base.heap_mib, peak.interned, base.interned);
  return ok;
}

// ---- the scheduling cycle ---------------------------------------------------------------------

// One cycle as the scheduler's loop runs it, without the commit (nothing to write back).
class Cycler {
 public:
  Cycler() : config_(*ConfigFromShard(std::nullopt)) {}

  void Run(const ClusterState& world, ClusterChanges& changes, UnixSeconds now) {
    cache_.Update(world, now, changes);
    changes = {};
    auto run = sim::RunSession(cache_.Lend(), config_, {});
    if (!run.ok()) {
      std::cerr << "kai_soak: cycle: " << run.error().message << "\n";
      changes.rebuild = true;
      return;
    }
    Session& s = **run;
    cache_.Return(s.TakeSnapshot(), s.MovedPods(), s.NodeChanges());
    ++cycles_;
  }
  int64_t cycles() const { return cycles_; }

 private:
  SchedulerConfig config_;
  SnapshotCache cache_;
  int64_t cycles_ = 0;
};

// ---- sources ------------------------------------------------------------------------------------

// Where changes go and where the world comes from.
class Source {
 public:
  virtual ~Source() = default;
  // Sends one simulated second of changes and brings `world` up to date with them.
  virtual bool Send(const std::vector<Change>& batch, ClusterState& world,
                    ClusterChanges& changes) = 0;
};

// Applies decoded objects the way Informer::Apply does.
class DirectSource : public Source {
 public:
  bool Send(const std::vector<Change>& batch, ClusterState& world,
            ClusterChanges& changes) override {
    for (const Change& c : batch) {
      if (!Apply(c, world, changes)) return false;
    }
    Compact(world, changes);
    return true;
  }

 private:
  struct Store {
    std::unordered_map<std::string, size_t> index;
    std::vector<size_t> removed;
  };

  bool Apply(const Change& c, ClusterState& world, ClusterChanges& changes) {
    Store& store = c.kind == "Node" ? nodes_ : pods_;
    const std::string key = informer::KeyOf(c.ns, c.name);
    if (c.op == "delete") {
      auto it = store.index.find(key);
      if (it == store.index.end()) return true;
      store.removed.push_back(it->second);
      store.index.erase(it);
      changes.rebuild = true;
      return true;
    }
    ClusterState one;
    auto parsed = doc::ParseJson(c.json);
    if (!parsed.ok()) return Fail(parsed.error().message);
    const Status decoded = DecodeObject(parsed->Roots().at(0), "v1", c.kind, "api", one);
    if (!decoded.ok()) return Fail(decoded.error().message);
    if (c.kind == "Node") {
      Upsert(key, one.nodes, world.nodes, store, changes, true);
    } else {
      Upsert(key, one.pods, world.pods, store, changes, false);
    }
    return true;
  }

  template <class T>
  static void Upsert(const std::string& key, std::vector<T>& from, std::vector<T>& to, Store& store,
                     ClusterChanges& changes, bool rebuild) {
    if (from.empty()) return;
    if (auto it = store.index.find(key); it != store.index.end()) {
      if (to[it->second] == from[0]) return;
      to[it->second] = std::move(from[0]);
      if (rebuild) {
        changes.rebuild = true;
      } else {
        changes.pods.push_back(it->second);
      }
      return;
    }
    store.index.emplace(key, to.size());
    to.push_back(std::move(from[0]));
    if (rebuild) changes.rebuild = true;
  }

  template <class T>
  static void EraseRemoved(Store& store, std::vector<T>& vec) {
    if (store.removed.empty()) return;
    std::sort(store.removed.begin(), store.removed.end());
    size_t out = 0, r = 0;
    for (size_t i = 0; i < vec.size(); ++i) {
      if (r < store.removed.size() && store.removed[r] == i) {
        ++r;
        continue;
      }
      if (out != i) vec[out] = std::move(vec[i]);
      ++out;
    }
    vec.resize(out);
    store.removed.clear();
    store.index.clear();
    for (size_t i = 0; i < vec.size(); ++i) {
      store.index.emplace(informer::KeyOf(vec[i].meta.ns, vec[i].meta.name), i);
    }
  }

  void Compact(ClusterState& world, ClusterChanges& changes) {
    const bool any = !nodes_.removed.empty() || !pods_.removed.empty();
    EraseRemoved(nodes_, world.nodes);
    EraseRemoved(pods_, world.pods);
    if (any) changes.pods.clear();  // removals rebuild (ClusterChanges' contract)
  }

  static bool Fail(const std::string& message) {
    std::cerr << "kai_soak: decode: " << message << "\n";
    return false;
  }

  Store nodes_, pods_;
};

// A child process running tests/fakeapi/fake_apiserver.py; stopped (SIGTERM) on destruction.
class FakeServer {
 public:
  ~FakeServer() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    std::filesystem::remove_all(dir_);
  }

  // Starts the server; returns its port, or 0.
  int Start(const std::string& script) {
    char tmpl[] = "/tmp/kai-soak-XXXXXX";
    if (!mkdtemp(tmpl)) return 0;
    dir_ = tmpl;
    const std::string port_file = dir_ + "/port";
    pid_ = fork();
    if (pid_ == 0) {
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, STDOUT_FILENO);
      execlp("python3", "python3", script.c_str(), "--port", "0", "--port-file", port_file.c_str(),
             "--history-limit", "20000", nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && pid_ > 0; ++i) {
      std::ifstream in(port_file);
      int port = 0;
      if (in >> port && port > 0) return port;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
  }

 private:
  pid_t pid_ = -1;
  std::string dir_;
};

// The scheduler's watches (scheduler.cc WatchesFor, the default shard).
std::vector<informer::WatchSpec> SchedulerWatches() {
  namespace res = k8s::resources;
  const std::string pool = "labelSelector=" + k8s::UrlEscape("!kai.scheduler/node-pool");
  return {{res::kNode, pool},
          {res::kPod, "fieldSelector=" + k8s::UrlEscape("status.phase!=Failed")},
          {res::kPodGroup, pool},
          {res::kQueue, pool},
          {res::kPriorityClass, ""},
          {res::kTopology, ""},
          {res::kBindRequest, pool}};
}

// The real informer on the fake API server.
class FakeApiSource : public Source {
 public:
  bool Start(const Options& o) {
    const int port = server_.Start(o.fake_server);
    if (port == 0) {
      std::cerr << "kai_soak: could not start " << o.fake_server << "\n";
      return false;
    }
    k8s::ClusterConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(port);
    client_ = std::make_unique<k8s::ApiClient>(config);
    informer::InformerOptions io;
    io.log = [](const std::string& l) { std::cerr << "informer: " << l << "\n"; };
    informer_ = std::make_unique<informer::Informer>(*client_, SchedulerWatches(), io);
    informer_->Start();
    return informer_->WaitForFirstLists(std::chrono::milliseconds(30000));
  }

  bool Send(const std::vector<Change>& batch, ClusterState& world,
            ClusterChanges& changes) override {
    if (!Post(batch)) return false;
    // Every change is one watch event on one of the watches: wait until that many deltas came.
    size_t applied = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (applied < batch.size()) {
      applied += informer_->Apply(world, changes);
      if (applied >= batch.size()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        std::cerr << "kai_soak: the informer applied " << applied << " of " << batch.size()
                  << " changes within 60 s\n";
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

 private:
  bool Post(const std::vector<Change>& batch) {
    std::string body = R"({"ops":[)";
    for (size_t i = 0; i < batch.size(); ++i) {
      if (i) body += ",";
      body += R"({"op":")" + batch[i].op + R"(","object":)" + batch[i].json + "}";
    }
    body += "]}";
    k8s::HttpRequest req;
    req.method = "POST";
    req.path = "/_control/objects";
    req.body = std::move(body);
    const k8s::HttpResponse r = client_->Call(std::move(req));
    if (!r.ok()) {
      std::cerr << "kai_soak: control: " << r.status << " " << r.transport_error << " "
                << r.body.substr(0, 300) << "\n";
    }
    return r.ok();
  }

  FakeServer server_;
  std::unique_ptr<k8s::ApiClient> client_;
  std::unique_ptr<informer::Informer> informer_;
};

// ---- the run ------------------------------------------------------------------------------------

// glibc raises its mmap threshold to the size of each large block freed, so that the next large
// blocks (the snapshot's vectors, rebuilt every cycle) come from the heap instead of mmap and RSS
// moves by some 0.5 MB (3 %) from minute to minute with no change in live heap. Fixing the
// threshold at its initial 128 KiB turns that off; --default-malloc keeps it.
void SteadyMalloc(const Options& o) {
  if (!o.default_malloc) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

int Run(const Options& o) {
  SteadyMalloc(o);
  std::unique_ptr<Source> source;
  if (o.source == "direct") {
    source = std::make_unique<DirectSource>();
  } else {
    auto fake = std::make_unique<FakeApiSource>();
    if (!fake->Start(o)) return 1;
    source = std::move(fake);
  }
  Churn churn(o);
  Cycler cycler;
  ClusterState world;
  ClusterChanges changes;
  std::vector<Sample> samples;
  const UnixSeconds start = 1735732800;  // 2025-01-01T12:00:00Z
  const auto wall_start = std::chrono::steady_clock::now();
  int64_t total = 0;
  double minute_peak = 0;
  PrintHeader();
  for (int second = 1; second <= 60 * o.minutes; ++second) {
    std::vector<Change> batch;
    batch.reserve(static_cast<size_t>(o.changes_per_second));
    for (int i = 0; i < o.changes_per_second; ++i) batch.push_back(churn.Next());
    total += static_cast<int64_t>(batch.size());
    if (!source->Send(batch, world, changes)) return 1;
    if (o.cycle_every > 0 && second % o.cycle_every == 0)
      cycler.Run(world, changes, start + second);
    minute_peak = std::max(minute_peak, RssMiB());
    if (second % 60 == 0) {
      samples.push_back({second / 60, total, world.nodes.size(), world.pods.size(), minute_peak,
                         HeapMiB(), InternedString::PoolSize()});
      PrintSample(samples.back());
      minute_peak = 0;
    }
    if (o.speedup > 0) {
      std::this_thread::sleep_until(wall_start + std::chrono::duration<double>(second / o.speedup));
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf(
      "source %s: %lld changes in %.1f s (%.0f changes/s), %lld cycles; live at the end: "
      "%zu nodes, %zu pods (churn: %zu, %zu)\n",
      o.source.c_str(), static_cast<long long>(total), wall, static_cast<double>(total) / wall,
      static_cast<long long>(cycler.cycles()), world.nodes.size(), world.pods.size(),
      churn.live_nodes(), churn.live_pods());
  return Verdict(samples, o.tolerance) ? 0 : 1;
}

}  // namespace
}  // namespace kai::soak

int main(int argc, char** argv) {
  kai::soak::Options o;
  CLI::App app{"kai_soak: RSS of the informer path and the scheduling cycle under churn"};
  app.add_option("--minutes", o.minutes, "simulated minutes (one sample each)");
  app.add_option("--changes-per-second", o.changes_per_second, "changes per simulated second");
  app.add_option("--speedup", o.speedup,
                 "simulated seconds per real second (0: as fast as possible)");
  app.add_option("--source", o.source, "fakeapi (the informer on tests/fakeapi) or direct")
      ->check(CLI::IsMember({"fakeapi", "direct"}));
  app.add_option("--fake-server", o.fake_server, "path of fake_apiserver.py");
  app.add_option("--nodes", o.nodes, "live nodes at steady state");
  app.add_option("--pods", o.pods, "live pods at steady state");
  app.add_option("--node-churn-every", o.node_churn_every, "one change in N is a node's")
      ->check(CLI::PositiveNumber);
  app.add_option("--pods-per-namespace", o.pods_per_namespace, "pods per (never reused) namespace")
      ->check(CLI::PositiveNumber);
  app.add_option("--cycle-every", o.cycle_every, "simulated seconds between cycles (0: none)");
  app.add_option("--tolerance", o.tolerance, "allowed RSS growth of the second half (fraction)");
  app.add_flag("--default-malloc", o.default_malloc,
               "keep glibc's dynamic mmap threshold (RSS moves by ~3 % minute to minute)");
  CLI11_PARSE(app, argc, argv);
  return kai::soak::Run(o);
}
