#include "kai/core/actions/common/queue_use.h"

namespace kai::actions {
namespace {

QueueUse UseOf(const SnapQueue& q) {
  return {.name = std::string(q.name),
          .allocated = QueueVector::Of(q.allocated),
          .quota = {q.cpu.quota, q.memory.quota, q.gpu.quota},
          .fair_share = QueueVector::Of(q.fair_share),
          .priority = q.priority};
}

}  // namespace

QueueUseBook::QueueUseBook(const Session& s, JobId reclaimer, const std::vector<QueueId>& queues)
    : s_(s), reclaimer_(s.snap().jobs[reclaimer].queue) {
  Record(reclaimer_);
  for (QueueId q : queues) Record(q);
}

// The queue and its parent, each read once.
void QueueUseBook::Record(QueueId q) {
  for (int level = 0; level < 2 && q != kNone; ++level, q = s_.snap().queues[q].parent) {
    auto [it, inserted] = before_.try_emplace(q);
    if (inserted) it->second = UseOf(s_.snap().queues[q]);
  }
}

// KAI names sibling queues themselves, and otherwise each queue's parent (the queue itself at
// the top).
QueueId QueueUseBook::Weighed(QueueId q, QueueId other) const {
  const QueueId parent = s_.snap().queues[q].parent;
  if (parent == s_.snap().queues[other].parent || parent == kNone) return q;
  return parent;
}

std::shared_ptr<const ReclaimQueues> QueueUseBook::For(PodId victim) {
  const JobId job = s_.snap().pods[victim].job;
  if (job == kNone || reclaimer_ == kNone) return nullptr;
  const QueueId q = s_.snap().jobs[job].queue;
  if (q == kNone || !before_.count(q)) return nullptr;
  auto [it, inserted] = made_.try_emplace(q);
  if (inserted) {
    it->second = std::make_shared<const ReclaimQueues>(
        ReclaimQueues{.victim = before_.at(Weighed(q, reclaimer_)),
                      .reclaimer = before_.at(Weighed(reclaimer_, q))});
  }
  return it->second;
}

}  // namespace kai::actions
