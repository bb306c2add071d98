// The Kubeflow training operator's distributed jobs (PG/kubeflow/distributed_common.go), and the
// kinds that need nothing more: TFJob, XGBoostJob (Master and Worker required) and JAXJob (Worker
// required).
#include "kai/core/podgrouper/kubeflow.h"

#include "kai/core/podgrouper/default_grouper.h"

namespace kai::podgrouper {
namespace {

Result<int64_t> TotalReplicas(const Object& job, std::string_view replica_specs,
                              std::span<const std::string_view> mandatory) {
  const std::string path = "spec." + std::string(replica_specs);
  auto specs = NestedMap(job, Root(job), {"spec", replica_specs});
  if (!specs) return specs.error();
  if (!specs->has_value()) return FieldError(job, path, "missing");
  for (std::string_view name : mandatory) {
    if (!(**specs).node[name].IsDefined()) {
      return FieldError(job, path + "." + std::string(name), "missing (a required replica type)");
    }
  }
  int64_t total = 0;
  for (const auto& [key, value] : (**specs).node.Entries()) {
    auto replicas = NestedInt(job, **specs, {key.Scalar(), "replicas"});
    if (!replicas) return replicas.error();
    if (!replicas->has_value() || **replicas == 0) {
      return FieldError(job, path + "." + std::string(key.Scalar()) + ".replicas",
                        "must be set and not 0");
    }
    total += **replicas;
  }
  if (total <= 0) {
    return FieldError(job, path,
                      "the replicas must sum to more than 0, got " + std::to_string(total));
  }
  return total;
}

class KubeflowGrouper : public Grouper {
 public:
  KubeflowGrouper(std::string_view name, std::string_view replica_specs,
                  std::span<const std::string_view> mandatory)
      : name_(name), replica_specs_(replica_specs), mandatory_(mandatory) {}
  std::string_view Name() const override { return name_; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    return KubeflowDistributedMetadata(in, replica_specs_, mandatory_);
  }

 private:
  std::string_view name_, replica_specs_;
  std::span<const std::string_view> mandatory_;  // static arrays
};

}  // namespace

Result<PodGroupMetadata> KubeflowDistributedMetadata(const GroupingInput& in,
                                                     std::string_view replica_specs,
                                                     std::span<const std::string_view> mandatory) {
  PodGroupMetadata md = DefaultMetadata(in, in.top_owner, {});
  const Object& job = in.top_owner;
  auto min_available =
      NestedInt(job, Root(job), {"spec", "runPolicy", "schedulingPolicy", "minAvailable"});
  if (!min_available) return min_available.error();
  if (min_available->has_value()) {
    md.min_member = static_cast<int>(**min_available);
    return md;
  }
  auto total = TotalReplicas(job, replica_specs, mandatory);
  if (!total) return total.error();
  md.min_member = static_cast<int>(*total);
  return md;
}

constexpr std::string_view kXgboostRequired[] = {"Master", "Worker"};
constexpr std::string_view kJaxRequired[] = {"Worker"};

std::unique_ptr<Grouper> MakeTfJobGrouper() {
  return std::make_unique<KubeflowGrouper>("TensorFlow Grouper", "tfReplicaSpecs",
                                           std::span<const std::string_view>());
}
std::unique_ptr<Grouper> MakeXgboostJobGrouper() {
  return std::make_unique<KubeflowGrouper>("XGBoost Grouper", "xgbReplicaSpecs", kXgboostRequired);
}
std::unique_ptr<Grouper> MakeJaxJobGrouper() {
  return std::make_unique<KubeflowGrouper>("JAX Grouper", "jaxReplicaSpecs", kJaxRequired);
}

}  // namespace kai::podgrouper
