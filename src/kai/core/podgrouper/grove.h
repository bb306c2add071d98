#pragma once
// The Grove grouper (grove.cc): a PodCliqueSet's (or PodGangSet's) pods grouped by their PodGang.
#include <memory>

#include "kai/core/podgrouper/grouper.h"

namespace kai::podgrouper {

std::unique_ptr<Grouper> MakeGroveGrouper();

}  // namespace kai::podgrouper
