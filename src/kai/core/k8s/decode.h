#pragma once
// Kubernetes manifests -> ClusterState. Every malformed object or field yields an error naming the
// file, the object (Kind namespace/name) and the field.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/k8s/doc.h"
#include "kai/core/model/cluster.h"
#include "kai/core/util/result.h"

namespace kai {

// Decodes one multi-document YAML stream (a `kind: List` is expanded) into `state`. The error
// lists every problem found (Problems). Objects of unknown kinds add a warning.
Status DecodeManifestText(std::string_view text, const std::string& source, ClusterState& state);

// Decodes one JSON value (an object, or a List of objects) into `state`, as DecodeManifestText.
Status DecodeJsonText(std::string_view text, const std::string& source, ClusterState& state);

// Decodes one object of a known kind (an API list's items carry no kind) into `state`. Objects of
// kinds kai does not read add a warning; a known kind at another apiVersion is an error.
Status DecodeObject(const doc::Node& object, std::string_view api_version, std::string_view kind,
                    const std::string& source, ClusterState& state);

// Ends a load of decoded manifests (the front ends read the files: io/manifest_files.h): when
// `decoded` is ok, the cross-object checks (ValidateCluster) and, with none failing, the quota
// warnings; every error of either, one per line, in the error.
Result<ClusterState> CheckDecoded(ClusterState state, Status decoded);

// Cross-object checks: duplicate names, pods naming a missing PodGroup or queue, PodGroups naming a
// missing queue, queue parents that do not exist or form a cycle.
Status ValidateCluster(const ClusterState& state);

// KAI's admission rule for an update of a running semi-preemptible PodGroup (one with active
// pods): spec.minMember, spec.minSubGroup and every SubGroup's minMember / minSubGroup may not be
// raised (that would turn running over-quota pods into protected ones). Lowering is allowed.
// One error per raised field, naming the PodGroup and the field.
Status ValidatePodGroupUpdate(const PodGroupObject& before, const PodGroupObject& after,
                              bool running);
// The same for a whole set of manifests replacing `before` (`kai check-update`): every PodGroup of
// `after` that `before` has, running when `before` has a pod of it bound to a node or running
// (and not terminating or finished).
Status ValidateWorldUpdate(const ClusterState& before, const ClusterState& after);

// Warnings that do not stop a load: a parent queue whose children's quotas add up to more than
// its own (KAI 0.18 validates sibling sums against parents).
std::vector<std::string> QuotaWarnings(const ClusterState& state);

// Per-device GPU memory a node reports in its nvidia.com/gpu.memory label: MiB, or bytes when the
// value is too large to be MiB, floored to a multiple of 100 MiB (KAI's node_info). Empty when
// the label is absent or not a positive integer.
std::optional<int64_t> NodeGpuMemoryMib(const NodeObject& node);

}  // namespace kai
