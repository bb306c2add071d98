#pragma once
// Writes that stay off a cycle's critical path, as KAI's status updater keeps them (a queue
// drained by worker threads, S/cache/status_updater/): Kubernetes Events, pending pods'
// conditions, PodGroups' timer annotations and scheduling conditions.
//
// A write is queued under a key. A keyed write replaces a queued write of the same key that has
// not started (only the latest state of an object is worth sending), and two writes of one key
// never run at once (they reach the server in the order they were queued). Keyed writes are
// bounded by the objects there are; unkeyed ones (events) by `capacity`: when it is full an
// event is dropped and counted, as client-go's recorder drops them, never blocking a cycle or
// growing memory.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kai::runtime {

struct WriteStats {
  int64_t sent = 0, dropped = 0, failed = 0, replaced = 0;
};

class BackgroundWriter {
 public:
  // Performs one write; true when the server accepted it.
  using Write = std::function<bool()>;

  BackgroundWriter(size_t capacity, int workers);
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // `key` "" queues an unkeyed write (never replaced, dropped when the queue is full).
  void Put(std::string key, Write write);
  // Drops the queued write of `key` (one that is running finishes).
  void Cancel(const std::string& key);
  // Drops every queued write (counted as dropped); running ones finish.
  void Clear();
  // While paused (a cycle's binds and evictions are being written) queued writes wait: on a
  // busy server they would take a share of its write rate from the binds.
  void Pause();
  void Resume();
  // Waits until every queued write was answered, or `timeout` passed. True when drained.
  bool Flush(std::chrono::milliseconds timeout);
  WriteStats stats() const;
  size_t queued() const;

 private:
  struct Entry {
    std::string key;
    Write write;
  };
  void Work();
  std::list<Entry>::iterator NextRunnable();

  size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::list<Entry> queue_;
  std::unordered_map<std::string, std::list<Entry>::iterator> queued_by_key_;
  std::unordered_set<std::string> running_keys_;
  size_t unkeyed_ = 0, in_flight_ = 0;
  bool stop_ = false;
  bool paused_ = false;
  WriteStats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace kai::runtime
