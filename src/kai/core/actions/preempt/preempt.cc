// preempt: inside one queue, a job evicts preemptible jobs of strictly lower priority
// (KAI actions/preempt). A non-preemptible preemptor over its queue's quota does not preempt.
#include "kai/core/actions/builtin.h"
#include "kai/core/actions/common/disruptive.h"
#include "kai/core/framework/job_tasks.h"

namespace kai::actions {
namespace {

bool NonPreemptibleOverQuota(const Session& s, JobId job) {
  if (s.snap().jobs[job].preemptible) return false;
  const auto reason = s.CheckJobCapacity(job, TasksToAllocate(s, job));
  return reason && reason->kind() == ReasonKind::kNonPreemptibleOverQuota;
}

class PreemptAction : public Action {
 public:
  void Execute(Session& s) override {
    DisruptiveSpec spec;
    spec.action = "preempt";
    spec.rule = "same queue, strictly lower priority";
    spec.not_eligible = "a non-preemptible job over its queue's quota does not preempt";
    spec.solver.action = "preempt";
    spec.solver.validators = DisruptionKind::kPreempt;
    spec.queue_options.skip_within_preemption_delay = true;
    spec.eligible = [](const Session& ss, JobId job) { return !NonPreemptibleOverQuota(ss, job); };
    spec.candidate = [](const Session& ss, JobId preemptor, JobId victim) {
      const SnapJob& p = ss.snap().jobs[preemptor];
      const SnapJob& v = ss.snap().jobs[victim];
      return v.queue == p.queue && v.priority < p.priority &&
             ss.VictimAllowed(DisruptionKind::kPreempt, preemptor, victim);
    };
    spec.candidate_queue = [](const Session& ss, JobId preemptor, QueueId queue) {
      return queue == ss.snap().jobs[preemptor].queue;
    };
    RunDisruptive(s, spec);
  }
};

}  // namespace

std::unique_ptr<Action> MakePreempt() { return std::make_unique<PreemptAction>(); }

}  // namespace kai::actions
