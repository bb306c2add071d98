#pragma once
// The queues' use as reclaim saw it before deciding for one job, for its victims' verdicts.
#include <map>
#include <memory>
#include <vector>

#include "kai/core/framework/eviction.h"
#include "kai/core/framework/session.h"

namespace kai::actions {

class QueueUseBook {
 public:
  // Records the reclaimer's queue and the given queues (those that may hold its victims), with
  // their parents.
  QueueUseBook(const Session& s, JobId reclaimer, const std::vector<QueueId>& queues);
  // The two queues weighed for a victim pod (shared by the victims of one queue).
  std::shared_ptr<const ReclaimQueues> For(PodId victim);

 private:
  void Record(QueueId q);
  QueueId Weighed(QueueId q, QueueId other) const;

  const Session& s_;
  QueueId reclaimer_ = kNone;
  std::map<QueueId, QueueUse> before_;
  std::map<QueueId, std::shared_ptr<const ReclaimQueues>> made_;  // by victim queue
};

}  // namespace kai::actions
