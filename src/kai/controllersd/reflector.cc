#include "kai/controllersd/reflector.h"

#include <algorithm>
#include <thread>

namespace kai::controllersd {

Reflector::Reflector(const k8s::ApiClient& client, k8s::ResourceType type, ReflectorSink sink,
                     ReflectorOptions options, const std::atomic<bool>& stop)
    : client_(client),
      type_(type),
      sink_(std::move(sink)),
      options_(std::move(options)),
      stop_(stop) {}

void Reflector::Log(const std::string& line) const {
  if (options_.log) options_.log(std::string(type_.plural) + ": " + line);
}

// The reflector's backoff (800 ms doubling to 30 s, with jitter), in short sleeps so a stop is
// seen; false when stopped.
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
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
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
  auto r = client_.List(k8s::CollectionPath(type_), "", options_.page_size, cb);
  if (!r.ok()) {
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
  const int t = options_.watch_timeout_seconds;
  const int timeout = t + static_cast<int>(t * client_.clock().jitter());
  k8s::HttpResponse r = client_.Watch(k8s::CollectionPath(type_), "", rv_, timeout, sink, stop_);
  if (gone || r.status == 410) return WatchEnd::kGone;
  if (ended_by_event || !r.ok()) {
    if (!ended_by_event && !stop_) {
      Log("watch ended: " + (r.status ? std::to_string(r.status) + " " : std::string()) +
          r.transport_error);
    }
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

}  // namespace kai::controllersd
