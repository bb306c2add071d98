#include "kai/kube/runtime/background.h"

namespace kai::runtime {

BackgroundWriter::BackgroundWriter(size_t capacity, int workers) : capacity_(capacity) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  Clear();  // shutting down: no waiting on what is queued
  for (auto& t : workers_) t.join();
}

void BackgroundWriter::Put(std::string key, Write write) {
  std::lock_guard<std::mutex> lock(mu_);
  if (key.empty()) {
    if (unkeyed_ >= capacity_) {
      ++stats_.dropped;
      return;
    }
    ++unkeyed_;
    queue_.push_back({std::move(key), std::move(write)});
  } else if (auto it = queued_by_key_.find(key); it != queued_by_key_.end()) {
    it->second->write = std::move(write);  // keeps its place in the queue
    ++stats_.replaced;
  } else {
    queue_.push_back({key, std::move(write)});
    queued_by_key_.emplace(std::move(key), std::prev(queue_.end()));
  }
  cv_.notify_one();
}

void BackgroundWriter::Cancel(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queued_by_key_.find(key);
  if (it == queued_by_key_.end()) return;
  queue_.erase(it->second);
  queued_by_key_.erase(it);
  if (queue_.empty() && in_flight_ == 0) idle_.notify_all();
}

void BackgroundWriter::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.dropped += static_cast<int64_t>(queue_.size());
  queue_.clear();
  queued_by_key_.clear();
  unkeyed_ = 0;
  if (in_flight_ == 0) idle_.notify_all();
}

void BackgroundWriter::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
}

void BackgroundWriter::Resume() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = false;
  cv_.notify_all();
}

bool BackgroundWriter::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, timeout, [&] { return queue_.empty() && in_flight_ == 0; });
}

WriteStats BackgroundWriter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

size_t BackgroundWriter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

// The oldest write whose key has no write running (end() when there is none).
std::list<BackgroundWriter::Entry>::iterator BackgroundWriter::NextRunnable() {
  if (paused_) return queue_.end();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->key.empty() || !running_keys_.count(it->key)) return it;
  }
  return queue_.end();
}

void BackgroundWriter::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    auto next = queue_.end();
    cv_.wait(lock, [&] { return stop_ || (next = NextRunnable()) != queue_.end(); });
    if (stop_) return;  // the destructor counted what is left
    Entry e = std::move(*next);
    queue_.erase(next);
    if (e.key.empty()) {
      --unkeyed_;
    } else {
      queued_by_key_.erase(e.key);
      running_keys_.insert(e.key);
    }
    ++in_flight_;
    lock.unlock();
    const bool ok = e.write();
    lock.lock();
    --in_flight_;
    ++(ok ? stats_.sent : stats_.failed);
    if (!e.key.empty()) {
      running_keys_.erase(e.key);
      cv_.notify_all();  // a write of this key may have waited for this one
    }
    if (queue_.empty() && in_flight_ == 0) idle_.notify_all();
  }
}

}  // namespace kai::runtime
