#pragma once
// Watches -> ClusterState. One reflector (reflector.h) per watched kind lists and watches it with
// client-go's reflector semantics (410 Gone -> relist and reconcile, so objects deleted while
// disconnected are removed), or, inside kai run, the process's shared watch hub (watch_hub.h)
// hands it the objects its query selects. Reflector threads only decode and queue deltas; the
// scheduler's thread applies them to its ClusterState between cycles (Apply), so a cycle never sees
// a half-applied change, and learns which objects changed, so the incremental snapshot derives only
// those.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/snapshot/cache.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/reflector.h"

namespace kai::informer {

class WatchHub;

struct WatchSpec {
  k8s::ResourceType type;
  std::string query;      // labelSelector=...&fieldSelector=... (URL-escaped), may be empty
  bool optional = false;  // an API the cluster may not serve (reflector.h): absent = empty
};

// One change for one kind, decoded on a reflector thread.
struct Delta {
  enum class Op : uint8_t { kUpsert, kDelete, kSyncBegin, kSyncEnd };
  Op op = Op::kUpsert;
  size_t kind = 0;       // index into the informer's specs
  std::string key;       // namespace/name
  ClusterState object;   // the one decoded object (kUpsert)
  uint64_t rv = 0;       // the object's resourceVersion (0: unknown)
  bool assumed = false;  // a write of kai's own, applied only when no newer state is known
};

// The reflectors' counters (the hub's, for the kinds it serves) and the informer's own.
struct InformerStats : ReflectorStats {
  int64_t decode_errors = 0;
};

// The reflectors' options (`log` also takes decode errors naming the object and field) and the
// informer's own.
struct InformerOptions : ReflectorOptions {
  // Called by Apply, on its thread, for each upsert (the decoded object; echoes of kai's own
  // writes included) and each deletion (a watch event or a relist that no longer has the key;
  // `object` null) before the world takes it. Front ends that react to changes (the binder)
  // use it instead of diffing the world.
  std::function<void(size_t kind, const std::string& key, const ClusterState* object)> on_delta;
  // kai run's shared watch cache; null: the informer lists and watches on its own.
  WatchHub* hub = nullptr;
};

class Informer {
 public:
  Informer(const k8s::ApiClient& client, std::vector<WatchSpec> specs, InformerOptions options);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start();
  void Stop();
  // True once every kind has been listed at least once (and those lists applied by Apply).
  bool Synced() const;
  // Blocks until every reflector has delivered its first list, or `timeout` passes.
  bool WaitForFirstLists(std::chrono::milliseconds timeout);

  // Blocks until a delta is queued (true) or `timeout` passes or Stop was called (false).
  bool WaitForDeltas(std::chrono::milliseconds timeout);

  // Applies every queued delta to `world`; records in `changes` what the snapshot cache must
  // re-derive. Returns the number of deltas applied.
  size_t Apply(ClusterState& world, ClusterChanges& changes);

  // Writes kai made itself, applied at once (the object as the server answered), so the next
  // cycle counts them before the watch echoes them; the echo is then a no-op.
  // `response` is the object the server answered (its JSON); the store takes it unless a newer
  // resourceVersion of the same key was applied already.
  void Assume(const k8s::ResourceType& type, const doc::Node& response);
  void AssumeDeleted(const k8s::ResourceType& type, const std::string& key);

  InformerStats stats() const;
  // The optional kinds whose API is not served (or not granted) now, in watch order.
  std::vector<k8s::ResourceType> AbsentKinds() const;

  struct KindStore;  // per-kind bookkeeping (informer.cc)

 private:
  RawSink SinkFor(size_t kind);
  void StartWatching(size_t kind);
  Delta Decoded(size_t kind, const doc::Node& obj, Delta::Op op);
  void Push(Delta d);
  void ApplyOne(Delta& d, ClusterState& world, ClusterChanges& changes);
  void Compact(ClusterState& world, ClusterChanges& changes);
  size_t KindOf(const k8s::ResourceType& type) const;

  const k8s::ApiClient& client_;
  std::vector<WatchSpec> specs_;
  InformerOptions options_;
  mutable std::mutex watch_mu_;  // guards the two below (Start, Stop and stats may race)
  std::vector<std::unique_ptr<Reflector>> reflectors_;      // kinds watched on their own
  std::vector<std::pair<size_t, uint64_t>> subscriptions_;  // kinds the hub serves: kind, id
  std::vector<std::unique_ptr<KindStore>> stores_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Delta> queue_;
  std::vector<bool> first_list_done_;  // by kind, set by reflectors
  std::vector<bool> applied_list_;     // by kind, set by Apply
  std::atomic<bool> stop_{false};
  int64_t decode_errors_ = 0;
};

}  // namespace kai::informer
