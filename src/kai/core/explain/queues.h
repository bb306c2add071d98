#pragma once
// "What is my fair share and why?": the queue tree with, per resource, the inputs of the fair-share
// division and how each queue's share was reached.
#include <string>
#include <vector>

#include "kai/core/snapshot/snapshot.h"

namespace kai {

struct QueueResourceExplanation {
  std::string resource;  // cpu, memory, nvidia.com/gpu
  int64_t quota = 0, limit = 0, weight_milli = 0;
  int64_t requested = 0, allocated = 0, fair_share = 0;
  int64_t level_total = 0;    // what this queue and its siblings divided
  int64_t deserved_part = 0;  // min(quota, what it can use)
  int64_t surplus_part = 0;   // fair share above the deserved part
  double saturation = 0;      // allocated / fair share (infinity when fair share is 0 and used)
  double usage = 0;           // time-based fair share usage
  std::string capped_by;      // request, limit, no-weight, proportional-share, nothing-left, usage
  std::string Summary() const;
};

struct QueueExplanation {
  std::string name, parent;
  int depth = 0;
  int priority = 0;
  bool leaf = true;
  std::vector<QueueResourceExplanation> resources;  // cpu, memory, gpu
};

// Queues in tree order (parents before children, siblings by creation time then name). The
// snapshot must have been through the proportion plugin (fair_share, allocated, requested set).
std::vector<QueueExplanation> ExplainQueues(const Snapshot& snap);

}  // namespace kai
