#pragma once
// Kubernetes Events, written off the cycle's path: a bounded queue drained by a few worker
// threads. Events are best-effort, as client-go's recorder makes them: when the queue is full
// an event is dropped and counted, never blocking a cycle or growing memory.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kai/k8s/api_client.h"

namespace kai::scheduler {

struct EventStats {
  int64_t sent = 0, dropped = 0, failed = 0;
};

class EventRecorder {
 public:
  EventRecorder(const k8s::ApiClient& client, size_t capacity = 20000, int workers = 4);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues an Event (its JSON body) for the namespace's events collection.
  void Record(std::string ns, std::string body);
  // While paused (a cycle's binds and evictions are being written) queued events wait: on a
  // busy server they would take half of its write rate from the binds.
  void Pause();
  void Resume();
  // Waits until every queued event was answered, or `timeout` passed. True when drained.
  bool Flush(std::chrono::milliseconds timeout);
  EventStats stats() const;

 private:
  void Work();
  const k8s::ApiClient& client_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::pair<std::string, std::string>> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  bool paused_ = false;
  EventStats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace kai::scheduler
