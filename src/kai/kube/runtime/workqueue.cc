#include "kai/kube/runtime/workqueue.h"

#include <algorithm>

namespace kai::runtime {

WorkQueue::WorkQueue(RateLimit limit, NowFn now) : limit_(limit), now_(std::move(now)) {
  if (!now_) now_ = [] { return Clock::now(); };
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shut_down_ || queued_.count(key)) return;
  if (processing_.count(key)) {
    dirty_.insert(key);
    return;
  }
  queued_.insert(key);
  queue_.push_back(key);
  if (metrics_) metrics_->Added(key, queue_.size());
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (delay.count() <= 0) {
    AddLocked(key);
    return;
  }
  const Clock::time_point at = now_() + delay;
  if (auto it = delayed_at_.find(key); it != delayed_at_.end()) {
    if (it->second <= at) return;
    auto range = delayed_.equal_range(it->second);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == key) {
        delayed_.erase(d);
        break;
      }
    }
  }
  delayed_at_[key] = at;
  delayed_.emplace(at, key);
  cv_.notify_all();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int n = failures_[key]++;
    if (metrics_) metrics_->Retried();
    const int64_t base = limit_.base.count();
    const int64_t cap = limit_.max.count();
    int64_t d = base;
    for (int i = 0; i < n && d < cap; ++i) d *= 2;
    delay = std::chrono::milliseconds(std::min(d, cap));
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

int WorkQueue::Failures(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked() {
  const Clock::time_point now = now_();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    delayed_at_.erase(key);
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    PromoteDueLocked();
    if (shut_down_) return std::nullopt;
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      queued_.erase(key);
      processing_.insert(key);
      if (metrics_) metrics_->Taken(key, queue_.size());
      return key;
    }
    auto wake = deadline;
    if (!delayed_.empty()) {
      // The injected clock may not be the real one: wake at least every 50 ms to look again.
      wake = std::min(wake, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    }
    if (cv_.wait_until(lock, wake) == std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline) {
      PromoteDueLocked();
      if (queue_.empty() || shut_down_) return std::nullopt;
    }
  }
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (metrics_) metrics_->Done(key);
  if (dirty_.erase(key)) AddLocked(key);
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  queue_.clear();
  queued_.clear();
  dirty_.clear();
  delayed_.clear();
  delayed_at_.clear();
  cv_.notify_all();
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

size_t WorkQueue::Waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delayed_.size();
}

bool WorkQueue::Processing(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return processing_.count(key) > 0;
}

void RunWorker(WorkQueue& queue, const ReconcileFn& reconcile, const std::function<bool()>& stop,
               const MetricsFor& metrics) {
  for (;;) {
    auto key = queue.Get(std::chrono::milliseconds(500));
    if (!key) {
      if (stop()) return;
      continue;
    }
    serve::ReconcileMetrics* m = metrics ? metrics(*key) : nullptr;
    if (m) m->Active(1);
    const auto started = std::chrono::steady_clock::now();
    const bool done = reconcile(*key);
    if (m) {
      m->Observe(std::chrono::steady_clock::now() - started,
                 done ? serve::ReconcileMetrics::Result::kSuccess
                      : serve::ReconcileMetrics::Result::kError);
      m->Active(-1);
    }
    if (done) {
      queue.Forget(*key);
    } else {
      queue.AddRateLimited(*key);
    }
    queue.Done(*key);
  }
}

}  // namespace kai::runtime
