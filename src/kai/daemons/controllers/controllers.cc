#include "kai/daemons/controllers/controllers.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kai/core/controllers/pod_group_status.h"
#include "kai/core/controllers/queue_status.h"
#include "kai/daemons/controllers/defaults.h"
#include "kai/daemons/controllers/queue_metrics.h"
#include "kai/kube/informer/reflector.h"
#include "kai/kube/informer/watch_hub.h"
#include "kai/kube/runtime/manager.h"
#include "kai/kube/runtime/workqueue.h"
#include "kai/kube/serve/controller_metrics.h"
#include "kai/kube/serve/metrics.h"

namespace kai::controllersd {
namespace {

namespace res = k8s::resources;
using controllers::NodeFacts;
using controllers::PodFacts;
using controllers::PodGroupFacts;
using controllers::PriorityClassFacts;
using controllers::QueueFacts;

constexpr std::string_view kGroupPrefix = "pg/";
constexpr std::string_view kQueuePrefix = "q/";

// One kind's cached objects; `listed` holds the keys a running relist has delivered, so the
// keys it did not deliver (deleted while the watch was down) can be dropped at its end.
template <class T>
struct KindStore {
  std::unordered_map<std::string, T> objects;
  std::unordered_map<std::string, uint64_t> rvs;  // the resourceVersion each object was read at
  std::unordered_set<std::string> listed;
};

// resourceVersions are etcd revisions in practice; 0 when one is not a number (never compared).
uint64_t RvOf(const doc::Node& obj) {
  const std::string rv(obj["metadata"]["resourceVersion"].Scalar());
  char* end = nullptr;
  const unsigned long long v = std::strtoull(rv.c_str(), &end, 10);
  return rv.empty() || *end != '\0' ? 0 : v;
}

// A kind's sink for its reflector, and `assume` for the object a write of ours answered: it
// replaces only a cached object older than itself, so a reply that arrives after the watch told
// of a later change, or of the deletion, never brings back what the watch already replaced.
struct KindSink {
  informer::RawSink reflector;
  std::function<void(const doc::Node&)> assume;
};

template <class T>
using Decoder = Result<T> (*)(const doc::Node&);

enum class Outcome { kDone, kRetry };

class Controllers final : public runtime::Component {
 public:
  Controllers(const ControllersOptions& o, runtime::Manager& m)
      : o_(o), m_(m), client_(m.client()) {
    queue_.SetMetrics(std::make_shared<serve::WorkQueueMetrics>(registry_, "controllers"));
    registry_.AddSource([this] { return Metrics(); });
  }

  Status Start() override {
    StartReflectors();
    return Ok();
  }

  Status Sync(std::chrono::milliseconds timeout) override {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!Synced()) {
      if (m_.Stopping()) return Ok();
      if (std::chrono::steady_clock::now() >= until) {
        return Error{
            "the watches did not sync within the time-out (is the API server reachable and are "
            "the CRDs installed? see deploy/crds)"};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Ok();
  }

  bool Synced() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::all_of(synced_.begin(), synced_.end(), [](bool b) { return b; });
  }

