#include "kai/kube/informer/informer.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/keys.h"
#include "kai/kube/informer/watch_hub.h"

namespace kai::informer {

namespace {

// resourceVersions are opaque to clients, but the API server's are etcd revisions (integers);
// they are compared only to drop an assumed write that a newer watch event already replaced.
uint64_t ParseRv(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() ? v : 0;
}

}  // namespace

// What the informer keeps per kind beside the objects themselves (which live in the world's
// vectors): where each key is, its resourceVersion, and the bookkeeping of a relist.
struct Informer::KindStore {
  std::unordered_map<std::string, size_t> index;
  std::unordered_map<std::string, uint64_t> rv;
  std::vector<size_t> removed;  // erased at the next Compact
  std::unordered_set<std::string> seen;
  bool syncing = false;
  // The newest resourceVersion the list or watch delivered (deletions included). A kind's
  // watch streams in resourceVersion order, so a write at or below it was delivered already.
  uint64_t watched_rv = 0;

  virtual ~KindStore() = default;
  // Moves the one object of `from` into `world` under `key`. Returns false when it equals what
  // is there (a no-op echo).
  virtual bool Upsert(const std::string& key, ClusterState& from, ClusterState& world,
                      ClusterChanges& changes) = 0;
  virtual void EraseRemoved(ClusterState& world) = 0;
  virtual void Reindex(ClusterState& world) = 0;
  virtual void OnRemoved(ClusterChanges& changes) = 0;

  // An assumed write at `v` that the list or watch already overtook: its own event, or a
  // deletion of the key, came first. Without watched_rv a deletion (which forgets the key's rv)
  // would let an older assumed write bring the object back.
  bool Stale(const std::string& key, uint64_t v) const {
    if (v == 0) return false;
    if (v <= watched_rv) return true;
    auto it = rv.find(key);
    return it != rv.end() && it->second >= v;
  }

  void Remove(const std::string& key, ClusterChanges& changes) {
    auto it = index.find(key);
    if (it == index.end()) return;
    removed.push_back(it->second);
    index.erase(it);
    rv.erase(key);
    OnRemoved(changes);
  }
};

namespace {

// How a change of each kind reaches the snapshot cache (cache.h's ClusterChanges).
enum class ChangeRule { kPods, kAppendIncremental, kBindRequests, kRebuild };

// A change the snapshot cache takes without a rebuild (cache.h reads these fields every update).
template <class T>
bool MinorChange(const T&, const T&) {
  return false;
}

PodGroupObject WithoutTimers(PodGroupObject g) {
  for (std::string_view k :
       {keys::kLastStartTimestamp, keys::kStaleTimestamp, keys::kLastEvictionTimestamp}) {
    g.meta.annotations.erase(k);
  }
  g.last_start = g.stale_since = g.last_eviction = std::nullopt;
  g.has_scheduling_conditions = false;
  return g;
}

// The scheduler's own writes to a PodGroup: its timer annotations and scheduling conditions.
template <>
bool MinorChange(const PodGroupObject& a, const PodGroupObject& b) {
  return WithoutTimers(a) == WithoutTimers(b);
}

template <class T>
void TakeMinor(T&, T&) {}

template <>
void TakeMinor(PodGroupObject& cur, PodGroupObject& from) {
  cur.meta.annotations = std::move(from.meta.annotations);
  cur.last_start = from.last_start;
  cur.stale_since = from.stale_since;
  cur.last_eviction = from.last_eviction;
  cur.has_scheduling_conditions = from.has_scheduling_conditions;
}

// Where a kind's objects live in a ClusterState: one of its vectors, or one of its DRA objects'.
template <class T>
using VectorOf = std::vector<T>& (*)(ClusterState&);
template <auto M>
auto& Member(ClusterState& s) {
  return s.*M;
}
template <auto M>
auto& DraMember(ClusterState& s) {
  return s.dra.*M;
}
template <auto M>
auto& StorageMember(ClusterState& s) {
  return s.storage.*M;
}

template <class T>
struct VectorStore : Informer::KindStore {
  VectorOf<T> of;
  ChangeRule rule;
  VectorStore(VectorOf<T> o, ChangeRule r) : of(o), rule(r) {}

