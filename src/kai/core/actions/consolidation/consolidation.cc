// consolidation: move running preemptible pods to other nodes so that a pending job fits, when
// every moved pod finds a new home (KAI actions/consolidation). Runs only under binpack (the
// config drops it under spread) and not at all when max-consolidation-preemptees is 0.
#include "kai/core/actions/builtin.h"
#include "kai/core/actions/common/disruptive.h"
#include "kai/core/framework/job_tasks.h"

namespace kai::actions {
namespace {

class ConsolidationAction : public Action {
 public:
  void Execute(Session& s) override {
    const int64_t max_victims = s.config().max_consolidation_preemptees;
    if (max_victims == 0) return;
    DisruptiveSpec spec;
    spec.action = "consolidation";
    spec.rule = "every moved pod has a new node";
    spec.not_eligible =
        "not enough free or releasing GPUs (whole or shared GPUs' free fractions) in the cluster "
        "for the job";
    spec.solver.action = "consolidation";
    spec.solver.all_victims_replaced = true;
    spec.solver.skip_useless_victims = false;
    spec.max_victim_jobs = max_victims;
    spec.queue_options.skip_non_preemptible = true;
    spec.queue_options.skip_within_preemption_delay = true;
    spec.eligible = [](const Session& ss, JobId job) {
      return EnoughGpusForTasks(ss, TasksToAllocate(ss, job, /*real=*/false));
    };
    spec.candidate = [](const Session&, JobId, JobId) { return true; };
    RunDisruptive(s, spec);
  }
};

}  // namespace

std::unique_ptr<Action> MakeConsolidation() { return std::make_unique<ConsolidationAction>(); }

}  // namespace kai::actions
