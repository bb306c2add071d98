#pragma once
// The owner walk (KAI's pkg/podgrouper/podgrouper/podgrouper.go GetPodOwners): from the pod's
// first owner reference up, one owner at a time, to the owner that has none.
#include <cstddef>
#include <string>
#include <vector>

#include "kai/core/podgrouper/object.h"
#include "kai/core/podgrouper/reader.h"
#include "kai/core/util/result.h"

namespace kai::podgrouper {

struct OwnerChain {
  Object pod;
  std::vector<Object> owners;  // nearest first; empty: the pod is its own top owner
  // Set when the walk stopped below an owner the grouper may not read (KAI then groups under the
  // last owner it could read, or the pod): that owner's kind and name.
  std::string stopped_at;

  const Object& top() const { return owners.empty() ? pod : owners.back(); }
  // KAI's allOwners, for GroupingInput::owners.
  std::vector<const Object*> OwnerPointers() const;
};

// Walks the pod's owners through `reader`. Errors: an owner that is missing (or was replaced: its
// uid is not the one referenced), one that cannot be read, or one with more than one owner.
// An owner the reader may not read ends the walk (OwnerChain::stopped_at).
inline constexpr size_t kMaxOwnerDepth = 32;  // a cycle of owner references ends here, in error
Result<OwnerChain> WalkOwners(const Object& pod, const ObjectReader& reader);

}  // namespace kai::podgrouper
