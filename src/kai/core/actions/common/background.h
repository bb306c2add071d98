#pragma once
// Background pods (KAI v0.18: maintenance pods, label kai.scheduler/background=true; see
// docs/deviations.md "Background pods"). They belong to no job and no queue (snapshot.h), and the
// places they hold count as free: when the session opens they are set aside (Releasing, as if
// being evicted, without any write), so every action sees their resources as being freed and
// places workloads there before it would disrupt anyone. When the actions are done, each is put
// back on its node if what it held is still free there; the others are evicted for real, with a
// verdict naming the workload that took the place. Pending background pods that kai schedules
// are placed last, on idle resources only: nobody is evicted, pipelined or charged for them.
#include <string_view>
#include <vector>

#include "kai/core/framework/session.h"

namespace kai::actions {

// The action a displaced background pod's eviction verdict names.
inline constexpr std::string_view kBackgroundAction = "background";

// Sets aside every Running background pod (in pod order); returns them.
std::vector<PodId> SetAsideBackgroundPods(Session& session);

// Puts each pod of `set_aside` back on its node where its resources (still being freed there)
// and the predicates allow, in the order given; the others stay Releasing and are evicted.
void SettleBackgroundPods(Session& session, const std::vector<PodId>& set_aside);

// Places pending background pods that kai schedules on the first node (in name order) whose idle
// resources and predicates take them.
void PlaceBackgroundPods(Session& session);

}  // namespace kai::actions
