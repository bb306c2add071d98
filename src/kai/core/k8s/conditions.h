#pragma once
// metav1.Condition, as the status of kai.scheduler/v1 objects holds it (Config, SchedulingShard),
// and the merge patch that sets some of an object's conditions while keeping the others.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/util/time.h"

namespace kai::k8s {

struct Condition {
  std::string type, status, reason, message, transition;
  std::optional<int64_t> observed_generation;
};

Condition ReadCondition(const doc::Node& c);

// The merge patch of `object`'s status.conditions: each condition of `set` replaces the one of
// its type (keeping that one's lastTransitionTime while its status stays; a new one transitions
// at `now`), the object's other conditions are kept, and the patch names the resourceVersion read
// so that a concurrent change fails it (409). Empty when every condition already says this.
std::string ConditionsPatch(const doc::Node& object, const std::vector<Condition>& set,
                            UnixSeconds now);

}  // namespace kai::k8s
