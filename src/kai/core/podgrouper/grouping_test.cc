// The pod grouper on real workload manifests (tests/podgrouper/*.yaml): one pod of a file in, the
// PodGroup KAI's pod grouper would make for it out. The expected values are worked out from KAI's
// source (pkg/podgrouper/), not from this implementation.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/go_duration.h"
#include "kai/core/podgrouper/hub.h"
#include "kai/core/podgrouper/podgroup.h"
#include "kai/core/podgrouper/podgrouper.h"

namespace kai::podgrouper {
namespace {

std::string ReadFixture(const std::string& file) {
  const std::string path = std::string(KAI_SOURCE_DIR) + "/tests/podgrouper/" + file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The objects of priorityclasses.yaml and `files`.
std::vector<Object> LoadWorld(const std::vector<std::string>& files) {
  std::vector<Object> all;
  std::vector<std::string> names = {"priorityclasses.yaml"};
  names.insert(names.end(), files.begin(), files.end());
  for (const std::string& f : names) {
    auto objects = ParseObjects(ReadFixture(f), f);
    EXPECT_TRUE(objects.ok()) << (objects.ok() ? "" : objects.error().message);
    if (objects.ok()) all.insert(all.end(), objects->begin(), objects->end());
  }
  return all;
}

const Object* FindPod(const std::vector<Object>& world, const std::string& ns_name) {
  for (const Object& o : world) {
    if (o.kind == "Pod" && o.ns + "/" + o.name == ns_name) return &o;
  }
  return nullptr;
}

struct SG {
  std::string name;
  std::string parent;  // "" = the PodGroup
  int min_member = 0;
  std::optional<int> min_sub_group;
  std::vector<std::string> pods;
  std::optional<TopologyConstraint> topology;
};

struct Want {
  std::string name;
  std::string owner;  // Kind/name
  std::string queue;
  std::string priority_class;
  std::string preemptibility;
  int min_member = 1;
  std::optional<int> min_sub_group;
  std::vector<SG> sub_groups;
  TopologyConstraint topology;
  std::map<std::string, std::string> labels;       // exactly these
  std::map<std::string, std::string> annotations;  // these, among others
  std::optional<int64_t> preemption_delay_s, staleness_s;
};

struct Case {
  std::string test;
  std::vector<std::string> files;
  std::string pod;  // namespace/name
  Want want;
  std::string error;  // the grouping fails with a message that holds this
  std::string skip;   // the pod is skipped, for a reason that holds this
  std::string note;   // a note holds this
  std::function<void(GrouperConfig&)> config;
  std::function<void(MemoryReader&)> reader;
};

std::string Render(const std::optional<TopologyConstraint>& t) {
  if (!t) return "-";
  return t->topology + "/" + t->required_level + "/" + t->preferred_level;
}

// One canonical text for the expected and the actual PodGroup: a failure shows the whole diff.
std::string Render(const Want& w) {
  std::ostringstream s;
  s << "name: " << w.name << "\nowner: " << w.owner << "\nqueue: " << w.queue
    << "\npriorityClassName: " << w.priority_class << "\npreemptibility: " << w.preemptibility
    << "\nminMember: " << w.min_member
    << "\nminSubGroup: " << (w.min_sub_group ? std::to_string(*w.min_sub_group) : "-")
    << "\ntopologyConstraint: " << Render(std::optional(w.topology)) << "\npreemptionDelay: "
    << (w.preemption_delay_s ? std::to_string(*w.preemption_delay_s) + "s" : "-")
    << "\nstalenessGracePeriod: " << (w.staleness_s ? std::to_string(*w.staleness_s) + "s" : "-")
    << "\nsubGroups:\n";
  for (const SG& sg : w.sub_groups) {
    s << "  - " << sg.name << " parent=" << (sg.parent.empty() ? "-" : sg.parent)
      << " minMember=" << sg.min_member
      << " minSubGroup=" << (sg.min_sub_group ? std::to_string(*sg.min_sub_group) : "-")
      << " topology=" << Render(sg.topology) << " pods=[";
    for (const auto& p : sg.pods) s << p << (&p == &sg.pods.back() ? "" : ",");
    s << "]\n";
  }
  s << "labels:\n";
  for (const auto& [k, v] : w.labels) s << "  " << k << ": " << v << "\n";
  return s.str();
}

Want Actual(const PodGroupMetadata& md) {
  Want w;
  w.name = md.name;
  w.owner = md.owner.kind + "/" + md.owner.name;
  w.queue = md.queue;
  w.priority_class = md.priority_class_name;
  w.preemptibility = md.preemptibility;
  w.min_member = md.min_member;
  w.min_sub_group = md.min_sub_group;
  w.topology = md.topology;
  for (const SubGroupMetadata& sg : md.sub_groups) {
    w.sub_groups.push_back(
        {sg.name, sg.parent.value_or(""), sg.min_member, sg.min_sub_group, sg.pods, sg.topology});
  }
  for (const auto& [k, v] : md.labels) w.labels[k.str()] = v;
  constexpr int64_t kSecond = 1000 * 1000 * 1000;
  if (md.preemption_delay_ns) w.preemption_delay_s = *md.preemption_delay_ns / kSecond;
  if (md.staleness_grace_period_ns) w.staleness_s = *md.staleness_grace_period_ns / kSecond;
  return w;
}

void UseDefaultsConfigMap(GrouperConfig& c) {
  c.default_priorities_configmap_name = "kai-default-priorities";
  c.default_priorities_configmap_namespace = "kai-scheduler";
}

const std::string kTopOwnerKey = "kai.scheduler/top-owner-metadata";
const TopologyConstraint kRackRequired{"dc-topology", "dc.example.com/rack", ""};

// clang-format off
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
  // ---- bare pods ----
  {.test = "BarePodIsItsOwnTopOwner", .files = {"pod.yaml"}, .pod = "team-a/bare",
   .want = {.name = "pg-bare-3f0c9a4e-6b1d-4c1e-9f7a-2d5e8b1c0a11", .owner = "Pod/bare",
            .queue = "team-a", .priority_class = "build",
            .topology = {"cluster-topology", "topology.kubernetes.io/zone", ""},
            .labels = {{"kai.scheduler/queue", "team-a"}, {"user", "alice"}, {"app", "notebook-shell"}},
            .annotations = {{"user", "alice"},
                            {kTopOwnerKey, "name: bare\nuid: 3f0c9a4e-6b1d-4c1e-9f7a-2d5e8b1c0a11\n"
                                           "group: \"\"\nversion: v1\nkind: Pod\n"}}}},
  {.test = "QueueFromProjectAndNodePool", .files = {"pod.yaml"}, .pod = "team-a/project-pod",
   .want = {.name = "pg-project-pod-8c1d2e3f-0a4b-4c5d-8e6f-7a8b9c0d1e22", .owner = "Pod/project-pod",
            .queue = "ml-a100", .priority_class = "train",
            .labels = {{"project", "ml"}, {"kai.scheduler/node-pool", "a100"}}},
   .note = "priority class \"does-not-exist\""},
  {.test = "NoLabelsDefaultQueueAndTrain", .files = {"pod.yaml"}, .pod = "team-a/plain",
   .want = {.name = "pg-plain-5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d33", .owner = "Pod/plain",
            .queue = "default-queue", .priority_class = "train"}},
  {.test = "LabelsBeforeSpecAndDurations", .files = {"pod.yaml"}, .pod = "team-a/durable",
   .want = {.name = "pg-durable-0e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a44", .owner = "Pod/durable",
            .queue = "default-queue", .priority_class = "inference", .preemptibility = "non-preemptible",
            .labels = {{"kai.scheduler/preemptibility", "non-preemptible"}, {"priorityClassName", "inference"}},
            .preemption_delay_s = 300, .staleness_s = -10}},
  {.test = "InvalidPreemptibilityAndDurationsIgnored", .files = {"pod.yaml"}, .pod = "team-a/sloppy",
   .want = {.name = "pg-sloppy-6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c55", .owner = "Pod/sloppy",
            .queue = "default-queue", .priority_class = "train",
            .labels = {{"kai.scheduler/preemptibility", "sometimes"}}},
   .note = "ignoring invalid kai.scheduler/preemptibility label \"sometimes\""},
  {.test = "SkipPodGrouperAnnotation", .files = {"pod.yaml"}, .pod = "team-a/external",
   .skip = "kai.scheduler/skip-podgrouper"},
  {.test = "BackgroundPodSkipped", .files = {"pod.yaml"}, .pod = "team-a/node-health",
   .skip = "a background pod (kai.scheduler/background)"},
  {.test = "OtherSchedulersPodsSkipped", .files = {"pod.yaml"}, .pod = "team-a/default-scheduled",
   .skip = "scheduled by default-scheduler"},
  {.test = "OwnerlessPodNamingItsPodGroupSkipped", .files = {"pod.yaml"}, .pod = "team-a/pre-grouped",
   .skip = "owner-less pod that names its PodGroup"},
  {.test = "SparkDriver", .files = {"spark.yaml"}, .pod = "spark/pi-driver",
   .want = {.name = "spark-2b1e9a3f8c6d4e0a9b7c5d3e1f0a2b4c", .owner = "Pod/pi-driver",
            .queue = "analytics", .priority_class = "train",
            .labels = {{"spark-app-name", "spark-pi"}, {"spark-app-selector", "spark-2b1e9a3f8c6d4e0a9b7c5d3e1f0a2b4c"},
                       {"spark-role", "driver"}, {"kai.scheduler/queue", "analytics"}}}},
  {.test = "SparkExecutorJoinsItsDriver", .files = {"spark.yaml"}, .pod = "spark/spark-pi-8d3f1a9c2b-exec-1",
   .want = {.name = "spark-2b1e9a3f8c6d4e0a9b7c5d3e1f0a2b4c", .owner = "Pod/pi-driver",
            .queue = "analytics", .priority_class = "train",
            .labels = {{"spark-app-name", "spark-pi"}, {"spark-app-selector", "spark-2b1e9a3f8c6d4e0a9b7c5d3e1f0a2b4c"},
                       {"spark-role", "driver"}, {"kai.scheduler/queue", "analytics"}}}},

  // ---- batch Jobs and CronJobs ----
  {.test = "JobMinMemberOverrideAndTopology", .files = {"job.yaml"}, .pod = "team-a/train-resnet-0-x7k2p",
   .want = {.name = "pg-train-resnet-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c01", .owner = "Job/train-resnet",
            .queue = "team-a", .priority_class = "build", .min_member = 3,
            .topology = {"cluster-topology", "", "kubernetes.io/hostname"},
            .labels = {{"kai.scheduler/queue", "team-a"}, {"app", "resnet"}},
            .annotations = {{"kai.scheduler/batch-min-member", "3"},
                            {kTopOwnerKey, "name: train-resnet\nuid: a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c01\n"
                                           "group: batch\nversion: v1\nkind: Job\n"}}}},
  {.test = "JobKeepsLegacyPerPodPodGroup", .files = {"job.yaml"}, .pod = "team-a/old-job-q8w2z",
   .want = {.name = "pg-old-job-q8w2z-c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e03", .owner = "Job/old-job",
            .queue = "default-queue", .priority_class = "train", .min_member = 1}},
  {.test = "JobWithoutLegacySearch", .files = {"job.yaml"}, .pod = "team-a/old-job-q8w2z",
   .want = {.name = "pg-old-job-c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e03", .owner = "Job/old-job",
            .queue = "default-queue", .priority_class = "train", .min_member = 2},
   .config = [](GrouperConfig& c) { c.search_for_legacy_pod_groups = false; }},
  {.test = "JobMalformedMinMember", .files = {"job.yaml"}, .pod = "team-a/typo-job-m3n4b",
   .error = "Job team-a/typo-job: metadata.annotations.kai.scheduler/batch-min-member: "
            "invalid min-member annotation value \"three\""},
  {.test = "CronJobGroupsPerRun", .files = {"job.yaml"}, .pod = "team-a/nightly-eval-28930860-7xkqd",
   .want = {.name = "pg-nightly-eval-28930860-1b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d08",
            .owner = "Job/nightly-eval-28930860", .queue = "team-a-batch", .priority_class = "train",
            .labels = {{"kai.scheduler/queue", "team-a-batch"}}}},
  {.test = "JobDefaultsFromConfigMap", .files = {"defaults.yaml"}, .pod = "serving/etl-b8n2m",
   .want = {.name = "pg-etl-7f8a9b0c-1d2e-4f3a-8b4c-6d7e8f9a0b24", .owner = "Job/etl",
            .queue = "default-queue", .priority_class = "train", .preemptibility = "preemptible"},
   .config = UseDefaultsConfigMap},

  // ---- Deployments ----
  {.test = "DeploymentGroupsPerDeployment", .files = {"deployment.yaml"}, .pod = "serving/triton-6d9f7c8b4d-q2w8x",
   .want = {.name = "pg-triton-3d4e5f6a-7b8c-4d9e-8f0a-2b3c4d5e6f10",
            .owner = "Deployment/triton", .queue = "serving", .priority_class = "build",
            .labels = {{"kai.scheduler/queue", "serving"}, {"app.kubernetes.io/name", "triton"}},
            .annotations = {{"deployment.kubernetes.io/revision", "3"},
                            {kTopOwnerKey, "name: triton\nuid: 3d4e5f6a-7b8c-4d9e-8f0a-2b3c4d5e6f10\n"
                                           "group: apps\nversion: v1\nkind: Deployment\n"}}}},
  {.test = "DeploymentGroupsPerPodWhenAskedTo", .files = {"deployment.yaml"}, .pod = "serving/triton-6d9f7c8b4d-q2w8x",
   .want = {.name = "pg-triton-6d9f7c8b4d-q2w8x-5f6a7b8c-9d0e-4f1a-8b2c-4d5e6f7a8b12",
            .owner = "Pod/triton-6d9f7c8b4d-q2w8x", .queue = "serving", .priority_class = "build",
            .labels = {{"kai.scheduler/queue", "serving"}, {"app.kubernetes.io/name", "triton"}}},
   .config = [](GrouperConfig& c) { c.pod_group_per_deployment = false; }},
  {.test = "DeploymentDefaultsToInference", .files = {"deployment.yaml"}, .pod = "serving/embedder-5c8d7f9b6a-z9v4t",
   .want = {.name = "pg-embedder-6a7b8c9d-0e1f-4a2b-9c3d-5e6f7a8b9c13",
            .owner = "Deployment/embedder", .queue = "default-queue", .priority_class = "inference"}},
  {.test = "DeploymentDefaultsFromConfigMap", .files = {"defaults.yaml"}, .pod = "serving/chat-7f6e5d4c3b-p4l7m",
   .want = {.name = "pg-chat-4c5d6e7f-8a9b-4c0d-9e1f-3a4b5c6d7e21",
            .owner = "Deployment/chat", .queue = "default-queue", .priority_class = "high-inference",
            .preemptibility = "non-preemptible"},
   .config = UseDefaultsConfigMap},
  {.test = "DeploymentGroupedPerPodBeforeKeepsIt", .files = {"deployment_migration.yaml"},
   .pod = "serving/llm-7c9d8e6f5a-ccccc",
   .want = {.name = "pg-llm-7c9d8e6f5a-ccccc-11111111-2222-4333-8444-555555555505",
            .owner = "Pod/llm-7c9d8e6f5a-ccccc", .queue = "default-queue", .priority_class = "inference"}},
  {.test = "DeploymentSharingASelectorIsNotMisledByAnothersPods", .files = {"deployment_migration.yaml"},
   .pod = "serving/llm-canary-5b6c7d8e9f-ddddd",
   .want = {.name = "pg-llm-canary-11111111-2222-4333-8444-555555555511",
            .owner = "Deployment/llm-canary", .queue = "default-queue", .priority_class = "inference"}},
  {.test = "DeploymentMinMemberAnnotation", .files = {"deployment_migration.yaml"},
   .pod = "serving/sized-6f7a8b9c0d-eeeee",
   .want = {.name = "pg-sized-11111111-2222-4333-8444-555555555521",
            .owner = "Deployment/sized", .queue = "default-queue", .priority_class = "inference",
            .min_member = 2}},
  {.test = "DeploymentMalformedMinMember", .files = {"deployment_migration.yaml"},
   .pod = "serving/typo-1a2b3c4d5e-fffff",
   .error = "Deployment serving/typo: metadata.annotations.kai.scheduler/min-member: "
            "invalid min-member annotation value \"two\""},
  {.test = "DeploymentPodListFailure", .files = {"deployment_migration.yaml"},
   .pod = "serving/sized-6f7a8b9c0d-eeeee",
   .error = "listing the pods of Deployment serving/sized: ",
   .reader = [](MemoryReader& r) { r.Forbid("v1", "Pod"); }},

  // ---- the default grouper's kinds ----
  {.test = "StatefulSet", .files = {"statefulset.yaml"}, .pod = "infra/etcd-0",
   .want = {.name = "pg-etcd-9d0e1f2a-3b4c-4d5e-8f6a-8b9c0d1e2f16", .owner = "StatefulSet/etcd",
            .queue = "infra", .priority_class = "train",
            .labels = {{"app", "etcd"}, {"kai.scheduler/queue", "infra"}}}},
  {.test = "UnknownKindReadsEveryOwner", .files = {"statefulset.yaml"}, .pod = "infra/gizmo-workers-h7j8k",
   .want = {.name = "pg-gizmo-1f2a3b4c-5d6e-4f7a-8b8c-0d1e2f3a4b18", .owner = "Widget/gizmo",
            .queue = "default-queue", .priority_class = "build", .preemptibility = "non-preemptible",
            .labels = {{"kai.scheduler/preemptibility", "preemptible"}},
            .annotations = {{kTopOwnerKey, "name: gizmo\nuid: 1f2a3b4c-5d6e-4f7a-8b8c-0d1e2f3a4b18\n"
                                           "group: example.com\nversion: v1\nkind: Widget\n"}}}},

  // ---- Kubeflow ----
  {.test = "PyTorchMasterAndWorkers", .files = {"pytorch.yaml"}, .pod = "research/bert-master-0",
   .want = {.name = "pg-bert-11111111-2222-4333-8444-555555555501", .owner = "PyTorchJob/bert",
            .queue = "research", .priority_class = "train", .min_member = 4,
            .sub_groups = {{"master", "", 1, {}, {"bert-master-0"}}, {"worker", "", 3}},
            .labels = {{"kai.scheduler/queue", "research"}}}},
  {.test = "PyTorchWorkerPod", .files = {"pytorch.yaml"}, .pod = "research/bert-worker-2",
   .want = {.name = "pg-bert-11111111-2222-4333-8444-555555555501", .owner = "PyTorchJob/bert",
            .queue = "research", .priority_class = "train", .min_member = 4,
            .sub_groups = {{"master", "", 1}, {"worker", "", 3, {}, {"bert-worker-2"}}},
            .labels = {{"kai.scheduler/queue", "research"}}}},
  {.test = "PyTorchElasticMinReplicas", .files = {"pytorch.yaml"}, .pod = "research/elastic-llama-worker-0",
   .want = {.name = "pg-elastic-llama-11111111-2222-4333-8444-555555555511", .owner = "PyTorchJob/elastic-llama",
            .queue = "default-queue", .priority_class = "train", .min_member = 2,
            .sub_groups = {{"worker", "", 2, {}, {"elastic-llama-worker-0"}}}}},
  {.test = "PyTorchMinAvailableWins", .files = {"pytorch.yaml"}, .pod = "research/gpt-gang-master-0",
   .want = {.name = "pg-gpt-gang-11111111-2222-4333-8444-555555555521", .owner = "PyTorchJob/gpt-gang",
            .queue = "default-queue", .priority_class = "train", .min_member = 3,
            .sub_groups = {{"master", "", 1, {}, {"gpt-gang-master-0"}}, {"worker", "", 2}}}},
  {.test = "PyTorchWorkerSegments", .files = {"pytorch.yaml"}, .pod = "research/segmented-worker-5",
   .want = {.name = "pg-segmented-11111111-2222-4333-8444-555555555531", .owner = "PyTorchJob/segmented",
            .queue = "default-queue", .priority_class = "train", .min_member = 7,
            .sub_groups = {{"master", "", 1}, {"worker", "", 0, 2},
                           {"worker-0", "worker", 4, {}, {}, kRackRequired},
                           {"worker-1", "worker", 2, {}, {"segmented-worker-5"}, kRackRequired}},
            .topology = {"dc-topology", "", ""}}},
  {.test = "PyTorchElasticSegments", .files = {"pytorch.yaml"}, .pod = "research/segmented-elastic-worker-1",
   .want = {.name = "pg-segmented-elastic-11111111-2222-4333-8444-555555555541",
            .owner = "PyTorchJob/segmented-elastic", .queue = "default-queue", .priority_class = "train",
            .min_member = 5,
            .sub_groups = {{"master", "", 1}, {"worker", "", 0, 2},
                           {"worker-0", "worker", 4, {}, {"segmented-elastic-worker-1"}},
                           {"worker-1", "worker", 0}}}},
  {.test = "PyTorchMalformedReplicas", .files = {"pytorch.yaml"}, .pod = "research/typo-master-0",
   .error = "PyTorchJob research/typo: spec.pytorchReplicaSpecs.Worker.replicas: "
            "expected an integer, got \"two\""},
  {.test = "PyTorchZeroWorkers", .files = {"pytorch.yaml"}, .pod = "research/no-workers-master-0",
   .error = "PyTorchJob research/no-workers: spec.pytorchReplicaSpecs.Worker.replicas: must be set and not 0"},
  {.test = "TFJobSumsReplicas", .files = {"kubeflow.yaml"}, .pod = "research/mnist-ps-0",
   .want = {.name = "pg-mnist-22222222-3333-4444-8555-666666666601", .owner = "TFJob/mnist",
            .queue = "default-queue", .priority_class = "train", .min_member = 4}},
  {.test = "XGBoostJobNeedsWorkers", .files = {"kubeflow.yaml"}, .pod = "research/xgb-iris-master-0",
   .error = "XGBoostJob research/xgb-iris: spec.xgbReplicaSpecs.Worker: missing"},
  {.test = "JAXJobMinAvailable", .files = {"kubeflow.yaml"}, .pod = "research/jax-pi-worker-3",
   .want = {.name = "pg-jax-pi-22222222-3333-4444-8555-666666666621", .owner = "JAXJob/jax-pi",
            .queue = "default-queue", .priority_class = "build-preemptible", .min_member = 2,
            .labels = {{"priorityClassName", "build-preemptible"}}}},
  {.test = "NotebookIsBuild", .files = {"kubeflow.yaml"}, .pod = "kubeflow-alice/alice-lab-0",
   .want = {.name = "pg-alice-lab-22222222-3333-4444-8555-666666666631", .owner = "Notebook/alice-lab",
            .queue = "alice", .priority_class = "build",
            .labels = {{"app", "alice-lab"}, {"kai.scheduler/queue", "alice"}},
            .annotations = {{"notebooks.kubeflow.org/server-type", "jupyter"}}}},
  {.test = "MPIJobBeforeItsLauncher", .files = {"mpi.yaml"}, .pod = "hpc/allreduce-worker-0",
   .want = {.name = "pg-allreduce-33333333-4444-4555-8666-777777777701", .owner = "MPIJob/allreduce",
            .queue = "default-queue", .priority_class = "train", .min_member = 2}},
  {.test = "MPIJobWithItsLauncher", .files = {"mpi.yaml"}, .pod = "hpc/allreduce-late-launcher",
   .want = {.name = "pg-allreduce-late-33333333-4444-4555-8666-777777777711", .owner = "MPIJob/allreduce-late",
            .queue = "default-queue", .priority_class = "train", .min_member = 3}},

  // ---- JobSet ----
  {.test = "JobSetSubGroupsPerReplica", .files = {"jobset.yaml"}, .pod = "research/trainer-workers-1-2-m8k3j",
   .want = {.name = "pg-trainer-44444444-5555-4666-8777-888888888801", .owner = "JobSet/trainer",
            .queue = "research", .priority_class = "train", .min_member = 0, .min_sub_group = 2,
            .sub_groups = {{"driver", "", 0, 1}, {"driver-replica-0", "driver", 1},
                           {"workers", "", 0, 2},
                           {"workers-replica-0", "workers", 4, {}, {}, kRackRequired},
                           {"workers-replica-1", "workers", 4, {}, {"trainer-workers-1-2-m8k3j"}, kRackRequired}},
            .labels = {{"kai.scheduler/queue", "research"}}}},
  {.test = "JobSetInOrder", .files = {"jobset.yaml"}, .pod = "research/pipeline-prep-0-0-t6y7u",
   .want = {.name = "pg-pipeline-44444444-5555-4666-8777-888888888811", .owner = "JobSet/pipeline",
            .queue = "default-queue", .priority_class = "train", .min_member = 0, .min_sub_group = 1,
            .sub_groups = {{"prep", "", 0, 1}, {"prep-replica-0", "prep", 1, {}, {"pipeline-prep-0-0-t6y7u"}},
                           {"train", "", 0, 1}, {"train-replica-0", "train", 2}}}},
  {.test = "JobSetLegacyFlatPodGroup", .files = {"jobset.yaml"}, .pod = "research/veteran-workers-2-0-p0o9i",
   .want = {.name = "pg-veteran-44444444-5555-4666-8777-888888888821", .owner = "JobSet/veteran",
            .queue = "default-queue", .priority_class = "train", .min_member = 3}},
  {.test = "JobSetPodWithoutIndex", .files = {"jobset.yaml"}, .pod = "research/trainer-workers-1-3-unlabeled",
   .error = "Pod research/trainer-workers-1-3-unlabeled: metadata.labels.jobset.sigs.k8s.io/job-index: missing"},

  // ---- LeaderWorkerSet ----
  {.test = "LwsLeader", .files = {"lws.yaml"}, .pod = "serving/vllm-1",
   .want = {.name = "pg-vllm-55555555-6666-4777-8888-999999999901-group-1", .owner = "LeaderWorkerSet/vllm",
            .queue = "serving", .priority_class = "train", .min_member = 4,
            .sub_groups = {{"leader", "", 1, {}, {"vllm-1"}}, {"workers", "", 3}},
            .labels = {{"kai.scheduler/queue", "serving"}}}},
  {.test = "LwsWorker", .files = {"lws.yaml"}, .pod = "serving/vllm-1-2",
   .want = {.name = "pg-vllm-55555555-6666-4777-8888-999999999901-group-1", .owner = "LeaderWorkerSet/vllm",
            .queue = "serving", .priority_class = "train", .min_member = 4,
            .sub_groups = {{"leader", "", 1}, {"workers", "", 3, {}, {"vllm-1-2"}}},
            .labels = {{"kai.scheduler/queue", "serving"}}}},
  {.test = "LwsLeaderReadyUnscheduledLeader", .files = {"lws.yaml"}, .pod = "serving/sglang-0",
   .want = {.name = "pg-sglang-55555555-6666-4777-8888-999999999911-group-0", .owner = "LeaderWorkerSet/sglang",
            .queue = "default-queue", .priority_class = "train", .min_member = 1,
            .sub_groups = {{"leader", "", 1, {}, {"sglang-0"}}}}},
  {.test = "LwsSegments", .files = {"lws.yaml"}, .pod = "serving/wide-0-3",
   .want = {.name = "pg-wide-55555555-6666-4777-8888-999999999921-group-0", .owner = "LeaderWorkerSet/wide",
            .queue = "default-queue", .priority_class = "train", .min_member = 5,
            .sub_groups = {{"segment-0", "", 0, 2, {}, TopologyConstraint{"dc-topology", "", "dc.example.com/rack"}},
                           {"segment-1", "", 2, {}, {"wide-0-3"}, TopologyConstraint{"dc-topology", "", "dc.example.com/rack"}},
                           {"leader", "segment-0", 1}, {"workers", "segment-0", 2}},
            .topology = {"dc-topology", "", ""}}},

  {.test = "LwsSegmentsWithoutTheLeader", .files = {"lws.yaml"}, .pod = "serving/apart-0-1",
   .want = {.name = "pg-apart-55555555-6666-4777-8888-999999999931-group-0", .owner = "LeaderWorkerSet/apart",
            .queue = "default-queue", .priority_class = "train", .min_member = 5,
            .sub_groups = {{"leader", "", 1}, {"segment-0", "", 2, {}, {"apart-0-1"}}, {"segment-1", "", 2}}}},

  // ---- Ray ----
  {.test = "RayClusterWorkerGroups", .files = {"ray.yaml"}, .pod = "ray/raycluster-kuberay-gpu-group-worker-8kqx2",
   .want = {.name = "pg-raycluster-kuberay-66666666-7777-4888-8999-aaaaaaaaaa01", .owner = "RayCluster/raycluster-kuberay",
            .queue = "ray-team", .priority_class = "inference", .min_member = 4,
            .sub_groups = {{"headgroup", "", 1, {}, {}, TopologyConstraint{"dc-topology", "", "dc.example.com/rack"}},
                           {"gpu-group", "", 2, {}, {"raycluster-kuberay-gpu-group-worker-8kqx2"}},
                           {"worker-group-2", "", 1}},
            .labels = {{"ray.io/priority-class-name", "inference"}, {"kai.scheduler/queue", "ray-team"}}}},
  {.test = "RayJobSizedByItsCluster", .files = {"ray.yaml"}, .pod = "ray/rayjob-sample-raycluster-v2j9c-head-7tl5b",
   .want = {.name = "pg-rayjob-sample-66666666-7777-4888-8999-aaaaaaaaaa11", .owner = "RayJob/rayjob-sample",
            .queue = "default-queue", .priority_class = "train", .min_member = 4,
            .sub_groups = {{"headgroup", "", 1, {}, {"rayjob-sample-raycluster-v2j9c-head-7tl5b"}},
                           {"small-group", "", 3}}}},
  {.test = "RayServicePendingCluster", .files = {"ray.yaml"},
   .pod = "ray/rayservice-llm-raycluster-q7w8e-gpu-worker-r2d2c",
   .want = {.name = "pg-rayservice-llm-66666666-7777-4888-8999-aaaaaaaaaa41", .owner = "RayService/rayservice-llm",
            .queue = "ray-serving", .priority_class = "train", .min_member = 3,
            .sub_groups = {{"headgroup", "", 1}, {"gpu", "", 2, {}, {"rayservice-llm-raycluster-q7w8e-gpu-worker-r2d2c"}}},
            .labels = {{"kai.scheduler/queue", "ray-serving"}}}},
  {.test = "RayJobWithoutClusterName", .files = {"ray.yaml"}, .pod = "ray/rayjob-early-raycluster-x1x1x-head-aaaaa",
   .error = "RayJob ray/rayjob-early: status: names no RayCluster yet"},
  {.test = "RayClusterLegacyFlatPodGroup", .files = {"ray.yaml"}, .pod = "ray/old-cluster-head-zzzzz",
   .want = {.name = "pg-old-cluster-66666666-7777-4888-8999-aaaaaaaaaa31", .owner = "RayCluster/old-cluster",
            .queue = "default-queue", .priority_class = "train", .min_member = 3}},

  // ---- Knative ----
  {.test = "KnativeGangPerRevision", .files = {"knative.yaml"}, .pod = "serving/hello-00001-deployment-5b8f9d7c6d-4xzmh",
   .want = {.name = "pg-hello-00001-77777777-8888-4999-8aaa-bbbbbbbbbb03", .owner = "Revision/hello-00001",
            .queue = "web", .priority_class = "inference", .min_member = 2,
            .labels = {{"serving.knative.dev/configuration", "hello"}, {"serving.knative.dev/service", "hello"},
                       {"kai.scheduler/queue", "web"}},
            .annotations = {{"autoscaling.knative.dev/min-scale", "2"}}}},
  {.test = "KnativeWithoutGangScheduling", .files = {"knative.yaml"}, .pod = "serving/hello-00001-deployment-5b8f9d7c6d-4xzmh",
   .want = {.name = "pg-hello-00001-deployment-5b8f9d7c6d-4xzmh-77777777-8888-4999-8aaa-bbbbbbbbbb06",
            .owner = "Pod/hello-00001-deployment-5b8f9d7c6d-4xzmh", .queue = "web", .priority_class = "inference",
            .labels = {{"serving.knative.dev/configuration", "hello"}, {"serving.knative.dev/service", "hello"},
                       {"kai.scheduler/queue", "web"}}},
   .config = [](GrouperConfig& c) { c.knative_gang_schedule = false; }},
  {.test = "KnativeRevisionGroupedPerPodStaysSo", .files = {"knative_per_pod.yaml"},
   .pod = "serving/legacy-00003-deployment-aaaaaaaaaa-22222",
   .want = {.name = "pg-legacy-00003-deployment-aaaaaaaaaa-22222-88888888-9999-4aaa-8bbb-cccccccccc04",
            .owner = "Pod/legacy-00003-deployment-aaaaaaaaaa-22222", .queue = "default-queue",
            .priority_class = "inference"}},

  // ---- skip-top-owner wrappers ----
  {.test = "ArgoWorkflowPodTakesItsLabels", .files = {"wrappers.yaml"}, .pod = "argo/hello-world-8p2xs-whalesay-3135311391",
   .want = {.name = "pg-hello-world-8p2xs-whalesay-3135311391-99999999-aaaa-4bbb-8ccc-dddddddddd02",
            .owner = "Pod/hello-world-8p2xs-whalesay-3135311391", .queue = "pipelines", .priority_class = "train",
            .labels = {{"kai.scheduler/queue", "pipelines"}, {"workflows.argoproj.io/completed", "false"},
                       {"workflows.argoproj.io/phase", "Pending"},
                       {"workflows.argoproj.io/workflow", "hello-world-8p2xs"}},
            .annotations = {{"workflows.argoproj.io/pod-name-format", "v2"},
                            {kTopOwnerKey, "name: hello-world-8p2xs-whalesay-3135311391\n"
                                           "uid: 99999999-aaaa-4bbb-8ccc-dddddddddd02\ngroup: \"\"\n"
                                           "version: v1\nkind: Pod\n"}}}},
  {.test = "TrainJobGroupsItsJobSet", .files = {"wrappers.yaml"}, .pod = "research/llama-ft-node-0-1-5kd8s",
   .want = {.name = "pg-llama-ft-99999999-aaaa-4bbb-8ccc-dddddddddd12", .owner = "JobSet/llama-ft",
            .queue = "research", .priority_class = "train", .min_member = 0, .min_sub_group = 1,
            .sub_groups = {{"node", "", 0, 1}, {"node-replica-0", "node", 2, {}, {"llama-ft-node-0-1-5kd8s"}}},
            .labels = {{"kai.scheduler/queue", "research"}, {"team", "nlp-infra"}}}},
  {.test = "TrainJobDefaultsGoToItsJobSet", .files = {"wrappers.yaml", "defaults.yaml"},
   .pod = "research/llama-ft-node-0-1-5kd8s",
   .want = {.name = "pg-llama-ft-99999999-aaaa-4bbb-8ccc-dddddddddd12", .owner = "JobSet/llama-ft",
            .queue = "research", .priority_class = "build", .preemptibility = "preemptible",
            .min_member = 0, .min_sub_group = 1,
            .sub_groups = {{"node", "", 0, 1}, {"node-replica-0", "node", 2, {}, {"llama-ft-node-0-1-5kd8s"}}},
            .labels = {{"kai.scheduler/queue", "research"}, {"team", "nlp-infra"}, {"priorityClassName", "build"},
                       {"kai.scheduler/preemptibility", "preemptible"}}},
   .config = UseDefaultsConfigMap},

  // ---- owner chains ----
  {.test = "MissingOwner", .files = {"owners.yaml"}, .pod = "team-a/orphaned-7d9f8-abcde",
   .error = "failed to find ReplicaSet team-a/orphaned-7d9f8 (uid aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeee02, "
            "an owner of Pod team-a/orphaned-7d9f8-abcde): ReplicaSet \"orphaned-7d9f8\" not found"},
  {.test = "OwnerReplacedByANamesake", .files = {"owners.yaml"}, .pod = "team-a/reborn-q1w2e",
   .error = "the Job of that name has uid aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeee11"},
  {.test = "OwnerWithTwoOwners", .files = {"owners.yaml"}, .pod = "team-a/shared-z8x7c",
   .error = "found ReplicaSet team-a/shared with more than one owner (Deployment one, Deployment two)"},
  {.test = "DeletedPodWithoutOwnersSkipped", .files = {"owners.yaml"}, .pod = "team-a/leftover-m5n6b",
   .skip = "being deleted"},
  {.test = "ForbiddenOwnerEndsTheWalk", .files = {"owners.yaml"}, .pod = "team-a/hidden-rs-p9o8i",
   .want = {.name = "pg-hidden-rs-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeee42", .owner = "ReplicaSet/hidden-rs",
            .queue = "hidden-team", .priority_class = "train",
            .labels = {{"kai.scheduler/queue", "hidden-team"}}},
   .note = "may not read SecretWorkload hidden",
   .reader = [](MemoryReader& r) { r.Forbid("example.com/v1", "SecretWorkload"); }},
  {.test = "ForbiddenFirstOwnerGroupsThePod", .files = {"owners.yaml"}, .pod = "team-a/hidden-rs-p9o8i",
   .want = {.name = "pg-hidden-rs-p9o8i-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeee43", .owner = "Pod/hidden-rs-p9o8i",
            .queue = "default-queue", .priority_class = "train"},
   .reader = [](MemoryReader& r) { r.Forbid("apps/v1", "ReplicaSet"); }},
  {.test = "OwnerReadFailure", .files = {"owners.yaml"}, .pod = "team-a/hidden-rs-p9o8i",
   .error = "failed to find ReplicaSet team-a/hidden-rs (uid aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeee42, "
            "an owner of Pod team-a/hidden-rs-p9o8i): the server is currently unable to handle the request",
   .reader = [](MemoryReader& r) {
     r.Fail({"apps/v1", "ReplicaSet", "team-a", "hidden-rs"}, "the server is currently unable to handle the request");
   }},
  {.test = "SkipPodGrouperOnAnOwner", .files = {"owners.yaml"}, .pod = "team-a/external-batch-k3j4h",
   .skip = "its owner Job team-a/external-batch is marked kai.scheduler/skip-podgrouper"},
  };
  return cases;
}
// clang-format on

class GroupingTest : public ::testing::TestWithParam<Case> {};

TEST_P(GroupingTest, PodGroupOfPod) {
  const Case& c = GetParam();
  const std::vector<Object> world = LoadWorld(c.files);
  const Object* pod = FindPod(world, c.pod);
  ASSERT_NE(pod, nullptr) << "no pod " << c.pod << " in the fixtures";
  MemoryReader reader(world);
  if (c.reader) c.reader(reader);
  GrouperConfig config;
  if (c.config) c.config(config);

  auto d = GroupPod(*pod, reader, config);
  if (!c.error.empty()) {
    ASSERT_FALSE(d.ok()) << "expected an error holding: " << c.error;
    EXPECT_NE(d.error().message.find(c.error), std::string::npos) << d.error().message;
    return;
  }
  ASSERT_TRUE(d.ok()) << d.error().message;
  if (!c.skip.empty()) {
    ASSERT_TRUE(d->skip) << "expected a skip: " << c.skip;
    EXPECT_NE(d->skip_reason.find(c.skip), std::string::npos) << d->skip_reason;
    return;
  }
  ASSERT_FALSE(d->skip) << d->skip_reason;
  const PodGroupMetadata& md = d->metadata;
  EXPECT_EQ(Render(Actual(md)), Render(c.want));
  EXPECT_EQ(md.ns, pod->ns);
  for (const auto& [k, v] : c.want.annotations) {
    const auto it = md.annotations.find(k);
    ASSERT_NE(it, md.annotations.end()) << "no annotation " << k;
    EXPECT_EQ(it->second, v) << k;
  }
  if (!c.note.empty()) {
    bool found = false;
    for (const auto& n : d->notes) found = found || n.find(c.note) != std::string::npos;
    EXPECT_TRUE(found) << "no note holds: " << c.note;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GroupingTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.test;
                         });

// ---- the PodGroup written, and kept on update ----

struct UpdateWorld {
  std::vector<Object> objects = LoadWorld({"update.yaml"});
  const Object* Find(const std::string& kind, const std::string& name) const {
    for (const Object& o : objects) {
      if (o.kind == kind && o.name == name) return &o;
    }
    return nullptr;
  }
};

TEST(PodGroupApplyTest, CreateWritesTheMetadataAndThePodsNodePool) {
  UpdateWorld w;
  MemoryReader reader(w.objects);
  auto d = GroupPod(*w.Find("Pod", "finetune-r4t5y"), reader, GrouperConfig{});
  ASSERT_TRUE(d.ok()) << d.error().message;
  const ApplyPlan plan = PlanApply(std::nullopt, d->metadata, GrouperConfig{});
  ASSERT_EQ(plan.action, ApplyPlan::Action::kCreate);
  const PodGroupManifest& pg = plan.object;
  EXPECT_EQ(pg.name, "pg-finetune-bbbbbbbb-cccc-4ddd-8eee-ffffffffff01");
  EXPECT_EQ(pg.spec.queue, "team-a");
  EXPECT_EQ(pg.spec.min_member, 4);
  EXPECT_FALSE(pg.spec.min_sub_group.has_value());
  EXPECT_EQ(pg.labels.at("kai.scheduler/node-pool"), "pool-a");  // the pod's
  ASSERT_EQ(pg.owner_refs.size(), 1u);
  EXPECT_EQ(pg.owner_refs[0], (OwnerReference{"batch/v1", "Job", "finetune",
                                              "bbbbbbbb-cccc-4ddd-8eee-ffffffffff01"}));
}

TEST(PodGroupApplyTest, UpdateKeepsWhatOthersSet) {
  UpdateWorld w;
  MemoryReader reader(w.objects);
  const GrouperConfig config;
  auto d = GroupPod(*w.Find("Pod", "finetune-r4t5y"), reader, config);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto existing = DecodePodGroupManifest(
      *w.Find("PodGroup", "pg-finetune-bbbbbbbb-cccc-4ddd-8eee-ffffffffff01"));
  ASSERT_TRUE(existing.ok()) << existing.error().message;

  const ApplyPlan plan = PlanApply(*existing, d->metadata, config);
  ASSERT_EQ(plan.action, ApplyPlan::Action::kUpdate);
  const PodGroupManifest& pg = plan.object;
  EXPECT_EQ(pg.resource_version, "48213");
  // Kept: the queue, markUnschedulable, schedulingBackoff, the node pool and queue labels, the
  // topology constraint the workload does not state, and every label and annotation of others.
  EXPECT_EQ(pg.spec.queue, "team-a-moved");
  EXPECT_EQ(pg.spec.mark_unschedulable, false);
  EXPECT_EQ(pg.spec.scheduling_backoff, 1);
  EXPECT_EQ(pg.spec.topology,
            (TopologyConstraint{"cluster-topology", "topology.kubernetes.io/zone", ""}));
  EXPECT_EQ(pg.labels.at("kai.scheduler/node-pool"), "pool-b");
  EXPECT_EQ(pg.labels.at("kai.scheduler/queue"), "team-a-moved");
  EXPECT_EQ(pg.labels.at("owner-team"), "ml-platform");
  EXPECT_EQ(pg.annotations.at("kai.scheduler/last-start-timestamp"), "2025-01-01T11:00:00Z");
  // The grouper's: minMember, the priority class, its annotations.
  EXPECT_EQ(pg.spec.min_member, 4);
  EXPECT_EQ(pg.spec.priority_class_name, "train");
  EXPECT_EQ(pg.annotations.at("kai.scheduler/batch-min-member"), "4");
  EXPECT_TRUE(pg.annotations.contains("kai.scheduler/top-owner-metadata"));

  // Applying again changes nothing.
  const ApplyPlan again = PlanApply(pg, d->metadata, config);
  EXPECT_EQ(again.action, ApplyPlan::Action::kNone);
}

TEST(PodGroupApplyTest, WorkloadTopologyReplacesTheExistingOne) {
  UpdateWorld w;
  auto existing = DecodePodGroupManifest(
      *w.Find("PodGroup", "pg-finetune-bbbbbbbb-cccc-4ddd-8eee-ffffffffff01"));
  ASSERT_TRUE(existing.ok());
  PodGroupMetadata md;
  md.name = existing->name;
  md.ns = existing->ns;
  md.topology = {"rack-topology", "", "dc.example.com/rack"};
  const ApplyPlan plan = PlanApply(*existing, md, GrouperConfig{});
  ASSERT_EQ(plan.action, ApplyPlan::Action::kUpdate);
  EXPECT_EQ(plan.object.spec.topology, md.topology);
  // An existing PodGroup without a node-pool label gets none on update.
  existing->labels.erase("kai.scheduler/node-pool");
  md.labels.insert_or_assign("kai.scheduler/node-pool", "pool-a");
  EXPECT_FALSE(
      PlanApply(*existing, md, GrouperConfig{}).object.labels.contains("kai.scheduler/node-pool"));
}

TEST(PodGroupApplyTest, JsonRoundTrip) {
  auto world = LoadWorld({"jobset.yaml"});
  MemoryReader reader(world);
  const Object* pod = FindPod(world, "research/trainer-workers-1-2-m8k3j");
  ASSERT_NE(pod, nullptr);
  auto d = GroupPod(*pod, reader, GrouperConfig{});
  ASSERT_TRUE(d.ok()) << d.error().message;
  d->metadata.preemption_delay_ns = int64_t{90} * 1000 * 1000 * 1000;
  const PodGroupManifest pg = NewPodGroup(d->metadata);
  const std::string json = EncodePodGroupJson(pg);
  EXPECT_NE(json.find(R"("minSubGroup":2)"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("minMember":0)"), std::string::npos)
      << json;  // the root states minSubGroup
  EXPECT_NE(json.find(R"("preemptionDelay":"1m30s")"), std::string::npos) << json;
  auto parsed = doc::ParseJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto document = std::make_shared<const doc::Document>(std::move(*parsed));
  auto object = DecodeObject(document->Roots().at(0), document);
  ASSERT_TRUE(object.ok()) << object.error().message;
  auto back = DecodePodGroupManifest(*object);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, pg);
}

TEST(PodGroupApplyTest, MalformedExistingPodGroupNamesTheField) {
  auto objects = ParseObjects(R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg-x, namespace: ns}
spec:
  minMember: 2
  subGroups:
  - name: a
    minMember: lots
)",
                              "inline");
  ASSERT_TRUE(objects.ok());
  auto pg = DecodePodGroupManifest(objects->at(0));
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().message,
            "PodGroup ns/pg-x: spec.subGroups[0].minMember: expected an integer, got \"lots\"");
}

