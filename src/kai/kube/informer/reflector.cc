#include "kai/kube/informer/reflector.h"

#include "kai/core/k8s/watch_event.h"

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
  a.lists_absent += b.lists_absent;
  a.kinds_absent += b.kinds_absent;
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
  ReflectorStats s = stats_;
  s.kinds_absent = Absent() ? 1 : 0;
  return s;
}

void Reflector::Count(int64_t ReflectorStats::*field) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(stats_.*field);
}

void Reflector::Log(const std::string& line) const {
  if (options_.log) options_.log(std::string(type_.kind) + ": " + line);
}

// Sleeps in short steps so that a stop is seen; false when stopped.
bool Reflector::SleepFor(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (stop_) return false;
    std::this_thread::sleep_for(std::min(d, std::chrono::milliseconds(20)));
  }
  return !stop_;
}

// The error backoff: exponential with jitter; false when stopped.
bool Reflector::Backoff() {
  const double base = static_cast<double>(options_.backoff_initial.count()) *
                      static_cast<double>(1LL << std::min(failures_, 16));
  const double capped = std::min(base, static_cast<double>(options_.backoff_max.count()));
  ++failures_;
  return SleepFor(std::chrono::milliseconds(
      static_cast<int64_t>(capped * (0.5 + 0.5 * client_.clock().jitter()))));
}

namespace {

// "resource.k8s.io/v1 resourceslices"
std::string ApiName(const k8s::ResourceType& t) {
  return std::string(t.api_version) + " " + std::string(t.plural);
}

// "resourceslices.resource.k8s.io" (RBAC's resource.group), "nodes" for the core group.
std::string RbacName(const k8s::ResourceType& t) {
  const size_t slash = t.api_version.find('/');
  if (slash == std::string_view::npos) return std::string(t.plural);
  return std::string(t.plural) + "." + std::string(t.api_version.substr(0, slash));
}

std::string Seconds(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

}  // namespace

// An optional kind's list answered 404 or 403: a list of nothing (the sink drops what it held),
// said once per change of answer.
void Reflector::MarkAbsent(long status) {
  Count(&ReflectorStats::lists_absent);
  const bool said = absent_.exchange(status) == status;  // before the sink learns of the list
  sink_.sync_end();
  synced_ = true;
  if (said) return;
  const std::string recheck =
      "; counted as empty, re-checking every " + Seconds(options_.recheck_absent);
  if (status == 403) {
    Log(ApiName(type_) + " forbidden (403): the account lacks list and watch on " +
        RbacName(type_) + " (see deploy/rbac)" + recheck);
  } else {
    Log(ApiName(type_) + " not served" + recheck);
  }
}

void Reflector::MarkServed() {
  if (absent_.exchange(0) != 0) Log(ApiName(type_) + " is served now: listed, watching it");
}

bool Reflector::List() {
  sink_.sync_begin();
  k8s::ApiClient::ListCallbacks cb;
  cb.page = [&](const doc::Node& items) {
    for (size_t i = 0; i < items.size(); ++i) sink_.upsert(items[i]);
  };
  cb.restart = [&] { sink_.sync_begin(); };
  long failed = 0;
  cb.failed = [&](long status) { failed = status; };
  auto r = client_.List(k8s::CollectionPath(type_), query_, options_.page_size, cb);
  Count(&ReflectorStats::lists);
  if (!r.ok()) {
    if (options_.optional && (failed == 404 || failed == 403)) {
      MarkAbsent(failed);
      return true;
    }
    Count(&ReflectorStats::list_errors);
    Log("list failed: " + r.error().message);
    return false;
  }
  MarkServed();
  rv_ = *r;
  sink_.sync_end();
  synced_ = true;
  return true;
}

// One watch event; false ends the watch (an ERROR event, or a line that is not a well-formed
// event: the watch restarts from the last resourceVersion kept).
bool Reflector::HandleEvent(std::string_view line, bool& gone) {
  auto ev = k8s::ParseWatchEvent(line);
  if (!ev.ok()) {
    Log("watch " + std::string(type_.kind) + ": unreadable event: " + ev.error().message);
    return false;
  }
  const doc::Node obj = ev->object();
  switch (ev->type()) {
    case k8s::WatchEventType::kError:
      gone = obj["code"].Scalar() == "410";
      if (!gone) Log("watch error: " + std::string(obj["message"].Scalar()));
      return false;
    case k8s::WatchEventType::kDeleted:
      sink_.remove(obj);
      break;
    case k8s::WatchEventType::kAdded:
    case k8s::WatchEventType::kModified:
      sink_.upsert(obj);
      break;
    case k8s::WatchEventType::kBookmark:
      break;
  }
  if (ev->type() != k8s::WatchEventType::kBookmark) Count(&ReflectorStats::events);
  rv_ = std::string(ev->resource_version());
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
  if (r.status == 404) {
    // The API went away (a CRD deleted): the list says what follows (for an optional kind,
    // not served: its objects are gone).
    Count(&ReflectorStats::watch_errors);
    Log("watch: " + ApiName(type_) + " not found (gone?), listing again");
    return WatchEnd::kNotFound;
  }
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
      if (Absent()) {
        if (!SleepFor(options_.recheck_absent)) return;
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
      case WatchEnd::kNotFound:
        need_list = true;
        if (!Backoff()) return;
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