  bool Upsert(const std::string& key, ClusterState& from, ClusterState& world,
              ClusterChanges& changes) override {
    std::vector<T>& src = of(from);
    if (src.empty()) return false;
    std::vector<T>& vec = of(world);
    if (auto it = index.find(key); it != index.end()) {
      T& cur = vec[it->second];
      if (cur == src[0]) return false;
      if (MinorChange(cur, src[0])) {
        // In place, field by field: the cached snapshot keeps views into the object's other
        // strings (name, uid), which a whole-object assignment would free.
        TakeMinor(cur, src[0]);
        return true;
      }
      cur = std::move(src[0]);
      Changed(it->second, changes);
      return true;
    }
    index.emplace(key, vec.size());
    vec.push_back(std::move(src[0]));
    if (rule == ChangeRule::kRebuild) changes.rebuild = true;
    if (rule == ChangeRule::kBindRequests) changes.bind_requests = true;
    return true;
  }
  void Changed(size_t i, ClusterChanges& changes) {
    switch (rule) {
      case ChangeRule::kPods:
        changes.pods.push_back(i);
        break;
      case ChangeRule::kBindRequests:
        changes.bind_requests = true;
        break;
      case ChangeRule::kAppendIncremental:
      case ChangeRule::kRebuild:
        changes.rebuild = true;
        break;
    }
  }
  void OnRemoved(ClusterChanges& changes) override {
    if (rule == ChangeRule::kBindRequests) {
      changes.bind_requests = true;
    } else {
      changes.rebuild = true;
    }
  }
  void EraseRemoved(ClusterState& world) override {
    if (removed.empty()) return;
    std::vector<T>& vec = of(world);
    std::sort(removed.begin(), removed.end());
    size_t out = 0, r = 0;
    for (size_t i = 0; i < vec.size(); ++i) {
      if (r < removed.size() && removed[r] == i) {
        ++r;
        continue;
      }
      if (out != i) vec[out] = std::move(vec[i]);
      ++out;
    }
    vec.resize(out);
    removed.clear();
  }
  void Reindex(ClusterState& world) override {
    const std::vector<T>& vec = of(world);
    index.clear();
    for (size_t i = 0; i < vec.size(); ++i)
      index.emplace(KeyOf(vec[i].meta.ns, vec[i].meta.name), i);
  }
};

// The SchedulingShard: at most one object (the scheduler watches its own shard by name).
struct ShardStore : Informer::KindStore {
  bool Upsert(const std::string& key, ClusterState& from, ClusterState& world,
              ClusterChanges& changes) override {
    if (!from.shard) return false;
    if (world.shard && *world.shard == *from.shard) return false;
    world.shard = std::move(from.shard);
    index[key] = 0;
    changes.rebuild = true;
    return true;
  }
  void OnRemoved(ClusterChanges& changes) override { changes.rebuild = true; }
  void EraseRemoved(ClusterState& world) override {
    if (!removed.empty()) world.shard.reset();
    removed.clear();
  }
  void Reindex(ClusterState&) override {}
};

template <class T>
std::unique_ptr<Informer::KindStore> Store(VectorOf<T> of, ChangeRule rule) {
  return std::make_unique<VectorStore<T>>(of, rule);
}

// DRA objects, NodeResourceTopologies and storage objects rebuild the snapshot (its DRA view,
// NUMA ledger and storage view are built whole).
std::unique_ptr<Informer::KindStore> StoreFor(std::string_view kind) {
  using CS = ClusterState;
  using Dra = DraObjects;
  if (kind == "Pod") return Store<PodObject>(&Member<&CS::pods>, ChangeRule::kPods);
  if (kind == "Node") return Store<NodeObject>(&Member<&CS::nodes>, ChangeRule::kRebuild);
  if (kind == "PodGroup") {
    return Store<PodGroupObject>(&Member<&CS::pod_groups>, ChangeRule::kAppendIncremental);
  }
  if (kind == "Queue") return Store<QueueObject>(&Member<&CS::queues>, ChangeRule::kRebuild);
  if (kind == "PriorityClass") {
    return Store<PriorityClassObject>(&Member<&CS::priority_classes>, ChangeRule::kRebuild);
  }
  if (kind == "Topology") {
    return Store<TopologyObject>(&Member<&CS::topologies>, ChangeRule::kRebuild);
  }
  if (kind == "BindRequest") {
    return Store<BindRequestObject>(&Member<&CS::bind_requests>, ChangeRule::kBindRequests);
  }
  if (kind == "NodeResourceTopology") {
    return Store<NodeTopologyObject>(&Member<&CS::node_topologies>, ChangeRule::kRebuild);
  }
  if (kind == "ResourceClaim") {
    return Store<ResourceClaimObject>(&DraMember<&Dra::claims>, ChangeRule::kRebuild);
  }
  if (kind == "ResourceClaimTemplate") {
    return Store<ResourceClaimTemplateObject>(&DraMember<&Dra::templates>, ChangeRule::kRebuild);
  }
  if (kind == "DeviceClass") {
    return Store<DeviceClassObject>(&DraMember<&Dra::classes>, ChangeRule::kRebuild);
  }
  if (kind == "ResourceSlice") {
    return Store<ResourceSliceObject>(&DraMember<&Dra::slices>, ChangeRule::kRebuild);
  }
  using St = StorageObjects;
  if (kind == "PersistentVolume") {
    return Store<PersistentVolumeObject>(&StorageMember<&St::volumes>, ChangeRule::kRebuild);
  }
  if (kind == "PersistentVolumeClaim") {
    return Store<PersistentVolumeClaimObject>(&StorageMember<&St::claims>, ChangeRule::kRebuild);
  }
  if (kind == "StorageClass") {
    return Store<StorageClassObject>(&StorageMember<&St::classes>, ChangeRule::kRebuild);
  }
  if (kind == "CSINode") {
    return Store<CsiNodeObject>(&StorageMember<&St::csi_nodes>, ChangeRule::kRebuild);
  }
  if (kind == "SchedulingShard") return std::make_unique<ShardStore>();
  return nullptr;
}

}  // namespace

Delta Informer::Decoded(size_t kind, const doc::Node& obj, Delta::Op op) {
  Delta d;
  d.op = op;
  d.kind = kind;
  d.key = KeyOfObject(obj);
  d.rv = ParseRv(obj["metadata"]["resourceVersion"].Scalar());
  if (op != Delta::Op::kUpsert) return d;
  const k8s::ResourceType& type = specs_[kind].type;
  const Status decoded = DecodeObject(obj, type.api_version, type.kind, "api", d.object);
  if (!decoded.ok()) {
    // A malformed object is reported and left out of scheduling, never half-read.
    for (const auto& e : ProblemsOf(decoded)) {
      if (options_.log) options_.log(std::string(type.kind) + ": " + e);
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++decode_errors_;
    d.op = Delta::Op::kDelete;
  }
  return d;
}

// What a reflector (or the hub) hands this informer for one kind: decoded deltas in its queue.
RawSink Informer::SinkFor(size_t kind) {
  auto marker = [this, kind](Delta::Op op) {
    Delta d;
    d.op = op;
    d.kind = kind;
    Push(std::move(d));
  };
  RawSink sink;
  sink.sync_begin = [marker] { marker(Delta::Op::kSyncBegin); };
  sink.upsert = [this, kind](const doc::Node& o) { Push(Decoded(kind, o, Delta::Op::kUpsert)); };
  sink.remove = [this, kind](const doc::Node& o) { Push(Decoded(kind, o, Delta::Op::kDelete)); };
  sink.sync_end = [this, kind, marker] {
    marker(Delta::Op::kSyncEnd);
    std::lock_guard<std::mutex> lock(mu_);
    first_list_done_[kind] = true;
    cv_.notify_all();
  };
  return sink;
}

void Informer::StartWatching(size_t kind) {
  const WatchSpec& spec = specs_[kind];
  if (options_.hub) {
    auto id = options_.hub->Subscribe(spec.type, spec.query, SinkFor(kind), spec.optional);
    if (id.ok()) {
      subscriptions_.emplace_back(kind, *id);
      return;
    }
    if (options_.log) {
      options_.log(std::string(spec.type.kind) + ": watching on its own: " + id.error().message);
    }
  }
  ReflectorOptions ro = options_;
  ro.optional = spec.optional;
  reflectors_.push_back(
      std::make_unique<Reflector>(client_, spec.type, spec.query, SinkFor(kind), ro));
  reflectors_.back()->Start();
}

Informer::Informer(const k8s::ApiClient& client, std::vector<WatchSpec> specs,
                   InformerOptions options)
    : client_(client), specs_(std::move(specs)), options_(std::move(options)) {
  for (size_t k = 0; k < specs_.size(); ++k) stores_.push_back(StoreFor(specs_[k].type.kind));
  first_list_done_.assign(specs_.size(), false);
  applied_list_.assign(specs_.size(), false);
}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  std::lock_guard<std::mutex> lock(watch_mu_);
  for (size_t k = 0; k < specs_.size(); ++k) StartWatching(k);
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  // The sinks never take watch_mu_, so holding it while they finish cannot deadlock.
  std::lock_guard<std::mutex> lock(watch_mu_);
  for (const auto& [kind, id] : subscriptions_) options_.hub->Unsubscribe(id);
  subscriptions_.clear();
  for (auto& r : reflectors_) r->Stop();
}

bool Informer::Synced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::all_of(applied_list_.begin(), applied_list_.end(), [](bool b) { return b; });
}

