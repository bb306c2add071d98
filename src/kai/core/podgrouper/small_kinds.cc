// Kinds of a rule or two each: AzureML's AmlJob (PG/aml/), NVIDIA's SPOTRequest
// (PG/spotrequest/) and Run:ai's RunaiJob (PG/runaijob/).
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

// minMember = spec.job.options.envs.AZUREML_NODE_COUNT.
class AmlJobGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "AML Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    auto count = NestedInt(in.top_owner, Root(in.top_owner),
                           {"spec", "job", "options", "envs", "AZUREML_NODE_COUNT"});
    if (!count) return count.error();
    if (!count->has_value()) {
      return FieldError(in.top_owner, "spec.job.options.envs.AZUREML_NODE_COUNT", "missing");
    }
    md.min_member = static_cast<int>(**count);
    return md;
  }
};

// Priority class inference.
class SpotRequestGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "SPOTRequest Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    md.priority_class_name =
        PriorityClassOfTop(in.env, in.top_owner, in.pod, keys::kInferencePriorityClass);
    return md;
  }
};

// pg-<pod name up to its last dash>-<job uid>, or with --search-legacy-pg an existing PodGroup
// under the legacy name (pg-<pod or job>-<job uid>: per pod when spec.parallelism > 1).
class RunaiJobGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "RunaiJob Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
    const Object& job = in.top_owner;
    if (in.env.config().search_for_legacy_pod_groups) {
      // KAI reads spec.parallelism leniently here: a malformed value counts as absent.
      auto parallelism = NestedInt(job, Root(job), {"spec", "parallelism"});
      const bool per_pod = parallelism && parallelism->has_value() && **parallelism > 1;
      const std::string legacy = "pg-" + (per_pod ? in.pod.name : job.name) + "-" + job.uid;
      const Fetched f =
          in.env.reader().Get({"scheduling.run.ai/v2alpha2", "PodGroup", in.pod.ns, legacy});
      if (f.status == FetchStatus::kFound) {
        md.name = legacy;
        return md;
      }
      if (f.status != FetchStatus::kNotFound) {
        return Error{"while searching for the legacy PodGroup " + in.pod.ns + "/" + legacy +
                     " of " + job.Ref() + ": " + f.message};
      }
    }
    std::string base = in.pod.name;
    if (const size_t dash = base.rfind('-'); dash != std::string::npos) base.resize(dash);
    md.name = "pg-" + base + "-" + job.uid;
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeAmlJobGrouper() { return std::make_unique<AmlJobGrouper>(); }
std::unique_ptr<Grouper> MakeSpotRequestGrouper() { return std::make_unique<SpotRequestGrouper>(); }
std::unique_ptr<Grouper> MakeRunaiJobGrouper() { return std::make_unique<RunaiJobGrouper>(); }

}  // namespace kai::podgrouper