TEST(PodAssignmentTest, AnnotationAndSubGroupLabel) {
  auto world = LoadWorld({"pytorch.yaml"});
  MemoryReader reader(world);
  const Object* pod = FindPod(world, "research/bert-worker-2");
  auto d = GroupPod(*pod, reader, GrouperConfig{});
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto a = PodAssignmentFor(*pod, d->metadata);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->pod_group, "pg-bert-11111111-2222-4333-8444-555555555501");
  EXPECT_EQ(a->sub_group, "worker");
  Object labelled = *pod;
  labelled.annotations.insert_or_assign("pod-group-name", a->pod_group);
  labelled.labels.insert_or_assign("kai.scheduler/subgroup-name", a->sub_group);
  EXPECT_FALSE(PodAssignmentFor(labelled, d->metadata).has_value());
}

TEST(GroupingEnvTest, EachLookupIsOneRoundTrip) {
  auto world = LoadWorld({"statefulset.yaml"});
  MemoryReader reader(world);
  const Object* pod = FindPod(world, "infra/gizmo-workers-h7j8k");
  ASSERT_NE(pod, nullptr);
  auto d = GroupPod(*pod, reader, GrouperConfig{});
  ASSERT_TRUE(d.ok()) << d.error().message;
  // The ReplicaSet, the Widget, the Kartas of the Widget's kind (it has no grouper of its own),
  // and PriorityClass build (read once though two rules ask).
  EXPECT_EQ(reader.calls(), 4u);
}