bool Informer::WaitForFirstLists(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return stop_ ||
           std::all_of(first_list_done_.begin(), first_list_done_.end(), [](bool b) { return b; });
  }) && !stop_;
}

void Informer::Push(Delta d) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(d));
  }
  cv_.notify_all();
}

bool Informer::WaitForDeltas(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return stop_ || !queue_.empty(); }) && !stop_;
}

size_t Informer::KindOf(const k8s::ResourceType& type) const {
  for (size_t k = 0; k < specs_.size(); ++k) {
    if (specs_[k].type.kind == type.kind) return k;
  }
  return specs_.size();
}

void Informer::Assume(const k8s::ResourceType& type, const doc::Node& response) {
  const size_t k = KindOf(type);
  if (k == specs_.size()) return;
  Delta d = Decoded(k, response, Delta::Op::kUpsert);
  if (d.op != Delta::Op::kUpsert) return;
  d.assumed = true;
  Push(std::move(d));
}

void Informer::AssumeDeleted(const k8s::ResourceType& type, const std::string& key) {
  const size_t k = KindOf(type);
  if (k == specs_.size()) return;
  Delta d;
  d.op = Delta::Op::kDelete;
  d.kind = k;
  d.key = key;
  d.assumed = true;
  Push(std::move(d));
}

