#pragma once
// Which pods of a job the next allocation attempt places (KAI's GetTasksToAllocate for a flat
// PodGroup): while the gang is below its minimum, the missing pods; once it is satisfied, one
// more pod at a time (elastic growth, interleaved with other jobs).
#include <vector>

#include "kai/framework/session.h"

namespace kai {

// In a simulation (real == false), pods evicted by the uncommitted statement count as pending, so
// that a victim can be re-placed.
std::vector<PodId> TasksToAllocate(const Session& session, JobId job, bool real = true);
// Sum of the requests of TasksToAllocate (what queue order and capacity checks charge).
Resources TasksToAllocateRequest(const Session& session, JobId job, bool real = true);

}  // namespace kai
