#include "kai/actions/common/disruptive.h"

#include <cstdlib>
#include <iostream>

namespace kai::actions {
namespace {

std::vector<JobId> Candidates(const Session& s, JobId preemptor, const DisruptiveSpec& spec) {
  std::vector<JobId> out;
  for (JobId j = 0; j < static_cast<JobId>(s.snap().jobs.size()); ++j) {
    if (j == preemptor || s.snap().jobs[j].queue == kNone) continue;
    if (!s.snap().jobs[j].preemptible || EvictablePods(s, j).empty()) continue;
    if (!spec.candidate(s, preemptor, j)) continue;
    out.push_back(j);
    if (spec.max_victim_jobs >= 0 && static_cast<int64_t>(out.size()) > spec.max_victim_jobs) break;
  }
  return out;
}

}  // namespace

void RunDisruptive(Session& s, const DisruptiveSpec& spec) {
  JobQueue queue(s, spec.queue_options);
  while (!queue.Empty()) {
    const JobId job = queue.Pop();
    if (job == kNone) break;
    static const bool debug = std::getenv("KAI_DEBUG") != nullptr;
    if (!spec.eligible(s, job)) {
      if (debug) std::cerr << spec.action << ": " << s.snap().jobs[job].name << " not eligible\n";
      continue;
    }
    const std::vector<JobId> candidates = Candidates(s, job, spec);
    if (debug) std::cerr << spec.action << ": " << s.snap().jobs[job].name << " candidates " << candidates.size() << "\n";
    if (candidates.empty()) continue;
    Statement stmt(s);
    SolveResult result = SolveJob(s, stmt, job, candidates, spec.solver);
    if (debug) std::cerr << "  solved=" << result.solved << " tried=" << result.scenarios_tried << " pruned=" << result.scenarios_pruned << "\n";
    if (!result.solved) continue;
    ExplainEvictions(s, job, result, spec.action, spec.rule);
    stmt.Commit();
  }
}

}  // namespace kai::actions