void Informer::ApplyOne(Delta& d, ClusterState& world, ClusterChanges& changes) {
  KindStore& s = *stores_[d.kind];
  switch (d.op) {
    case Delta::Op::kSyncBegin:
      s.syncing = true;
      s.seen.clear();
      break;
    case Delta::Op::kSyncEnd: {
      std::vector<std::string> gone;
      for (const auto& [key, idx] : s.index) {
        if (!s.seen.count(key)) gone.push_back(key);
      }
      for (const auto& key : gone) {
        if (options_.on_delta) options_.on_delta(d.kind, key, nullptr);
        s.Remove(key, changes);
      }
      s.syncing = false;
      s.seen.clear();
      std::lock_guard<std::mutex> lock(mu_);
      applied_list_[d.kind] = true;
      break;
    }
    case Delta::Op::kUpsert: {
      if (d.assumed && s.Stale(d.key, d.rv)) break;  // the watch was first
      if (!d.assumed) s.watched_rv = std::max(s.watched_rv, d.rv);
      uint64_t& known = s.rv[d.key];
      known = std::max(known, d.rv);
      if (s.syncing) s.seen.insert(d.key);
      if (options_.on_delta) options_.on_delta(d.kind, d.key, &d.object);
      s.Upsert(d.key, d.object, world, changes);
      break;
    }
    case Delta::Op::kDelete:
      if (d.assumed) {
        if (auto it = s.rv.find(d.key); it != s.rv.end() && d.rv != 0 && it->second > d.rv) break;
      } else {
        s.watched_rv = std::max(s.watched_rv, d.rv);
      }
      if (options_.on_delta) options_.on_delta(d.kind, d.key, nullptr);
      s.Remove(d.key, changes);
      break;
  }
}

void Informer::Compact(ClusterState& world, ClusterChanges& changes) {
  bool any = false;
  for (auto& s : stores_) {
    if (s->removed.empty()) continue;
    s->EraseRemoved(world);
    s->Reindex(world);
    any = true;
  }
  // Removals shift indices: the snapshot is rebuilt (ClusterChanges' contract), so the in-place
  // indices collected before no longer matter.
  if (any && changes.rebuild) changes.pods.clear();
}

size_t Informer::Apply(ClusterState& world, ClusterChanges& changes) {
  std::deque<Delta> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(queue_);
  }
  for (Delta& d : batch) ApplyOne(d, world, changes);
  Compact(world, changes);
  return batch.size();
}

InformerStats Informer::stats() const {
  InformerStats out;
  std::unique_lock<std::mutex> watch_lock(watch_mu_);
  for (const auto& ref : reflectors_) out += ref->stats();
  // The hub's counters of the kinds it serves this informer (shared with other subscribers).
  for (const auto& [kind, id] : subscriptions_) out += options_.hub->StatsOf(specs_[kind].type);
  watch_lock.unlock();
  std::lock_guard<std::mutex> lock(mu_);
  out.decode_errors = decode_errors_;
  return out;
}

std::vector<k8s::ResourceType> Informer::AbsentKinds() const {
  std::vector<bool> absent(specs_.size(), false);
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    for (const auto& ref : reflectors_) {
      if (ref->Absent()) absent[KindOf(ref->type())] = true;
    }
    for (const auto& [kind, id] : subscriptions_) {
      absent[kind] = options_.hub->StatsOf(specs_[kind].type).kinds_absent > 0;
    }
  }
  std::vector<k8s::ResourceType> out;
  for (size_t k = 0; k < specs_.size(); ++k) {
    if (absent[k]) out.push_back(specs_[k].type);
  }
  return out;
}

}  // namespace kai::informer
