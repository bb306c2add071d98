#pragma once
// KAI's DefaultGrouper (PG/defaultgrouper/default_grouper.go): the PodGroup every other grouper
// starts from, and the rules they share. Internal to podgrouper/.
//
// Which owners a rule reads matters: KAI's default grouper reads every owner of the chain, but
// most kind groupers call it with the top owner alone (DefaultMetadata(in, top, {})), so the
// priority class and preemptibility labels of the owners in between count only for kinds served
// by the default grouper itself (StatefulSet, ReplicaSet, unknown kinds).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kai/core/podgrouper/grouper.h"

namespace kai::podgrouper {

// The default grouper's PodGroup for `pod` under `top`, reading `owners` (nearest first; empty:
// the top owner alone). minMember 1, the top owner's topology annotations.
PodGroupMetadata DefaultMetadata(const GroupingInput& in, const Object& top,
                                 std::span<const Object* const> owners);

// pg-<name>-<uid>.
std::string PodGroupName(const Object& o);
// The top owner's labels, plus the pod's `user` label when the owner has none.
Labels PodGroupLabels(const Object& top, const Object& pod);
// The pod's `user` annotation, the top-owner-metadata annotation, then the top owner's
// annotations (which win).
Labels PodGroupAnnotations(const Object& top, const Object& pod);
// The queue label of the top owner, else of the pod; else the `project` label (top owner, then
// pod) suffixed with the pod's node pool; else default-queue.
std::string PodGroupQueue(const Object& top, const Object& pod, const GrouperConfig& config);
// KAI's CalcPodGroupPriorityClass: the priority class resolved with the top owner alone, else
// `fallback`.
std::string PriorityClassOfTop(const GroupingEnv& env, const Object& top, const Object& pod,
                               std::string_view fallback);
// The first priority class that exists of: each owner's priorityClassName label (else the pod's
// label, else the pod's spec.priorityClassName), then each owner kind's default from the
// ConfigMap; else `fallback` (not checked).
std::string ResolvePriorityClass(const GroupingEnv& env, std::span<const Object* const> owners,
                                 const Object& pod, std::string_view fallback);
// kai.scheduler/preemptibility of the owners, then the pod; then the owner kinds' defaults.
std::string ResolvePreemptibility(const GroupingEnv& env, std::span<const Object* const> owners,
                                  const Object& pod);
// KAI's topowner.Metadata marshalled by gopkg.in/yaml.v3 ("name: x\nuid: ...\n").
std::string TopOwnerMetadataYaml(const Object& top);

// strconv.ParseInt(s, 10, 32) and strconv.Atoi: an optional sign and decimal digits.
std::optional<int> ParseInt32(std::string_view s);
std::optional<int64_t> Atoi(std::string_view s);
// The reference to `o` that a PodGroup owner (or a message) uses.
OwnerReference RefTo(const Object& o);
// A min-member annotation of `o` (kai.scheduler/batch-min-member, kai.scheduler/min-member):
// nullopt when absent; an error naming the field when it is not a 32-bit integer.
Result<std::optional<int>> MinMemberAnnotation(const Object& o, std::string_view key);
// KAI's rule for a workload whose pods an older pod grouper put in a PodGroup each (knative.go's
// isBCRevision), given the workload's pods: true when they point to more than one PodGroup or to
// one that a Pod owns; false when two of them share one, none names one, the one named does not
// exist or `owner`'s kind owns it. Such a workload keeps a PodGroup per pod.
Result<bool> GroupedOnePerPod(const GroupingEnv& env, const Object& owner,
                              const std::vector<Object>& pods);

// The groupers, one per kind (hub.cc registers them under KAI's GroupVersionKinds).
std::unique_ptr<Grouper> MakeDefaultGrouper();
std::unique_ptr<Grouper> MakePodJobGrouper();  // bare pods (and Spark)
std::unique_ptr<Grouper> MakeBatchJobGrouper();
std::unique_ptr<Grouper> MakeCronJobGrouper();
std::unique_ptr<Grouper> MakeDeploymentGrouper();
std::unique_ptr<Grouper> MakeTfJobGrouper();
std::unique_ptr<Grouper> MakeXgboostJobGrouper();
std::unique_ptr<Grouper> MakeJaxJobGrouper();
std::unique_ptr<Grouper> MakePyTorchJobGrouper();
std::unique_ptr<Grouper> MakeMpiJobGrouper();
std::unique_ptr<Grouper> MakeNotebookGrouper();
std::unique_ptr<Grouper> MakeJobSetGrouper();
std::unique_ptr<Grouper> MakeLeaderWorkerSetGrouper();
std::unique_ptr<Grouper> MakeRayClusterGrouper();
std::unique_ptr<Grouper> MakeRayJobGrouper();
std::unique_ptr<Grouper> MakeRayServiceGrouper();
std::unique_ptr<Grouper> MakeKnativeServiceGrouper();
std::unique_ptr<Grouper> MakeAmlJobGrouper();
std::unique_ptr<Grouper> MakeSpotRequestGrouper();
std::unique_ptr<Grouper> MakeRunaiJobGrouper();
std::unique_ptr<Grouper> MakeSkipTopOwnerGrouper();

}  // namespace kai::podgrouper
