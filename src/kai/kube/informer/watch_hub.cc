#include "kai/kube/informer/watch_hub.h"

#include <unordered_map>
#include <unordered_set>

#include "kai/core/k8s/selector.h"

namespace kai::informer {
namespace {

struct Subscriber {
  uint64_t id = 0;
  k8s::Selector selector;
  RawSink sink;
  std::unordered_set<std::string> holds;  // keys the subscriber was given and not told gone
};

}  // namespace

struct WatchHub::Kind {
  k8s::ResourceType type;
  bool optional = false;
  std::mutex mu;  // guards everything below; sinks are called with it held
  std::unordered_map<std::string, doc::Document> objects;
  std::unordered_set<std::string> seen;  // keys of the list in progress
  bool syncing = false, listed = false;
  std::vector<std::unique_ptr<Subscriber>> subs;
  std::unique_ptr<Reflector> reflector;

  RawSink Sink() {
    return RawSink{[this] { SyncBegin(); }, [this](const doc::Node& o) { Upsert(o); },
                   [this](const doc::Node& o) { Remove(o); }, [this] { SyncEnd(); }};
  }

  void SyncBegin() {
    std::lock_guard<std::mutex> lock(mu);
    syncing = true;
    seen.clear();
    for (auto& s : subs) {
      s->holds.clear();  // the subscriber drops at its sync_end what this list does not bring
      s->sink.sync_begin();
    }
  }

  void Upsert(const doc::Node& obj) {
    std::string key = KeyOfObject(obj);
    std::lock_guard<std::mutex> lock(mu);
    for (auto& s : subs) Offer(*s, key, obj);
    if (syncing) seen.insert(key);
    // managedFields (server-side apply bookkeeping, often a third of an object) is read by no
    // component; client-go's informers are commonly set to drop it too.
    objects.insert_or_assign(std::move(key), doc::CopyOf(obj, {"metadata", "managedFields"}));
  }

  void Remove(const doc::Node& obj) {
    const std::string key = KeyOfObject(obj);
    std::lock_guard<std::mutex> lock(mu);
    Forget(key, obj);
  }

  void SyncEnd() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> stale;
    for (const auto& [key, d] : objects) {
      if (!seen.count(key)) stale.push_back(key);
    }
    for (const auto& key : stale) Forget(key, objects.at(key).Roots().at(0));
    syncing = false;
    listed = true;
    seen.clear();
    for (auto& s : subs) s->sink.sync_end();
  }

  // Hands `obj` to `s` when it selects it; tells it the object is gone when it no longer does.
  static void Offer(Subscriber& s, const std::string& key, const doc::Node& obj) {
    if (k8s::Matches(s.selector, obj)) {
      s.holds.insert(key);
      s.sink.upsert(obj);
    } else if (s.holds.erase(key)) {
      s.sink.remove(obj);
    }
  }

  // Called with mu held. `obj` may be the stored document, so it is erased last.
  void Forget(const std::string& key, const doc::Node& obj) {
    for (auto& s : subs) {
      if (s->holds.erase(key)) s->sink.remove(obj);
    }
    objects.erase(key);
  }

  // Called with mu held: what the hub holds, for a subscriber that arrives late.
  void Replay(Subscriber& s) {
    if (!listed && !syncing) return;  // the reflector's first sync_begin is still to come
    s.sink.sync_begin();
    for (const auto& [key, d] : objects) {
      if (syncing && !seen.count(key)) continue;  // may be stale: the list will tell
      Offer(s, key, d.Roots().at(0));
    }
    if (!syncing) s.sink.sync_end();
  }
};

WatchHub::WatchHub(const k8s::ApiClient& client, ReflectorOptions options)
    : client_(client), options_(std::move(options)) {}

WatchHub::~WatchHub() { Stop(); }

WatchHub::Kind& WatchHub::KindFor(const k8s::ResourceType& type, bool optional) {
  for (auto& k : kinds_) {
    if (k->type.kind == type.kind && k->type.api_version == type.api_version) return *k;
  }
  auto k = std::make_unique<Kind>();
  k->type = type;
  k->optional = optional;
  ReflectorOptions ro = options_;
  ro.optional = optional;
  k->reflector = std::make_unique<Reflector>(client_, type, "", k->Sink(), ro);
  kinds_.push_back(std::move(k));
  kinds_.back()->reflector->Start();
  return *kinds_.back();
}

Result<uint64_t> WatchHub::Subscribe(const k8s::ResourceType& type, const std::string& query,
                                     RawSink sink, bool optional) {
  auto selector = k8s::ParseQuerySelector(query);
  if (!selector.ok()) return selector.error();
  auto s = std::make_unique<Subscriber>();
  s->selector = std::move(*selector);
  s->sink = std::move(sink);
  Kind* kind = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return Error{"watch hub: stopped"};
    kind = &KindFor(type, optional);
    if (kind->optional != optional) {
      return Error{"watch hub: " + std::string(type.kind) + " is watched as " +
                   (kind->optional ? "an optional" : "a required") + " kind by another component"};
    }
    s->id = next_id_++;
  }
  const uint64_t id = s->id;
  std::lock_guard<std::mutex> lock(kind->mu);
  kind->Replay(*s);
  kind->subs.push_back(std::move(s));
  return id;
}

void WatchHub::Unsubscribe(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& k : kinds_) {
    std::lock_guard<std::mutex> kl(k->mu);
    std::erase_if(k->subs, [id](const auto& s) { return s->id == id; });
  }
}

void WatchHub::Stop() {
  std::vector<Reflector*> reflectors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    for (auto& k : kinds_) reflectors.push_back(k->reflector.get());
  }
  for (Reflector* r : reflectors) r->Stop();
}

std::vector<WatchHub::KindStats> WatchHub::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<KindStats> out;
  for (const auto& k : kinds_) {
    std::lock_guard<std::mutex> kl(k->mu);
    out.push_back(
        {std::string(k->type.kind), k->reflector->stats(), k->objects.size(), k->subs.size()});
  }
  return out;
}

ReflectorStats WatchHub::StatsOf(const k8s::ResourceType& type) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& k : kinds_) {
    if (k->type.kind == type.kind) return k->reflector->stats();
  }
  return {};
}

}  // namespace kai::informer
