#pragma once
// KAI's defaults for objects that leave a field unset, and the well-known names the snapshot reads
// (kai-semantics.md §1.2, §1.3, §1.6). k8s/keys.h names them among the keys as well.
#include <cstdint>
#include <string_view>

namespace kai {

inline constexpr int kDefaultQueuePriority = 100;
inline constexpr int kDefaultJobPriority = 50;
inline constexpr int kNonPreemptiblePriority = 100;
inline constexpr int64_t kStuckInReleasingSeconds = 120;
// The PodSet of a PodGroup without spec.subGroups (KAI podgroup_info.DefaultSubGroup).
inline constexpr std::string_view kDefaultSubGroup = "default";
// Extended resources named nvidia.com/mig-<g>g.<m>gb are MIG instances.
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

}  // namespace kai
