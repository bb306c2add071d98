#pragma once
// Placing the tasks of one job inside a Statement (KAI actions/common/allocate.go): score and sort
// nodes per task, take the first node that fits idle+releasing resources and passes the
// predicates; allocate on idle resources, else pipeline onto releasing ones.
#include <span>
#include <vector>

#include "kai/core/framework/statement.h"

namespace kai::actions {

struct PlacementResult {
  bool ok = false;
  int placed = 0;               // tasks placed before the first failure
  PodId failed_task = kNone;    // the task that found no node
  std::vector<Reason> reasons;  // why it found none
};

// Places `tasks` in order on the session's candidate nodes; stops at the first task with no node
// (the caller rolls back).
PlacementResult PlaceTasks(Session& session, Statement& stmt, std::span<const PodId> tasks,
                           bool pipeline_only);

// Places a job's tasks for this step (KAI AllocateJob after the capacity check), SubGroup by
// SubGroup down the job's tree: for each SubGroup with tasks the SubsetNodes hooks split the nodes
// its parent is trying into sets (topology domains) tried in order, each from a checkpoint; the
// members of a SubGroupSet go in SubGroup order. On failure every placement of this call is rolled
// back; `placed` counts the tasks the failing PodSet's first node set took before its failing
// task.
PlacementResult PlaceJob(Session& session, Statement& stmt, JobId job, std::span<const PodId> tasks,
                         bool pipeline_only);

// True when one of `nodes` has the pod's resources, idle or releasing.
bool AnyNodeHasRoom(const Session& session, PodId pod, std::span<const NodeId> nodes);

// The verdict for one pod on one node: resources (idle+releasing) first, then the predicates.
NodeVerdict CheckNode(const Session& session, PodId pod, NodeId node);

// KAI's ShouldPipelineJob: a pod of some PodSet was pipelined while fewer than the PodSet's
// minMember of its pods hold resources outright, so the job waits for the freed resources as a
// whole.
bool ShouldPipelineJob(const Session& session, JobId job);
void ConvertAllocatedToPipelined(Session& session, Statement& stmt, JobId job);

}  // namespace kai::actions
