#pragma once
// The loop shared by reclaim, preempt and consolidation: pop pending jobs in job order, pick
// victim candidates, solve, commit the first scenario that works.
#include <functional>
#include <string>

#include "kai/core/actions/common/job_queue.h"
#include "kai/core/actions/common/solver.h"

namespace kai::actions {

struct DisruptiveSpec {
  std::string action;
  std::string rule;               // the rule that allowed the evictions, for explanations
  std::string not_eligible;       // why `eligible` refuses, for explanations
  bool record_queue_use = false;  // victims' verdicts name the queues' use (reclaim)
  SolverConfig solver;
  JobQueueOptions queue_options;
  int64_t max_victim_jobs = -1;                                 // -1 unlimited
  std::function<bool(const Session&, JobId)> eligible;          // preemptor pre-check
  std::function<bool(const Session&, JobId, JobId)> candidate;  // (preemptor, victim)
  // (preemptor, queue): false only where `candidate` is false for every job of the queue, whose
  // victims are then not read at all. Unset: every queue may hold candidates.
  std::function<bool(const Session&, JobId, QueueId)> candidate_queue;
};

void RunDisruptive(Session& session, const DisruptiveSpec& spec);

}  // namespace kai::actions
