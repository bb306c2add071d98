#pragma once
// kai run's shared watch cache: one list and one watch per kind for every component of the
// process, however many of them watch that kind and whatever their selectors. The hub keeps the
// raw objects of each kind it watches; each subscriber (a component's informer or controller
// sink) is handed the objects its own query selects, evaluated here with the API server's
// selector semantics (k8s/selector.h), and told when an object leaves its selection (a label
// change) as the server would tell a filtered watch: as a deletion. A subscriber that arrives
// after the kind was listed is replayed what the hub holds, bracketed by sync_begin/sync_end,
// without another list. A relist (after 410 Gone) removes, for every subscriber, what was deleted
// while the watch was down.
//
// Sinks run on the kind's reflector thread (or, for a replay, on the subscribing thread) with
// the kind's lock held: they must return quickly and never call the hub.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kai/core/util/result.h"
#include "kai/kube/client/api_client.h"
#include "kai/kube/informer/reflector.h"

namespace kai::informer {

class WatchHub {
 public:
  WatchHub(const k8s::ApiClient& client, ReflectorOptions options);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Subscribes `sink` to the objects of `type` that `query` (labelSelector=...&fieldSelector=...,
  // URL-escaped) selects; the kind's first subscription starts its reflector, `optional` as that
  // subscription says (reflector.h: an API that may not be served). An error for a query the hub
  // cannot evaluate, or for an `optional` other than the kind's first subscription's (the
  // subscriber then watches on its own).
  Result<uint64_t> Subscribe(const k8s::ResourceType& type, const std::string& query, RawSink sink,
                             bool optional = false);
  // After it returns, the sink is not called again.
  void Unsubscribe(uint64_t id);
  // Stops every reflector; subscribers receive nothing more.
  void Stop();

  struct KindStats {
    std::string kind;
    ReflectorStats reflector;
    size_t objects = 0, subscribers = 0;
  };
  std::vector<KindStats> stats() const;
  // The reflector's counters of one kind (zero when the hub does not watch it).
  ReflectorStats StatsOf(const k8s::ResourceType& type) const;

  struct Kind;  // watch_hub.cc

 private:
  Kind& KindFor(const k8s::ResourceType& type, bool optional);

  const k8s::ApiClient& client_;
  ReflectorOptions options_;
  mutable std::mutex mu_;  // guards kinds_ and next_id_ (not the kinds' contents)
  std::vector<std::unique_ptr<Kind>> kinds_;
  uint64_t next_id_ = 1;
  bool stopped_ = false;
};

}  // namespace kai::informer
