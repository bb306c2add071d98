#include "kai/scheduler/events.h"

namespace kai::scheduler {

EventRecorder::EventRecorder(const k8s::ApiClient& client, size_t capacity, int workers)
    : client_(client), capacity_(capacity) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    stats_.dropped += static_cast<int64_t>(queue_.size());  // shutting down: no waiting on them
    queue_.clear();
    cv_.notify_all();
  }
  for (auto& t : workers_) t.join();
}

void EventRecorder::Record(std::string ns, std::string body) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.size() >= capacity_) {
    ++stats_.dropped;
    return;
  }
  queue_.emplace_back(std::move(ns), std::move(body));
  cv_.notify_one();
}

void EventRecorder::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
}

void EventRecorder::Resume() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = false;
  cv_.notify_all();
}

bool EventRecorder::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, timeout, [&] { return queue_.empty() && in_flight_ == 0; });
}

EventStats EventRecorder::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void EventRecorder::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || (!queue_.empty() && !paused_); });
    if (queue_.empty()) return;  // stopping, nothing left
    auto [ns, body] = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    lock.unlock();
    const k8s::HttpResponse r =
        client_.Create(k8s::CollectionPath(k8s::resources::kEvent, ns), std::move(body));
    lock.lock();
    --in_flight_;
    ++(r.ok() ? stats_.sent : stats_.failed);
    if (queue_.empty() && in_flight_ == 0) idle_.notify_all();
  }
}

}  // namespace kai::scheduler
