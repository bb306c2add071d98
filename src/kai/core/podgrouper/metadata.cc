#include "kai/core/podgrouper/metadata.h"

#include <algorithm>

namespace kai::podgrouper {

const SubGroupMetadata* PodGroupMetadata::SubGroupOfPod(std::string_view pod_name) const {
  for (const SubGroupMetadata& sg : sub_groups) {
    if (std::find(sg.pods.begin(), sg.pods.end(), pod_name) != sg.pods.end()) return &sg;
  }
  return nullptr;
}

SubGroupMetadata* PodGroupMetadata::FindSubGroup(std::string_view name) {
  for (SubGroupMetadata& sg : sub_groups) {
    if (sg.name == name) return &sg;
  }
  return nullptr;
}

}  // namespace kai::podgrouper
