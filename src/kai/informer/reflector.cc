#include "kai/informer/reflector.h"

#include <algorithm>

namespace kai::informer {

std::string KeyOf(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string k;
  k.reserve(ns.size() + name.size() + 1);
  k.append(ns).append("/").append(name);
  return k;
}

std::string KeyOfObject(const doc::Node& obj) {
  const doc::Node md = obj["metadata"];
  return KeyOf(md["namespace"].Scalar(), md["name"].Scalar());
}

ReflectorStats& operator+=(ReflectorStats& a, const ReflectorStats& b) {
  a.lists += b.lists;
  a.list_errors += b.list_errors;
  a.relists_gone += b.relists_gone;
  a.watches += b.watches;
  a.watch_errors += b.watch_errors;
  a.events += b.events;
  return a;
}

Reflector::Reflector(const k8s::ApiClient& client, k8s::ResourceType type, std::string query,
                     RawSink sink, ReflectorOptions options)
    : client_(client),
      type_(type),
      query_(std::move(query)),
      sink_(std::move(sink)),
      options_(std::move(options)) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

ReflectorStats Reflector::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Reflector::Count(int64_t ReflectorStats::*field) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(stats_.*field);
}

void Reflector::Log(const std::string& line) const {
  if (options_.log) options_.log(std::string(type_.kind) + ": " + line);
}

// Sleeps the backoff in short steps so that a stop is seen; false when stopped.
bool Reflector::Backoff() {
  const double base = static_cast<double>(options_.backoff_initial.count()) *
                      static_cast<double>(1LL << std::min(failures_, 16));
  const double capped = std::min(base, static_cast<double>(options_.backoff_max.count()));
  ++failures_;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(
                         static_cast<int64_t>(capped * (0.5 + 0.5 * client_.clock().jitter())));
  while (std::chrono::steady_clock::now() < until) {
    if (stop_) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !stop_;
}

bool Reflector::List() {
  sink_.sync_begin();
  k8s::ApiClient::ListCallbacks cb;
  cb.page = [&](const doc::Node& items) {
    for (size_t i = 0; i < items.size(); ++i) sink_.upsert(items[i]);
  };
  cb.restart = [&] { sink_.sync_begin(); };
  auto r = client_.List(k8s::CollectionPath(type_), query_, options_.page_size, cb);
  Count(&ReflectorStats::lists);
  if (!r.ok()) {
    Count(&ReflectorStats::list_errors);
    Log("list failed: " + r.error().message);
    return false;
  }
  rv_ = *r;
  sink_.sync_end();
  synced_ = true;
  return true;
}

// One watch event; false ends the watch (an ERROR event, or an unreadable line).
bool Reflector::HandleEvent(std::string_view line, bool& gone) {
  auto parsed = doc::ParseJson(line);
  if (!parsed.ok()) {
    Log("watch: unreadable event: " + parsed.error().message);
    return false;
  }
  const doc::Node ev = parsed->Roots().at(0);
  const std::string_view type = ev["type"].Scalar();
  const doc::Node obj = ev["object"];
  if (type == "ERROR") {
    gone = obj["code"].Scalar() == "410";
    if (!gone) Log("watch error: " + std::string(obj["message"].Scalar()));
    return false;
  }
  if (type == "DELETED") {
    sink_.remove(obj);
  } else if (type != "BOOKMARK") {
    sink_.upsert(obj);
  }
  if (type != "BOOKMARK") Count(&ReflectorStats::events);
  rv_ = std::string(obj["metadata"]["resourceVersion"].Scalar());
  return true;
}

Reflector::WatchEnd Reflector::Watch() {
  bool gone = false, ended_by_event = false;
  auto sink = [&](std::string_view line) {
    if (HandleEvent(line, gone)) return true;
    ended_by_event = true;
    return false;
  };
  // Each watch asks for a random length in [timeout, 2 * timeout), as client-go does, so that
  // many clients do not reconnect at once.
  const int t = options_.watch_timeout_seconds;
  const int timeout = t + static_cast<int>(t * client_.clock().jitter());
  k8s::HttpResponse r =
      client_.Watch(k8s::CollectionPath(type_), query_, rv_, timeout, sink, stop_);
  Count(&ReflectorStats::watches);
  if (gone || r.status == 410) return WatchEnd::kGone;
  if (ended_by_event || !r.ok()) {
    if (!ended_by_event && !stop_) {
      Log("watch ended: " + (r.status ? std::to_string(r.status) + " " : std::string()) +
          r.transport_error);
    }
    Count(&ReflectorStats::watch_errors);
    return WatchEnd::kError;
  }
  return WatchEnd::kClosed;
}

void Reflector::Run() {
  bool need_list = true;
  while (!stop_) {
    if (need_list) {
      if (!List()) {
        if (!Backoff()) return;
        continue;
      }
      need_list = false;
      failures_ = 0;
    }
    switch (Watch()) {
      case WatchEnd::kGone:
        Count(&ReflectorStats::relists_gone);
        need_list = true;
        break;
      case WatchEnd::kError:
        if (!Backoff()) return;
        break;
      case WatchEnd::kClosed:
        failures_ = 0;
        break;
    }
  }
}

}  // namespace kai::informer
