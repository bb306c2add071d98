// stalegangeviction: a running gang that fell below its minimum (a pod failed or was evicted) is
// evicted whole once its staleness grace period has passed (KAI actions/stalegangeviction).
// Stale <=> no Succeeded pod, at least one active pod, and some PodSet with fewer active pods
// than its minMember (minSubGroup is not consulted, as in KAI).
// The first cycle that sees it stale stamps the time; a job no longer stale loses the stamp.
#include <memory>
#include <string>

#include "kai/core/actions/builtin.h"
#include "kai/core/framework/statement.h"
#include "kai/core/framework/subgroups.h"

namespace kai::actions {
namespace {

int64_t GracePeriod(const Session& s, const SnapJob& job) {
  if (job.obj->staleness_grace_seconds) return *job.obj->staleness_grace_seconds;
  return s.config().default_staleness_grace_seconds;
}

class StaleGangEvictionAction : public Action {
 public:
  void Execute(Session& s) override {
    for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
      SnapJob& job = s.snap().jobs[j];
      // Every pod waiting (the session's live count): none active, so not stale, and no pod
      // needs reading (a deep backlog is mostly such jobs).
      if (s.AllPodsPending(j) || !IsStaleGang(s.snap(), job)) {
        job.stale_since.reset();
        continue;
      }
      if (!job.stale_since) job.stale_since = s.now();
      const int64_t grace = GracePeriod(s, job);
      if (grace < 0 || s.now() - *job.stale_since < grace) continue;
      Evict(s, j);
    }
  }

 private:
  static void Evict(Session& s, JobId j) {
    Statement stmt(s);
    const SnapJob& job = s.snap().jobs[j];
    static const auto rule = std::make_shared<const std::string>(
        "its gang ran below minMember past the staleness grace period");
    for (PodId p : job.pods) {
      if (!IsActiveAllocated(s.snap().pods[p].status)) continue;
      stmt.Evict(p);
      s.SetEviction(p, {EvictionKind::kStaleGang, "stalegangeviction", kNone, rule, false});
    }
    stmt.Commit();
  }
};

}  // namespace

std::unique_ptr<Action> MakeStaleGangEviction() {
  return std::make_unique<StaleGangEvictionAction>();
}

}  // namespace kai::actions
