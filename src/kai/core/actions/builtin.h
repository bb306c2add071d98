#pragma once
#include <memory>

#include "kai/core/framework/plugin.h"

namespace kai::actions {

std::unique_ptr<Action> MakeAllocate();
// Disruptive actions land with issue 4 ("Reclaim, preempt, consolidate"); until then they run
// and take no decision.
std::unique_ptr<Action> MakeConsolidation();
std::unique_ptr<Action> MakeReclaim();
std::unique_ptr<Action> MakePreempt();
std::unique_ptr<Action> MakeStaleGangEviction();

}  // namespace kai::actions