  int Run() override {
    if (o_.create_defaults) threads_.emplace_back([this] { CreateDefaults(); });
    EnqueueAll();
    for (int i = 0; i < std::max(1, o_.workers); ++i) workers_.emplace_back([this] { Work(); });
    Log("started: " + std::to_string(workers_.size()) + " workers");
    auto last_resync = std::chrono::steady_clock::now();
    while (!m_.Stopping()) {
      m_.Sleep(std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      if (o_.resync_period.count() > 0 && now - last_resync >= o_.resync_period) {
        EnqueueAll();
        last_resync = now;
      }
    }
    return 0;
  }

  void Stop(bool) override {
    queue_.ShutDown();
    for (auto& t : workers_) t.join();
    workers_.clear();
    for (uint64_t id : subscriptions_) o_.watch_hub->Unsubscribe(id);
    subscriptions_.clear();
    for (auto& r : reflectors_) r->Stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Log(const std::string& line) { m_.Log(line); }

  // --- the cache ---------------------------------------------------------------------------

  template <class T, class Changed>
  void Upsert(KindStore<T>& store, Decoder<T> decode, Changed changed, const doc::Node& obj,
              bool assumed) {
    auto facts = decode(obj);
    const std::string key = informer::KeyOfObject(obj);
    if (!facts.ok()) Log(facts.error().message + " (left out until fixed)");
    const uint64_t rv = RvOf(obj);
    std::lock_guard<std::mutex> lock(mu_);
    if (!assumed) store.listed.insert(key);
    auto it = store.objects.find(key);
    auto known = store.rvs.find(key);
    const bool older =
        rv != 0 && known != store.rvs.end() && (assumed ? rv <= known->second : rv < known->second);
    if (older || (assumed && it == store.objects.end())) return;
    if (!facts.ok()) return Erase(store, key, changed);
    store.rvs[key] = rv;
    const T* old = it == store.objects.end() ? nullptr : &it->second;
    if (old && *old == *facts) return;
    changed(old, &*facts);
    store.objects[key] = std::move(*facts);
  }

  template <class T, class Changed>
  KindSink SinkFor(KindStore<T>& store, Decoder<T> decode, Changed changed) {
    KindSink k;
    informer::RawSink& s = k.reflector;
    s.sync_begin = [this, &store] {
      std::lock_guard<std::mutex> lock(mu_);
      store.listed.clear();
    };
    s.upsert = [this, &store, decode, changed](const doc::Node& obj) {
      Upsert(store, decode, changed, obj, false);
    };
    k.assume = [this, &store, decode, changed](const doc::Node& obj) {
      Upsert(store, decode, changed, obj, true);
    };
    s.remove = [this, &store, changed](const doc::Node& obj) {
      std::lock_guard<std::mutex> lock(mu_);
      Erase(store, informer::KeyOfObject(obj), changed);
    };
    s.sync_end = [this, &store, changed] {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<std::string> gone;
      for (const auto& [key, v] : store.objects) {
        if (!store.listed.count(key)) gone.push_back(key);
      }
      for (const auto& key : gone) Erase(store, key, changed);
      store.listed.clear();
    };
    return k;
  }

  template <class T, class Changed>
  static void Erase(KindStore<T>& store, const std::string& key, Changed changed) {
    auto it = store.objects.find(key);
    if (it == store.objects.end()) return;
    changed(&it->second, nullptr);
    store.objects.erase(it);
    store.rvs.erase(key);
  }

  // Watches `type` through kai run's hub when there is one, else with a reflector of its own;
  // either way the kind counts as synced once its first list has reached the cache.
  void Watch(k8s::ResourceType type, const KindSink& sink) {
    const size_t i = synced_.size();
    synced_.push_back(false);
    informer::RawSink s = sink.reflector;
    s.sync_end = [this, i, end = sink.reflector.sync_end] {
      end();
      std::lock_guard<std::mutex> lock(mu_);
      synced_[i] = true;
    };
    if (o_.watch_hub) {
      auto id = o_.watch_hub->Subscribe(type, "", s);
      if (id.ok()) return subscriptions_.push_back(*id);
      Log(std::string(type.kind) + ": watching on its own: " + id.error().message);
    }
    informer::ReflectorOptions ro;
    ro.log = [this](const std::string& l) { Log(l); };
    reflectors_.push_back(std::make_unique<informer::Reflector>(client_, type, "", s, ro));
    reflectors_.back()->Start();
  }

  void StartReflectors() {
    auto add = [&](k8s::ResourceType type, const KindSink& sink) { Watch(type, sink); };
    add(res::kPod, SinkFor(pods_, &controllers::DecodePodFacts,
                           [this](const PodFacts* a, const PodFacts* b) { PodChanged(a, b); }));
    add(res::kNode, SinkFor(nodes_, &controllers::DecodeNodeFacts,
                            [this](const NodeFacts* a, const NodeFacts* b) { NodeChanged(a, b); }));
    add(res::kPriorityClass,
        SinkFor(classes_, &controllers::DecodePriorityClassFacts,
                [this](const PriorityClassFacts*, const PriorityClassFacts*) { AllGroups(); }));
    group_sink_ =
        SinkFor(groups_, &controllers::DecodePodGroupFacts,
                [this](const PodGroupFacts* a, const PodGroupFacts* b) { GroupChanged(a, b); });
    add(res::kPodGroup, group_sink_);
    queue_sink_ = SinkFor(queues_, &controllers::DecodeQueueFacts,
                          [this](const QueueFacts* a, const QueueFacts* b) { QueueChanged(a, b); });
    add(res::kQueue, queue_sink_);
  }

  // --- what a change makes stale (called with mu_ held) --------------------------------------

  void Enqueue(std::string_view prefix, const std::string& key) {
    if (!key.empty()) queue_.Add(std::string(prefix) + key);
  }

  static std::string GroupOf(const PodFacts& p) {
    return p.pod_group.empty() ? "" : p.ns + "/" + p.pod_group;
  }

  void PodChanged(const PodFacts* old, const PodFacts* now) {
    const std::string key = old ? old->ns + "/" + old->name : now->ns + "/" + now->name;
    if (old && !GroupOf(*old).empty()) {
      auto it = pods_of_group_.find(GroupOf(*old));
      if (it != pods_of_group_.end() && it->second.erase(key) && it->second.empty()) {
        pods_of_group_.erase(it);
      }
      Enqueue(kGroupPrefix, GroupOf(*old));
    }
    if (now && !GroupOf(*now).empty()) {
      pods_of_group_[GroupOf(*now)].insert(key);
      Enqueue(kGroupPrefix, GroupOf(*now));
    }
  }

  // Only gpu-memory pods on the node read its labels.
  void NodeChanged(const NodeFacts* old, const NodeFacts* now) {
    if (old && now && old->gpu_memory_labels == now->gpu_memory_labels) return;
    const std::string& name = old ? old->name : now->name;
    for (const auto& [key, p] : pods_.objects) {
      if (p.node_name == name && p.gpu_memory) Enqueue(kGroupPrefix, GroupOf(p));
    }
  }

  void AllGroups() {
    for (const auto& [key, pg] : groups_.objects) Enqueue(kGroupPrefix, key);
  }

  void GroupChanged(const PodGroupFacts* old, const PodGroupFacts* now) {
    const std::string key = old ? old->ns + "/" + old->name : now->ns + "/" + now->name;
    if (old) {
      auto it = groups_of_queue_.find(old->queue);
      if (it != groups_of_queue_.end() && it->second.erase(key) && it->second.empty()) {
        groups_of_queue_.erase(it);
      }
      Enqueue(kQueuePrefix, old->queue);
    }
    if (now) {
      groups_of_queue_[now->queue].insert(key);
      Enqueue(kQueuePrefix, now->queue);
      Enqueue(kGroupPrefix, key);
    }
  }

  void QueueChanged(const QueueFacts* old, const QueueFacts* now) {
    Enqueue(kQueuePrefix, old ? old->name : now->name);
    if (old) Enqueue(kQueuePrefix, old->parent);
    if (now) Enqueue(kQueuePrefix, now->parent);
  }

  void EnqueueAll() {
    std::lock_guard<std::mutex> lock(mu_);
    AllGroups();
    for (const auto& [key, q] : queues_.objects) Enqueue(kQueuePrefix, key);
  }

  // --- reconciling -----------------------------------------------------------------------------

  void Work() {
    runtime::RunWorker(
        queue_,
        [this](const std::string& key) {
          const bool group = IsGroupKey(key);
          const std::string object = key.substr(group ? kGroupPrefix.size() : kQueuePrefix.size());
          return (group ? ReconcileGroup(object) : ReconcileQueue(object)) == Outcome::kDone;
        },
        [this] { return m_.Stopping(); },
        [this](const std::string& key) {
          return IsGroupKey(key) ? &group_reconciles_ : &queue_reconciles_;
        });
  }

  static bool IsGroupKey(const std::string& key) { return key.rfind(kGroupPrefix, 0) == 0; }

  // The status the PodGroup should hold; nullopt when it is gone or holds it already.
  Result<std::optional<std::string>> GroupPatch(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = groups_.objects.find(key);
    if (it == groups_.objects.end()) return std::optional<std::string>();
    controllers::PodGroupInputs in;
    in.pod_group = &it->second;
    if (auto p = pods_of_group_.find(key); p != pods_of_group_.end()) {
      for (const auto& pod_key : p->second) in.pods.push_back(&pods_.objects.at(pod_key));
    }
    in.node = [this](std::string_view name) -> const NodeFacts* {
      auto n = nodes_.objects.find(std::string(name));
      return n == nodes_.objects.end() ? nullptr : &n->second;
    };
    std::vector<PriorityClassFacts> classes;
    for (const auto& [name, pc] : classes_.objects) classes.push_back(pc);
    in.priority_classes = &classes;
    auto next = controllers::ComputePodGroupStatus(in);
    if (!next.ok()) return next.error();
    if (*next == it->second.status) return std::optional<std::string>();
    return std::optional<std::string>(controllers::PodGroupStatusPatch(it->second.status, *next));
  }

  Outcome ReconcileGroup(const std::string& key) {
    auto patch = GroupPatch(key);
    if (!patch.ok()) {
      Log("PodGroup " + key + ": " + patch.error().message);
      return Outcome::kRetry;
    }
    if (!*patch) return Outcome::kDone;
    const size_t slash = key.find('/');
    const std::string path =
        k8s::ObjectPath(res::kPodGroup, key.substr(0, slash), key.substr(slash + 1), "status");
    return WriteStatus(path, **patch, group_sink_, "PodGroup " + key);
  }

  // Patches a status subresource; the answer updates the cache at once, so what depends on
  // this status (the queue above) is computed from it without waiting for the watch.
  Outcome WriteStatus(const std::string& path, const std::string& patch, const KindSink& sink,
                      const std::string& what) {
    k8s::HttpResponse r = client_.Patch(path, patch, k8s::PatchType::kMerge);
    if (r.status == 404) return Outcome::kDone;  // deleted meanwhile: its watch event follows
    if (!r.ok()) {
      Log(what + ": " + k8s::Describe({"PATCH", path}, r));
      return Outcome::kRetry;
    }
    ++writes_;
    Log("updated the status of " + what + ": " + patch);
    if (auto d = doc::ParseJson(r.body); d.ok() && !d->Roots().empty()) {
      sink.assume(d->Roots()[0]);
    }
    return Outcome::kDone;
  }

  struct QueuePlan {
    bool exists = false;
    std::optional<std::string> patch;
    controllers::QueueMetrics metrics;
  };

  QueuePlan PlanQueue(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    QueuePlan plan;
    auto it = queues_.objects.find(name);
    if (it == queues_.objects.end()) return plan;
    plan.exists = true;
    std::vector<const QueueFacts*> children;
    for (const auto& [key, q] : queues_.objects) {
      if (q.parent == name) children.push_back(&q);
    }
    std::vector<const PodGroupFacts*> groups;
    if (auto g = groups_of_queue_.find(name); g != groups_of_queue_.end()) {
      for (const auto& key : g->second) groups.push_back(&groups_.objects.at(key));
    }
    const auto next = controllers::ComputeQueueStatus(it->second, children, groups);
    plan.metrics = controllers::QueueMetricsOf(it->second, next);
    if (!(next == it->second.status)) {
      plan.patch = controllers::QueueStatusPatch(it->second.status, next);
    }
    return plan;
  }

  Outcome ReconcileQueue(const std::string& name) {
    QueuePlan plan = PlanQueue(name);
    if (!plan.exists) {
      std::lock_guard<std::mutex> lock(metrics_mu_);
      metrics_.erase(name);
      return Outcome::kDone;
    }
    if (plan.patch) {
      const Outcome out = WriteStatus(k8s::ObjectPath(res::kQueue, "", name, "status"), *plan.patch,
                                      queue_sink_, "Queue " + name);
      if (out != Outcome::kDone) return out;
    }
    std::lock_guard<std::mutex> lock(metrics_mu_);
    metrics_[name] = plan.metrics;
    return Outcome::kDone;
  }

  // --- process -------------------------------------------------------------------------------

  std::vector<prometheus::MetricFamily> Metrics() {
    std::vector<controllers::QueueMetrics> queues;
    {
      std::lock_guard<std::mutex> lock(metrics_mu_);
      for (const auto& [name, m] : metrics_) queues.push_back(m);
    }
    return QueueMetricFamilies(queues, o_.metrics_namespace);
  }

  void CreateDefaults() {
    EnsureDefaults(client_, m_.stop_flag(), m_.Logger(),
                   [this](std::chrono::milliseconds d) { m_.Sleep(d); });
  }

  const ControllersOptions& o_;
  runtime::Manager& m_;
  const k8s::ApiClient& client_;  // the manager's, fenced by the lease
  mutable std::mutex mu_;
  std::mutex metrics_mu_;
  // The cache (mu_): only what the status computations read, per live object.
  KindStore<PodFacts> pods_;
  KindStore<NodeFacts> nodes_;
  KindStore<PriorityClassFacts> classes_;
  KindStore<PodGroupFacts> groups_;
  KindStore<QueueFacts> queues_;
  std::unordered_map<std::string, std::set<std::string>> pods_of_group_;    // ns/pg -> pods
  std::unordered_map<std::string, std::set<std::string>> groups_of_queue_;  // queue -> ns/pg
  KindSink group_sink_, queue_sink_;
  std::vector<std::unique_ptr<informer::Reflector>> reflectors_;
  std::vector<uint64_t> subscriptions_;  // kinds kai run's hub serves
  std::vector<bool> synced_;             // by watched kind (mu_)
  std::vector<std::thread> threads_, workers_;
  serve::MetricsRegistry& registry_ = m_.registry();
  serve::ReconcileMetrics group_reconciles_{registry_, "podgroup", o_.workers};
  serve::ReconcileMetrics queue_reconciles_{registry_, "queue", o_.workers};
  runtime::WorkQueue queue_;
  std::map<std::string, controllers::QueueMetrics> metrics_;  // live queues only
  std::atomic<int64_t> writes_{0};
};

}  // namespace

int RunControllers(const ControllersOptions& options, const k8s::ApiClient& client,
                   std::ostream& err, const std::atomic<bool>* also_stop) {
  return runtime::RunComponent(
      client, runtime::ManagerOptionsOf("controllers", options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controllers>(options, m); }, also_stop);
}

int RunControllers(const ControllersOptions& options, std::ostream& err) {
  return runtime::RunComponent(
      runtime::ClientOptionsOf(options), runtime::ManagerOptionsOf("controllers", options), err,
      [&](runtime::Manager& m) { return std::make_unique<Controllers>(options, m); });
}

}  // namespace kai::controllersd
