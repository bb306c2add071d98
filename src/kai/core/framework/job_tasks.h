#pragma once
// Which pods of a job the next allocation attempt places (KAI's GetTasksToAllocate, walking the
// SubGroup tree): while a SubGroupSet is below its minimum, the missing pods of the members it
// needs; once it is satisfied, the tasks of its first member (in SubGroup order) that has any; a
// PodSet gives its missing pods, or one more pod once satisfied (elastic growth, interleaved with
// other jobs).
#include <vector>

#include "kai/core/framework/session.h"

namespace kai {

// In a simulation (real == false), pods evicted by the uncommitted statement count as pending, so
// that a victim can be re-placed.
std::vector<PodId> TasksToAllocate(const Session& session, JobId job, bool real = true);
// The same into `out` (cleared first), for callers that reuse one buffer.
void TasksToAllocate(const Session& session, JobId job, bool real, std::vector<PodId>& out);
// Sum of the requests of TasksToAllocate (what queue order and capacity checks charge).
Resources TasksToAllocateRequest(const Session& session, JobId job, bool real = true);
// The members of a SubGroupSet of `job` in SubGroup order (Session::SubGroupBefore).
std::vector<SubGroupIndex> OrderedMembers(const Session& session, JobId job, SubGroupIndex set);

}  // namespace kai
