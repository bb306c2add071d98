#include "kai/core/podgrouper/hub.h"

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/grove.h"
#include "kai/core/podgrouper/karta.h"

namespace kai::podgrouper {

Hub::Hub() : default_(MakeDefaultGrouper()) {}
Hub::Hub(Hub&&) noexcept = default;
Hub& Hub::operator=(Hub&&) noexcept = default;
Hub::~Hub() = default;

void Hub::Register(std::string_view group, std::string_view version, std::string_view kind,
                   std::shared_ptr<const Grouper> grouper) {
  table_.insert_or_assign(Key{std::string(group), std::string(version), std::string(kind)},
                          std::move(grouper));
}

const Grouper* Hub::FindExact(std::string_view group, std::string_view version,
                              std::string_view kind) const {
  auto it = table_.find(View{group, version, kind});
  return it == table_.end() ? nullptr : it->second.get();
}

const Grouper* Hub::Find(std::string_view group, std::string_view version,
                         std::string_view kind) const {
  if (const Grouper* g = FindExact(group, version, kind)) return g;
  return FindExact(group, "*", kind);
}

const Grouper& Hub::For(std::string_view group, std::string_view version,
                        std::string_view kind) const {
  const Grouper* g = Find(group, version, kind);
  if (g != nullptr) return *g;
  return fallback_ != nullptr ? *fallback_ : *default_;
}

Hub MakeDefaultHub() {
  Hub hub;
  std::shared_ptr<const Grouper> def = MakeDefaultGrouper();
  std::shared_ptr<const Grouper> mpi = MakeMpiJobGrouper();
  std::shared_ptr<const Grouper> ray_cluster = MakeRayClusterGrouper();
  std::shared_ptr<const Grouper> ray_job = MakeRayJobGrouper();
  std::shared_ptr<const Grouper> ray_service = MakeRayServiceGrouper();
  std::shared_ptr<const Grouper> skip = MakeSkipTopOwnerGrouper();

  hub.Register("apps", "v1", "Deployment", MakeDeploymentGrouper());
  hub.Register("machinelearning.seldon.io", "v1alpha2", "SeldonDeployment", def);
  hub.Register("machinelearning.seldon.io", "v1", "SeldonDeployment", def);
  hub.Register("kubevirt.io", "v1", "VirtualMachineInstance", def);
  hub.Register("kubeflow.org", "v1", "TFJob", MakeTfJobGrouper());
  hub.Register("kubeflow.org", "v1", "PyTorchJob", MakePyTorchJobGrouper());
  hub.Register("kubeflow.org", "v1", "XGBoostJob", MakeXgboostJobGrouper());
  hub.Register("kubeflow.org", "v1", "JAXJob", MakeJaxJobGrouper());
  hub.Register("kubeflow.org", "v1", "MPIJob", mpi);
  hub.Register("kubeflow.org", "v2beta1", "MPIJob", mpi);
  hub.Register("kubeflow.org", "v1beta1", "Notebook", MakeNotebookGrouper());
  hub.Register("batch", "v1", "Job", MakeBatchJobGrouper());
  hub.Register("apps", "v1", "StatefulSet", def);
  hub.Register("apps", "v1", "ReplicaSet", def);
  hub.Register("run.ai", "v1", "RunaiJob", MakeRunaiJobGrouper());
  hub.Register("", "v1", "Pod", MakePodJobGrouper());
  hub.Register("amlarc.azureml.com", "v1alpha1", "AmlJob", MakeAmlJobGrouper());
  hub.Register("serving.knative.dev", "v1", "Service", MakeKnativeServiceGrouper());
  hub.Register("batch", "v1", "CronJob", MakeCronJobGrouper());
  hub.Register("workspace.devfile.io", "v1alpha2", "DevWorkspace", def);
  for (const char* version : {"v1alpha1", "v1"}) {
    hub.Register("ray.io", version, "RayCluster", ray_cluster);
    hub.Register("ray.io", version, "RayJob", ray_job);
    hub.Register("ray.io", version, "RayService", ray_service);
  }
  hub.Register("kubeflow.org", "v1alpha1", "ScheduledWorkflow", def);
  hub.Register("tekton.dev", "v1", "PipelineRun", def);
  hub.Register("tekton.dev", "v1", "TaskRun", def);
  hub.Register("egx.nvidia.io", "v1", "SPOTRequest", MakeSpotRequestGrouper());
  hub.Register("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", MakeLeaderWorkerSetGrouper());
  hub.Register("jobset.x-k8s.io", "v1alpha2", "JobSet", MakeJobSetGrouper());
  std::shared_ptr<const Grouper> grove = MakeGroveGrouper();
  hub.Register("grove.io", "v1alpha1", "PodGangSet", grove);  // the older name of PodCliqueSet
  hub.Register("grove.io", "v1alpha1", "PodCliqueSet", grove);

  // Wrappers whose next owner is the workload (KAI's skip-top-owner kinds).
  hub.Register("argoproj.io", "v1alpha1", "Workflow", skip);
  for (const char* kind : {"InferenceWorkload", "TrainingWorkload", "DistributedWorkload",
                           "InteractiveWorkload", "DistributedInferenceWorkload"}) {
    hub.Register("run.ai", "*", kind, skip);
  }
  hub.Register("trainer.kubeflow.org", "v1alpha1", "TrainJob", skip);
  hub.Register("nvidia.com", "*", "DynamoGraphDeployment", skip);
  hub.SetFallback(MakeKartaFallbackGrouper());
  return hub;
}

std::vector<std::tuple<std::string, std::string, std::string>> Hub::Kinds() const {
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& [key, grouper] : table_) out.push_back(key);
  return out;
}

const Hub& DefaultHub() {
  static const Hub* hub = new Hub(MakeDefaultHub());
  return *hub;
}

}  // namespace kai::podgrouper