// ---- the pieces ----

// Kinds with no entry get the Karta grouper, which is the default grouper's when no Karta names
// the kind (karta_test.cc).
TEST(HubTest, ExactThenWildcardVersionThenFallback) {
  const Hub& hub = DefaultHub();
  EXPECT_EQ(hub.For("kubeflow.org", "v2beta1", "MPIJob").Name(), "MPI Grouper");
  EXPECT_EQ(hub.For("run.ai", "v2alpha1", "TrainingWorkload").Name(), "SkipTopOwner Grouper");
  EXPECT_EQ(hub.For("nvidia.com", "v1beta1", "DynamoGraphDeployment").Name(),
            "SkipTopOwner Grouper");
  EXPECT_EQ(hub.For("kubeflow.org", "v2", "PyTorchJob").Name(),
            "Karta Grouper");  // no such version
  EXPECT_EQ(hub.For("example.com", "v1", "Widget").Name(), "Karta Grouper");
  EXPECT_EQ(Hub().For("example.com", "v1", "Widget").Name(), "Default Grouper");
  EXPECT_EQ(hub.FindExact("run.ai", "v2alpha1", "TrainingWorkload"), nullptr);
}

TEST(TopOwnerMetadataTest, QuotesWhatYamlWouldReadAsAnotherType) {
  Object o;
  o.api_version = "v1";
  o.kind = "Pod";
  o.name = "2024-05-01";
  o.uid = "12345";
  EXPECT_EQ(TopOwnerMetadataYaml(o),
            "name: \"2024-05-01\"\nuid: \"12345\"\ngroup: \"\"\nversion: v1\nkind: Pod\n");
  o.name = "yes";
  o.uid = "0x1f";
  o.api_version = "apps/v1";
  EXPECT_EQ(TopOwnerMetadataYaml(o),
            "name: \"yes\"\nuid: \"0x1f\"\ngroup: apps\nversion: v1\nkind: Pod\n");
  o.name = "2024-05-01-run";  // not a timestamp
  o.uid = "1e9a3f00-0000-4000-8000-000000000000";
  EXPECT_EQ(TopOwnerMetadataYaml(o),
            "name: 2024-05-01-run\nuid: 1e9a3f00-0000-4000-8000-000000000000\ngroup: apps\n"
            "version: v1\nkind: Pod\n");
}

