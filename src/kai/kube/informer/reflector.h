#pragma once
// One kind listed and watched with client-go's reflector semantics, handing the raw objects to a
// sink: a paged list; a watch from the list's resourceVersion with bookmarks; 410 Gone -> relist;
// a dropped watch resumes from the last resourceVersion; errors back off exponentially (800 ms
// doubling to 30 s, with jitter). A list (the first, and each relist) is bracketed by
// sync_begin/sync_end, so a sink drops what the list no longer holds (objects deleted while
// disconnected). The informer decodes what it receives into a ClusterState, the status
// controllers keep the few fields they read, and kai run's watch hub keeps the raw objects for
// every component of the process.
//
// An optional kind is one that many clusters do not serve (resource.k8s.io/v1 before Kubernetes
// 1.34, a CRD such as NodeResourceTopology not installed): a list answered 404, or 403 (the
// right not granted), counts as a list of nothing (the sink is synced, and empties what it
// held), is logged once naming the API (and for 403 the missing right), and is tried again every
// `recheck_absent`, so that the API installed later is watched without a restart.
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "kai/core/k8s/doc.h"
#include "kai/kube/client/api_client.h"

namespace kai::informer {

// Called on the reflector's thread, one call at a time.
struct RawSink {
  std::function<void()> sync_begin;
  std::function<void(const doc::Node& obj)> upsert;
  std::function<void(const doc::Node& obj)> remove;
  std::function<void()> sync_end;
};

struct ReflectorOptions {
  int page_size = 500;
  int watch_timeout_seconds = 300;  // each watch asks the server to end it after 5-10 minutes
  std::chrono::milliseconds backoff_initial{800}, backoff_max{30000};
  std::function<void(const std::string&)> log;
  bool optional = false;  // 404 and 403 on a list: not served (above), not an error
  std::chrono::milliseconds recheck_absent{60000};
};

struct ReflectorStats {
  int64_t lists = 0, list_errors = 0, relists_gone = 0, watches = 0, watch_errors = 0;
  int64_t events = 0;
  int64_t lists_absent = 0;  // lists of an optional kind answered 404 or 403
  int64_t kinds_absent = 0;  // kinds not served (or not granted) now: a gauge, 0 or 1 per kind
};

ReflectorStats& operator+=(ReflectorStats& a, const ReflectorStats& b);

// The key a store keeps an object under: "namespace/name", or "name" for cluster-scoped objects.
std::string KeyOf(std::string_view ns, std::string_view name);
// The key of a raw Kubernetes object (its metadata.namespace and metadata.name).
std::string KeyOfObject(const doc::Node& obj);

class Reflector {
 public:
  // `query`: labelSelector=...&fieldSelector=... (URL-escaped), may be empty.
  Reflector(const k8s::ApiClient& client, k8s::ResourceType type, std::string query, RawSink sink,
            ReflectorOptions options);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Runs the list-and-watch loop on a thread of its own until Stop.
  void Start();
  void Stop();
  // True once the first list has reached the sink.
  bool Synced() const { return synced_; }
  // An optional kind whose last list was answered 404 or 403 (counted as empty meanwhile).
  bool Absent() const { return absent_ != 0; }
  ReflectorStats stats() const;
  const k8s::ResourceType& type() const { return type_; }

 private:
  enum class WatchEnd { kClosed, kGone, kNotFound, kError };
  void Run();
  bool List();
  void MarkAbsent(long status);
  void MarkServed();
  WatchEnd Watch();
  bool HandleEvent(std::string_view line, bool& gone);
  bool Backoff();
  bool SleepFor(std::chrono::milliseconds d);
  void Log(const std::string& line) const;
  void Count(int64_t ReflectorStats::*field);

  const k8s::ApiClient& client_;
  k8s::ResourceType type_;
  std::string query_;
  RawSink sink_;
  ReflectorOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<long> absent_{0};  // the status (404, 403) an optional kind's list answered; 0
  std::thread thread_;
  std::string rv_;
  int failures_ = 0;
  mutable std::mutex mu_;
  ReflectorStats stats_;
};

}  // namespace kai::informer
