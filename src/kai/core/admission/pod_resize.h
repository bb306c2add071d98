#pragma once
// In-place pod resize (KEP-1287) and the queue limits (KAI v0.18: "resizes are accounted against
// queue quota and limits, with a queue admission webhook"): an update of a running pod (spec
// update on Kubernetes 1.27-1.32, the pods/resize subresource from 1.33) that grows its CPU or
// memory is refused when the growth takes its queue, or a queue above it, past its limit.
#include <optional>
#include <string>
#include <string_view>

#include "kai/core/admission/admission.h"
#include "kai/core/model/cluster.h"
#include "kai/core/resource/resources.h"
#include "kai/core/util/result.h"

namespace kai::admission {

// What the rule reads from the cluster; a failed lookup denies the resize, naming what could not
// be read.
class QueueUsageLookup {
 public:
  virtual ~QueueUsageLookup() = default;
  // A queue and what its status says it holds (status.allocated; zero when it has none yet).
  struct QueueHolding {
    QueueObject queue;
    Resources allocated;
  };
  // The queue named `name` (one read of it); nullopt when there is none.
  virtual Result<std::optional<QueueHolding>> Queue(std::string_view name) const = 0;
  // spec.queue of the PodGroup; "" when there is no such PodGroup.
  virtual Result<std::string> PodGroupQueue(std::string_view ns, std::string_view name) const = 0;
};

// Pod (validating webhook, update and pods/resize): allows anything but a growth of a running
// pod of `options.scheduler_name` that a queue's CPU or memory limit cannot hold.
Verdict ValidatePodResize(const Request& request, const Options& options,
                          const QueueUsageLookup& lookup);

}  // namespace kai::admission