TEST(TypeDefaultsTest, KeysByGroupKindAndMatchesFieldsLikeGo) {
  auto d = ParseTypeDefaults(R"([{"typeName":"Deployment","group":"apps","priorityName":"a"},
                                  {"TypeName":"Job","PriorityName":"b","preemptibility":"preemptible"},
                                  {"typeName":"Pod","unknown":{"x":1}}])");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_NE(DefaultsForKind(*d, "Deployment.apps", "Deployment"), nullptr);
  EXPECT_EQ(DefaultsForKind(*d, "Deployment.apps", "Deployment")->priority_name, "a");
  EXPECT_EQ(DefaultsForKind(*d, "Job.batch", "Job")->preemptibility, "preemptible");
  EXPECT_EQ(DefaultsForKind(*d, "Deployment.other", "Deployment"), nullptr);
  EXPECT_NE(DefaultsForKind(*d, "Pod", "Pod"), nullptr);
  EXPECT_FALSE(ParseTypeDefaults(R"({"typeName":"Job"})").ok());
  EXPECT_FALSE(ParseTypeDefaults(R"([{"typeName":["Job"]}])").ok());
}

TEST(ObjectTest, DecodeErrorsNameTheObjectAndField) {
  auto bad_labels = ParseObjects(
      "kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  namespace: n\n"
      "  labels:\n    a: [1]\n",
      "f.yaml");
  ASSERT_FALSE(bad_labels.ok());
  EXPECT_EQ(bad_labels.error().message,
            "f.yaml: Pod n/p: metadata.labels.a: expected a string, got a list");
  auto no_name =
      ParseObjects("kind: Job\napiVersion: batch/v1\nmetadata: {namespace: n}\n", "f.yaml");
  ASSERT_FALSE(no_name.ok());
  EXPECT_EQ(no_name.error().message, "f.yaml: Job n/: metadata.name: missing");
  auto through_scalar =
      ParseObjects("kind: X\napiVersion: v1\nmetadata: {name: x}\nspec: 3\n", "f");
  ASSERT_TRUE(through_scalar.ok());
  auto v = NestedInt(through_scalar->at(0), Root(through_scalar->at(0)), {"spec", "replicas"});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "X x: spec: expected an object, got a scalar");
}

}  // namespace
}  // namespace kai::podgrouper

