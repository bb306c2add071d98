#pragma once
// A trace job as the Kubernetes objects KAI schedules: a PodGroup (scheduling.run.ai/v2alpha2:
// queue, minMember, priorityClassName, topologyConstraint) and its pods (schedulerName
// kai-scheduler, the pod-group-name annotation, the kai.scheduler/queue label, nvidia.com/gpu
// limits or the gpu-fraction annotation). They are written as a manifest and decoded by the
// decoder every front end uses, so a trace job means what the same manifest means.
#include <string>
#include <vector>

#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"
#include "kai/core/util/time.h"
#include "kai/core/whatif/trace.h"

namespace kai::whatif {

struct JobObjects {
  PodGroupObject group;
  std::vector<PodObject> pods;
};

// The manifest (YAML) of job `j` submitted at `created`.
std::string JobManifest(const TraceJob& j, UnixSeconds created);

// The decoded objects; an error names the trace line.
Result<JobObjects> MakeJobObjects(const TraceJob& j, UnixSeconds created);

}  // namespace kai::whatif
