// reclaim: a queue below its fair share takes resources back from queues above theirs, evicting
// preemptible workloads of other queues (KAI actions/reclaim). The proportion plugin decides which
// queues may reclaim, which victims qualify, and whether a scenario keeps fairness.
#include "kai/core/actions/builtin.h"
#include "kai/core/actions/common/disruptive.h"

namespace kai::actions {
namespace {

class ReclaimAction : public Action {
 public:
  void Execute(Session& s) override {
    DisruptiveSpec spec;
    spec.action = "reclaim";
    spec.rule = "the reclaiming queue is below its fair share and the victim's queue above its own";
    spec.not_eligible = "the job would take its queue above its fair share";
    spec.record_queue_use = true;
    spec.solver.action = "reclaim";
    spec.solver.validators = DisruptionKind::kReclaim;
    spec.queue_options.skip_within_preemption_delay = true;
    spec.eligible = [](const Session& ss, JobId job) { return ss.CanReclaim(job); };
    spec.candidate = [](const Session& ss, JobId preemptor, JobId victim) {
      const SnapJob& v = ss.snap().jobs[victim];
      return v.queue != ss.snap().jobs[preemptor].queue &&
             ss.VictimAllowed(DisruptionKind::kReclaim, preemptor, victim);
    };
    spec.candidate_queue = [](const Session& ss, JobId preemptor, QueueId queue) {
      return queue != ss.snap().jobs[preemptor].queue &&
             ss.VictimQueueAllowed(DisruptionKind::kReclaim, preemptor, queue);
    };
    RunDisruptive(s, spec);
  }
};

}  // namespace

std::unique_ptr<Action> MakeReclaim() { return std::make_unique<ReclaimAction>(); }

}  // namespace kai::actions
