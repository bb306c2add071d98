#include "kai/core/whatif/metrics.h"

#include <algorithm>

namespace kai::whatif {

int64_t Percentile(const std::vector<int64_t>& sorted, int p) {
  if (sorted.empty()) return 0;
  const size_t n = sorted.size();
  const size_t rank = (static_cast<size_t>(p) * n + 99) / 100;  // ceil(p/100 * n)
  return sorted[std::clamp<size_t>(rank, 1, n) - 1];
}

namespace {

void AddJobs(const RunResult& run, std::vector<QueueSummary>& queues) {
  for (const JobOutcome& j : run.jobs) {
    if (j.submit >= run.until_seconds) continue;  // submitted after the run's end
    auto it = std::find_if(queues.begin(), queues.end(),
                           [&](const QueueSummary& q) { return q.name == j.queue; });
    if (it == queues.end()) continue;
    ++it->jobs;
    it->started += j.first_start >= 0;
    it->completed += j.completed >= 0;
    it->restarts += j.restarts;
    it->waits.push_back(j.Wait(run.until_seconds));
  }
}

void FinishWaits(QueueSummary& q) {
  std::sort(q.waits.begin(), q.waits.end());
  q.wait_p50 = Percentile(q.waits, 50);
  q.wait_p95 = Percentile(q.waits, 95);
  q.wait_max = q.waits.empty() ? 0 : q.waits.back();
}

}  // namespace

VariantSummary Summarize(std::string name, RunResult run) {
  VariantSummary v;
  v.name = std::move(name);
  for (const QueueTotals& t : run.queues) {
    QueueSummary q;
    q.name = t.name;
    q.parent = t.parent;
    q.used_milli_gpu_seconds = t.used_milli_gpu_seconds;
    q.fair_milli_gpu_seconds = t.fair_milli_gpu_seconds;
    q.evictions_suffered = t.evictions_suffered;
    q.evictions_caused = t.evictions_caused;
    v.queues.push_back(std::move(q));
  }
  AddJobs(run, v.queues);
  std::erase_if(v.queues, [](const QueueSummary& q) {
    return q.jobs == 0 && q.fair_milli_gpu_seconds == 0 && q.used_milli_gpu_seconds == 0;
  });
  for (QueueSummary& q : v.queues) FinishWaits(q);
  v.run = std::move(run);
  return v;
}

int64_t BucketLength(const RunResult& r, size_t bucket) {
  const int64_t start = static_cast<int64_t>(bucket) * r.bucket_seconds;
  return std::max<int64_t>(0, std::min(r.bucket_seconds, r.until_seconds - start));
}

double BucketUtilisation(const RunResult& r, size_t bucket) {
  const int64_t len = BucketLength(r, bucket);
  if (len == 0 || r.capacity_milli_gpu == 0) return 0;
  return static_cast<double>(r.cluster_allocated[bucket]) /
         (static_cast<double>(len) * static_cast<double>(r.capacity_milli_gpu));
}

double MeanUtilisation(const RunResult& r) {
  if (r.until_seconds == 0 || r.capacity_milli_gpu == 0) return 0;
  int64_t sum = 0;
  for (int64_t b : r.cluster_allocated) sum += b;
  return static_cast<double>(sum) /
         (static_cast<double>(r.until_seconds) * static_cast<double>(r.capacity_milli_gpu));
}

}  // namespace kai::whatif
