#pragma once
// One kind listed and watched with the reflector's fault handling (informer/informer.h), handing
// the raw objects to a sink instead of decoding them into a ClusterState: the status controllers
// keep only the few fields they read (controllers/objects.h), and those include statuses and
// container requests the scheduler's model drops. A relist (first, and after 410 Gone) is
// bracketed by sync_begin/sync_end, so the sink can drop objects deleted while disconnected.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "kai/k8s/api_client.h"
#include "kai/k8s/doc.h"

namespace kai::controllersd {

struct ReflectorSink {
  std::function<void()> sync_begin;
  std::function<void(const doc::Node& obj)> upsert;
  std::function<void(const doc::Node& obj)> remove;
  std::function<void()> sync_end;
};

struct ReflectorOptions {
  int page_size = 500;
  int watch_timeout_seconds = 300;
  std::chrono::milliseconds backoff_initial{800}, backoff_max{30000};
  std::function<void(const std::string&)> log;
};

class Reflector {
 public:
  Reflector(const k8s::ApiClient& client, k8s::ResourceType type, ReflectorSink sink,
            ReflectorOptions options, const std::atomic<bool>& stop);
  // Lists and watches until `stop`.
  void Run();
  bool Synced() const { return synced_; }

 private:
  enum class WatchEnd { kClosed, kGone, kError };
  bool List();
  WatchEnd Watch();
  bool HandleEvent(std::string_view line, bool& gone);
  bool Backoff();
  void Log(const std::string& line) const;

  const k8s::ApiClient& client_;
  k8s::ResourceType type_;
  ReflectorSink sink_;
  ReflectorOptions options_;
  const std::atomic<bool>& stop_;
  std::atomic<bool> synced_{false};
  std::string rv_;
  int failures_ = 0;
};

}  // namespace kai::controllersd
