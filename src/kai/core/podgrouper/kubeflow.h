#pragma once
// The Kubeflow training operator's distributed jobs (PG/kubeflow/distributed_common.go): shared by
// the TFJob, XGBoostJob, JAXJob, PyTorchJob and MPIJob groupers. Internal to podgrouper/.
#include <span>
#include <string_view>

#include "kai/core/podgrouper/grouper.h"

namespace kai::podgrouper {

// The default PodGroup with minMember = spec.runPolicy.schedulingPolicy.minAvailable, else the
// sum of spec.<replica_specs>.*.replicas (each replica type must state a non-zero count, and the
// `mandatory` types must be there).
Result<PodGroupMetadata> KubeflowDistributedMetadata(const GroupingInput& in,
                                                     std::string_view replica_specs,
                                                     std::span<const std::string_view> mandatory);

}  // namespace kai::podgrouper
