#include "kai/framework/job_tasks.h"

#include <algorithm>

namespace kai {

std::vector<PodId> TasksToAllocate(const Session& s, JobId j, bool real) {
  const SnapJob& job = s.snap().jobs[j];
  std::vector<PodId> pending;
  for (PodId p : job.pods) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.status == PodStatus::kPending ||
        (!real && pod.status == PodStatus::kReleasing && pod.virtually_evicted)) {
      pending.push_back(p);
    }
  }
  std::sort(pending.begin(), pending.end(), [&](PodId a, PodId b) { return s.TaskBefore(a, b); });
  const int missing = job.MinAvailable() - job.active_allocated;
  const size_t take = missing > 0 ? static_cast<size_t>(missing) : 1;
  if (pending.size() > take) pending.resize(take);
  return pending;
}

Resources TasksToAllocateRequest(const Session& s, JobId j, bool real) {
  return s.SumRequests(TasksToAllocate(s, j, real));
}

}  // namespace kai