namespace kai::podgrouper {
namespace {

TEST(GoDurationTest, ParsesAndFormatsLikeGo) {
  EXPECT_EQ(ParseGoDurationNanos("5m"), int64_t{300} * 1000 * 1000 * 1000);
  EXPECT_EQ(ParseGoDurationNanos("-1.5h"), int64_t{-5400} * 1000 * 1000 * 1000);
  EXPECT_EQ(ParseGoDurationNanos("1h2m3.5s"), int64_t{3723500} * 1000 * 1000);
  EXPECT_EQ(ParseGoDurationNanos("250ms"), int64_t{250} * 1000 * 1000);
  EXPECT_EQ(ParseGoDurationNanos("3\xC2\xB5s"), 3000);
  EXPECT_EQ(ParseGoDurationNanos("0"), 0);
  EXPECT_EQ(ParseGoDurationNanos("+7ns"), 7);
  for (const char* bad : {"", "5", "1x", "s", ".s", "--1s", "9223372036854775808ns"}) {
    EXPECT_FALSE(ParseGoDurationNanos(bad).has_value()) << bad;
  }
  EXPECT_EQ(ParseGoDurationNanos("-9223372036854775808ns"), INT64_MIN);
  EXPECT_EQ(FormatGoDuration(0), "0s");
  EXPECT_EQ(FormatGoDuration(int64_t{90} * 1000 * 1000 * 1000), "1m30s");
  EXPECT_EQ(FormatGoDuration(int64_t{3600} * 1000 * 1000 * 1000), "1h0m0s");
  EXPECT_EQ(FormatGoDuration(int64_t{3723500} * 1000 * 1000), "1h2m3.5s");
  EXPECT_EQ(FormatGoDuration(int64_t{-10} * 1000 * 1000 * 1000), "-10s");
  EXPECT_EQ(FormatGoDuration(int64_t{250} * 1000 * 1000), "250ms");
  EXPECT_EQ(FormatGoDuration(1500), "1.5\xC2\xB5s");
  EXPECT_EQ(FormatGoDuration(7), "7ns");
}

}  // namespace
}  // namespace kai::podgrouper
