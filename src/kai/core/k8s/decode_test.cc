#include "kai/core/k8s/decode.h"
#include "kai/kube/io/manifest_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kai {
namespace {

namespace fs = std::filesystem;

// A minimal valid cluster: a parent queue, a leaf queue, a PodGroup in the leaf and one pod.
constexpr const char* kQueues = R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: dept
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: q1
spec:
  parentQueue: dept
)";

constexpr const char* kPodGroup = R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: pg
  namespace: default
spec:
  queue: q1
)";

std::string PodYaml(const std::string& name, const std::string& extra_annotations = "",
                    const std::string& resources = "requests: {cpu: '1'}") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  annotations:\n    pod-group-name: pg\n" + extra_annotations +
         "spec:\n  schedulerName: kai-scheduler\n  containers:\n  - name: c\n    resources: {" +
         resources + "}\n";
}

std::string Docs(const std::vector<std::string>& docs) {
  std::string out;
  for (const auto& d : docs) out += "---\n" + d + "\n";
  return out;
}

// True when some error contains every fragment.
bool HasError(const std::vector<std::string>& errors, const std::vector<std::string>& fragments) {
  for (const auto& e : errors) {
    bool all = true;
    for (const auto& f : fragments) all = all && e.find(f) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

#define EXPECT_ERROR(errors, ...) \
  EXPECT_TRUE(HasError(errors, {__VA_ARGS__})) << "errors:\n" << JoinLines(errors)

std::vector<std::string> Decode(const std::string& text, ClusterState& state) {
  return ProblemsOf(DecodeManifestText(text, "test.yaml", state));
}

std::vector<std::string> Decode(const std::string& text) {
  ClusterState state;
  return Decode(text, state);
}

// Decodes text that must be valid and returns the state.
ClusterState DecodeOk(const std::string& text) {
  ClusterState state;
  const auto errors = Decode(text, state);
  EXPECT_TRUE(errors.empty()) << JoinLines(errors);
  return state;
}

// Writes files into a fresh temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("kai_decode_test_" + std::to_string(::getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// The error message of LoadManifests, or "" when loading succeeded.
std::string LoadError(const std::vector<std::string>& paths) {
  auto r = LoadManifests(paths);
  return r.ok() ? "" : r.error().message;
}

// ---- Per-object decoding errors (DecodeManifestText). ----

TEST(DecodeTest, UnknownKindIsAWarningNotAnError) {
  ClusterState state;
  const auto errors = Decode("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", state);
  EXPECT_TRUE(errors.empty()) << JoinLines(errors);
  ASSERT_EQ(state.warnings.size(), 1u);
  EXPECT_NE(state.warnings[0].find("test.yaml"), std::string::npos) << state.warnings[0];
  EXPECT_NE(state.warnings[0].find("apps/v1/Deployment"), std::string::npos) << state.warnings[0];
}

TEST(DecodeTest, UnsupportedApiVersionOfKnownKind) {
  const auto errors =
      Decode("apiVersion: scheduling.run.ai/v1\nkind: Queue\nmetadata: {name: q1}\n");
  ASSERT_EQ(errors.size(), 1u) << JoinLines(errors);
  EXPECT_ERROR(errors, "test.yaml: ", "document 1", "apiVersion",
               "unsupported apiVersion \"scheduling.run.ai/v1\" for kind Queue",
               "kai reads scheduling.run.ai/v2");
}

TEST(DecodeTest, BadCpuQuantity) {
  const auto errors = Decode(PodYaml("p1", "", "requests: {cpu: abc}"));
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: spec.containers[0].resources.requests.cpu: ",
               "invalid quantity \"abc\"");
}

TEST(DecodeTest, BadGpuQuantity) {
  const auto errors = Decode(PodYaml("p1", "", "limits: {nvidia.com/gpu: '1.2.3'}"));
  EXPECT_ERROR(errors,
               "test.yaml: Pod default/p1: spec.containers[0].resources.limits.nvidia.com/gpu: ",
               "invalid quantity \"1.2.3\"");
}

TEST(DecodeTest, NegativeQuantity) {
  const auto errors = Decode(PodYaml("p1", "", "requests: {memory: '-1Gi'}"));
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: spec.containers[0].resources.requests.memory: ",
               "negative quantity \"-1Gi\"");
}

TEST(DecodeTest, NegativeNodeAllocatable) {
  const auto errors = Decode(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '-2'}\n");
  EXPECT_ERROR(errors, "test.yaml: Node n1: status.allocatable.cpu: negative quantity \"-2\"");
}

TEST(DecodeTest, MissingMetadataName) {
  const auto errors = Decode(
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {namespace: ns1}\n"
      "spec: {queue: q1}\n");
  EXPECT_ERROR(errors, "test.yaml: PodGroup ns1/", "metadata.name: missing");
}

TEST(DecodeTest, MissingMetadataMapping) {
  const auto errors = Decode("apiVersion: scheduling.run.ai/v2\nkind: Queue\n");
  EXPECT_ERROR(errors, "test.yaml: ", "metadata.name: missing");
}

TEST(DecodeTest, MissingPodGroupQueue) {
  const auto errors = Decode(
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg}\n"
      "spec: {minMember: 1}\n");
  EXPECT_ERROR(errors, "test.yaml: PodGroup default/pg: spec.queue: missing");
}

TEST(DecodeTest, QueueQuotaOfMinusTwoIsRejected) {
  const auto errors = Decode(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q1}\n"
      "spec:\n  resources:\n    gpu: {quota: -2}\n");
  EXPECT_ERROR(errors, "test.yaml: Queue q1: spec.resources.gpu.quota: ",
               "must be -1 (unlimited) or a non-negative number, got -2");
}

TEST(DecodeTest, GpuFractionAboveOne) {
  const auto errors = Decode(PodYaml("p1", "    gpu-fraction: '1.5'\n"));
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: metadata.annotations.gpu-fraction: ",
               "strictly between 0 and 1, got \"1.5\"");
}

TEST(DecodeTest, GpuFractionZero) {
  const auto errors = Decode(PodYaml("p1", "    gpu-fraction: '0'\n"));
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: metadata.annotations.gpu-fraction: ",
               "strictly between 0 and 1, got \"0\"");
}

TEST(DecodeTest, GpuFractionAndWholeGpuTogether) {
  const auto errors =
      Decode(PodYaml("p1", "    gpu-fraction: '0.5'\n", "limits: {nvidia.com/gpu: '1'}"));
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: spec.containers.resources: ",
               "must not also request nvidia.com/gpu");
}

TEST(DecodeTest, InvalidYamlNamesTheLine) {
  const auto errors = Decode("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [p1\n");
  ASSERT_EQ(errors.size(), 1u) << JoinLines(errors);
  EXPECT_ERROR(errors, "test.yaml: invalid YAML at line ");
}

TEST(DecodeTest, InvalidYamlLineNumberIsOneBased) {
  const auto errors = Decode("a: b\nc: d\n  e: f\n");
  EXPECT_ERROR(errors, "test.yaml: invalid YAML at line 3");
}

TEST(DecodeTest, InvalidCreationTimestamp) {
  const auto errors = Decode(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: q1\n"
      "  creationTimestamp: 2025-13-01 noon\n");
  EXPECT_ERROR(errors, "test.yaml: Queue q1: metadata.creationTimestamp: ",
               "expected an RFC 3339 time, got \"2025-13-01 noon\"");
}

TEST(DecodeTest, SchedulerNameMustBeAString) {
  const auto errors = Decode(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
      "spec:\n  schedulerName: {name: kai}\n  containers: [{name: c}]\n");
  EXPECT_ERROR(errors, "test.yaml: Pod default/p1: spec.schedulerName: expected a string");
}

TEST(DecodeTest, ErrorsFromSeveralObjectsAreAllReported) {
  const auto errors = Decode(Docs(
      {PodYaml("p1", "", "requests: {cpu: abc}"), PodYaml("p2", "", "requests: {memory: '-1'}")}));
  EXPECT_EQ(errors.size(), 2u) << JoinLines(errors);
  EXPECT_ERROR(errors, "Pod default/p1", "requests.cpu");
  EXPECT_ERROR(errors, "Pod default/p2", "requests.memory");
}

// ---- Cross-object errors (LoadManifests on files, which validates). ----

TEST(LoadManifestsTest, ValidClusterLoads) {
  TempDir dir;
  const std::string file = dir.Write("c.yaml", Docs({kQueues, kPodGroup, PodYaml("p1")}));
  auto r = LoadManifests({file});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->queues.size(), 2u);
  EXPECT_EQ(r->pod_groups.size(), 1u);
  ASSERT_EQ(r->pods.size(), 1u);
  EXPECT_EQ(r->pods[0].meta.source, file);
}

TEST(LoadManifestsTest, GpuMemoryLargerThanEveryDeviceIsRejected) {
  TempDir dir;
  const std::string node =
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {nvidia.com/gpu.memory: "
      "'40960'}\nstatus:\n  allocatable: {nvidia.com/gpu: '8'}\n";
  const std::string file = dir.Write(
      "c.yaml", Docs({kQueues, kPodGroup, node, PodYaml("p1", "    gpu-memory: '50000'\n"),
                      PodYaml("p2", "    gpu-memory: '40000'\n")}));
  const std::string err = LoadError({file});
  EXPECT_NE(err.find("Pod default/p1: metadata.annotations.gpu-memory: 50000 MiB is more than "
                     "any GPU in the cluster has (largest: 40900 MiB)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("Pod default/p2"), std::string::npos) << err;
}

TEST(LoadManifestsTest, DecodeErrorNamesTheFile) {
  TempDir dir;
  const std::string file =
      dir.Write("bad.yaml", Docs({kQueues, kPodGroup, PodYaml("p1", "", "requests: {cpu: abc}")}));
  EXPECT_NE(
      LoadError({file}).find(file + ": Pod default/p1: spec.containers[0].resources.requests.cpu: "
                                    "invalid quantity \"abc\""),
      std::string::npos)
      << LoadError({file});
}

TEST(LoadManifestsTest, InvalidYamlNamesFileAndLine) {
  TempDir dir;
  const std::string file = dir.Write("broken.yaml", "kind: Pod\nmetadata: {name: [x\n");
  const std::string err = LoadError({file});
  EXPECT_NE(err.find(file + ": invalid YAML at line "), std::string::npos) << err;
}

TEST(LoadManifestsTest, DuplicatePodNames) {
  TempDir dir;
  const std::string a = dir.Write("a.yaml", Docs({kQueues, kPodGroup, PodYaml("p")}));
  const std::string b = dir.Write("b.yaml", PodYaml("p"));
  const std::string err = LoadError({a, b});
  EXPECT_NE(err.find(b + ": Pod default/p: metadata.name: duplicate name (also in " + a + ")"),
            std::string::npos)
      << err;
}

TEST(LoadManifestsTest, SameNameInOtherNamespaceIsNotADuplicate) {
  TempDir dir;
  std::string other = PodYaml("p");
  other.replace(other.find("namespace: default"), 18, "namespace: other");
  std::string other_pg = kPodGroup;
  other_pg.replace(other_pg.find("namespace: default"), 18, "namespace: other");
  const std::string a =
      dir.Write("a.yaml", Docs({kQueues, kPodGroup, PodYaml("p"), other_pg, other}));
  EXPECT_EQ(LoadError({a}), "");
}

TEST(LoadManifestsTest, PodNamingMissingPodGroup) {
  TempDir dir;
  std::string pod = PodYaml("p1");
  pod.replace(pod.find("pod-group-name: pg"), 18, "pod-group-name: nope");
  const std::string file = dir.Write("c.yaml", Docs({kQueues, kPodGroup, pod}));
  const std::string err = LoadError({file});
  EXPECT_NE(err.find(file +
                     ": Pod default/p1: metadata.annotations.pod-group-name: PodGroup default/nope "
                     "not found"),
            std::string::npos)
      << err;
}

TEST(LoadManifestsTest, PodGroupNamingMissingQueue) {
  TempDir dir;
  std::string pg = kPodGroup;
  pg.replace(pg.find("queue: q1"), 9, "queue: nope");
  const std::string file = dir.Write("c.yaml", Docs({kQueues, pg}));
  const std::string err = LoadError({file});
  EXPECT_NE(err.find(file + ": PodGroup default/pg: spec.queue: queue \"nope\" not found"),
            std::string::npos)
      << err;
}

TEST(LoadManifestsTest, PodGroupInNonLeafQueue) {
  TempDir dir;
  std::string pg = kPodGroup;
  pg.replace(pg.find("queue: q1"), 9, "queue: dept");
  const std::string file = dir.Write("c.yaml", Docs({kQueues, pg}));
  const std::string err = LoadError({file});
  EXPECT_NE(
      err.find(file + ": PodGroup default/pg: spec.queue: queue \"dept\" is not a leaf queue"),
      std::string::npos)
      << err;
}

TEST(LoadManifestsTest, QueueParentNotFound) {
  TempDir dir;
  const std::string file =
      dir.Write("q.yaml",
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q1}\n"
                "spec: {parentQueue: ghost}\n");
  const std::string err = LoadError({file});
  EXPECT_NE(err.find(file + ": Queue q1: spec.parentQueue: queue \"ghost\" not found"),
            std::string::npos)
      << err;
}

TEST(LoadManifestsTest, QueueParentCycle) {
  TempDir dir;
  const std::string file = dir.Write(
      "q.yaml", Docs({"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\n"
                      "spec: {parentQueue: b}\n",
                      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\n"
                      "spec: {parentQueue: a}\n"}));
  const std::string err = LoadError({file});
  EXPECT_NE(err.find(file + ": Queue a: spec.parentQueue: the queue hierarchy has a cycle"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(file + ": Queue b: spec.parentQueue: the queue hierarchy has a cycle"),
            std::string::npos)
      << err;
}

TEST(LoadManifestsTest, QueueSelfParentIsACycle) {
  TempDir dir;
  const std::string file =
      dir.Write("q.yaml",
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\n"
                "spec: {parentQueue: a}\n");
  EXPECT_NE(LoadError({file}).find("Queue a: spec.parentQueue: the queue hierarchy has a cycle"),
            std::string::npos)
      << LoadError({file});
}

TEST(LoadManifestsTest, ErrorMessageJoinsErrorsWithNewlines) {
  TempDir dir;
  const std::string file = dir.Write("c.yaml", Docs({PodYaml("p1", "", "requests: {cpu: abc}"),
                                                     PodYaml("p2", "", "requests: {cpu: xyz}")}));
  const std::string err = LoadError({file});
  const size_t nl = err.find('\n');
  ASSERT_NE(nl, std::string::npos) << err;
  EXPECT_NE(err.substr(0, nl).find("Pod default/p1"), std::string::npos) << err;
  EXPECT_NE(err.substr(nl + 1).find("Pod default/p2"), std::string::npos) << err;
}

TEST(LoadManifestsTest, MissingFile) {
  TempDir dir;
  const std::string missing = dir.path() + "/absent.yaml";
  EXPECT_NE(LoadError({missing}).find(missing + ": no such file or directory"), std::string::npos);
}

TEST(LoadManifestsTest, DirectoryReadsYamlFilesInNameOrder) {
  TempDir dir;
  dir.Write("b.yaml", PodYaml("p2"));
  dir.Write("a.yml", Docs({kQueues, kPodGroup, PodYaml("p1")}));
  dir.Write("notes.txt", "not yaml: [");
  auto r = LoadManifests({dir.path()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->pods.size(), 2u);
  EXPECT_EQ(r->pods[0].meta.name, "p1");
  EXPECT_EQ(r->pods[1].meta.name, "p2");
}

// ---- Positive decoding: Kubernetes semantics and kai units. ----

const PodObject& OnlyPod(const ClusterState& state) {
  EXPECT_EQ(state.pods.size(), 1u);
  return state.pods.at(0);
}

TEST(DecodeTest, LimitsDefaultRequests) {
  const ClusterState state = DecodeOk(PodYaml(
      "p1", "", "limits: {cpu: '2', memory: 1Gi, nvidia.com/gpu: '1', example.com/foo: '3'}"));
  const Resources& r = OnlyPod(state).request;
  EXPECT_EQ(r.milli_cpu, 2000);
  EXPECT_EQ(r.memory, int64_t{1} << 30);
  EXPECT_EQ(r.milli_gpu, 1000);
  EXPECT_EQ(r.Scalar(InternResource("example.com/foo")), 3);
}

TEST(DecodeTest, ExplicitRequestWinsOverLimit) {
  const ClusterState state =
      DecodeOk(PodYaml("p1", "", "requests: {cpu: 500m}, limits: {cpu: '2', memory: 2Gi}"));
  const Resources& r = OnlyPod(state).request;
  EXPECT_EQ(r.milli_cpu, 500);
  EXPECT_EQ(r.memory, int64_t{2} << 30);
}

TEST(DecodeTest, ExplicitZeroRequestIsNotDefaultedFromLimit) {
  const ClusterState state =
      DecodeOk(PodYaml("p1", "", "requests: {cpu: '0'}, limits: {cpu: '2'}"));
  EXPECT_EQ(OnlyPod(state).request.milli_cpu, 0);
}

constexpr const char* kInitPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  initContainers:
  - name: big-init
    resources: {requests: {cpu: '3', memory: 1Gi}}
  - name: small-init
    resources: {requests: {cpu: '1', memory: 4Gi}}
  containers:
  - name: a
    resources: {requests: {cpu: '1', memory: 1Gi}}
  - name: b
    resources: {requests: {cpu: '1', memory: 1Gi}}
)";

TEST(DecodeTest, InitContainersTakeMaxOfSumAndLargestInit) {
  const ClusterState state = DecodeOk(kInitPod);
  const Resources& r = OnlyPod(state).request;
  EXPECT_EQ(r.milli_cpu, 3000);           // init 3 > containers 1 + 1
  EXPECT_EQ(r.memory, int64_t{4} << 30);  // init 4Gi > containers 2Gi
  EXPECT_EQ(r.pods, 1);
}

TEST(DecodeTest, SidecarInitContainersAddToTheSum) {
  const ClusterState state = DecodeOk(R"(
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  initContainers:
  - name: sidecar
    restartPolicy: Always
    resources: {requests: {cpu: '1', memory: 1Gi}}
  - name: init
    resources: {requests: {cpu: '2', memory: 1Gi}}
  containers:
  - name: a
    resources: {requests: {cpu: '1', memory: 1Gi}}
)");
  const Resources& r = OnlyPod(state).request;
  // Containers + sidecar = 2 cpu / 2Gi; the plain init runs beside the sidecar: 3 cpu / 2Gi.
  EXPECT_EQ(r.milli_cpu, 3000);
  EXPECT_EQ(r.memory, int64_t{2} << 30);
}

TEST(DecodeTest, SidecarAloneAddsToContainers) {
  const ClusterState state = DecodeOk(R"(
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  initContainers:
  - name: sidecar
    restartPolicy: Always
    resources: {limits: {nvidia.com/gpu: '1'}}
  containers:
  - name: a
    resources: {limits: {nvidia.com/gpu: '1'}}
)");
  EXPECT_EQ(OnlyPod(state).request.milli_gpu, 2000);
}

TEST(DecodeTest, OverheadIsAdded) {
  const ClusterState state = DecodeOk(R"(
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  overhead: {cpu: 250m, memory: 64Mi}
  containers:
  - name: a
    resources: {requests: {cpu: '1', memory: 1Gi}}
)");
  const Resources& r = OnlyPod(state).request;
  EXPECT_EQ(r.milli_cpu, 1250);
  EXPECT_EQ(r.memory, (int64_t{1} << 30) + (int64_t{64} << 20));
}

TEST(DecodeTest, EveryPodTakesOnePodsSlot) {
  const ClusterState state = DecodeOk(PodYaml("p1", "", ""));
  EXPECT_EQ(OnlyPod(state).request.pods, 1);
  EXPECT_EQ(OnlyPod(state).request.milli_cpu, 0);
}

TEST(DecodeTest, ListKindExpandsItems) {
  const ClusterState state = DecodeOk(R"(
apiVersion: v1
kind: List
items:
- apiVersion: scheduling.run.ai/v2
  kind: Queue
  metadata: {name: q1}
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {cpu: '4', memory: 8Gi, nvidia.com/gpu: '2', pods: '110'}
)");
  ASSERT_EQ(state.queues.size(), 1u);
  EXPECT_EQ(state.queues[0].meta.name, "q1");
  ASSERT_EQ(state.nodes.size(), 1u);
  EXPECT_EQ(state.nodes[0].allocatable.milli_cpu, 4000);
  EXPECT_EQ(state.nodes[0].allocatable.milli_gpu, 2000);
  EXPECT_EQ(state.nodes[0].allocatable.pods, 110);
}

TEST(DecodeTest, QuantityUnits) {
  const ClusterState state = DecodeOk(PodYaml("p1", "", "requests: {cpu: 500m, memory: 1Gi}"));
  EXPECT_EQ(OnlyPod(state).request.milli_cpu, 500);
  EXPECT_EQ(OnlyPod(state).request.memory, 1073741824);
}

TEST(DecodeTest, DecimalMemorySuffix) {
  const ClusterState state = DecodeOk(PodYaml("p1", "", "requests: {memory: 1G}"));
  EXPECT_EQ(OnlyPod(state).request.memory, 1000000000);
}

TEST(DecodeTest, NodeAllocatableDefaultsToCapacity) {
  const ClusterState state = DecodeOk(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  capacity: {cpu: '8'}\n");
  ASSERT_EQ(state.nodes.size(), 1u);
  EXPECT_EQ(state.nodes[0].allocatable.milli_cpu, 8000);
}

constexpr const char* kQueueWithResources = R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q1}
spec:
  resources:
    gpu: {quota: 0.5, limit: -1, overQuotaWeight: 2}
    cpu: {quota: 1500, limit: -1}
    memory: {quota: 100, limit: 200}
)";

TEST(DecodeTest, QueueQuotaUnits) {
  const ClusterState state = DecodeOk(kQueueWithResources);
  ASSERT_EQ(state.queues.size(), 1u);
  const QueueObject& q = state.queues[0];
  EXPECT_TRUE(q.has_resources);
  EXPECT_EQ(q.gpu.quota, 500);  // 0.5 GPU -> 500 milli-GPU
  EXPECT_EQ(q.gpu.weight_milli, 2000);
  EXPECT_EQ(q.cpu.quota, 1500);          // already millicores
  EXPECT_EQ(q.memory.quota, 100000000);  // 100 MB -> bytes
  EXPECT_EQ(q.memory.limit, 200000000);
}

TEST(DecodeTest, QueueMinusOneStaysMinusOne) {
  const ClusterState state = DecodeOk(kQueueWithResources);
  ASSERT_EQ(state.queues.size(), 1u);
  EXPECT_EQ(state.queues[0].gpu.limit, -1);
  EXPECT_EQ(state.queues[0].cpu.limit, -1);
}

TEST(DecodeTest, QueueMinusOneQuotaOnMemoryIsNotScaled) {
  const ClusterState state = DecodeOk(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q1}\n"
      "spec:\n  resources:\n    memory: {quota: -1, limit: -1, overQuotaWeight: -1}\n");
  ASSERT_EQ(state.queues.size(), 1u);
  EXPECT_EQ(state.queues[0].memory.quota, -1);
  EXPECT_EQ(state.queues[0].memory.limit, -1);
  EXPECT_EQ(state.queues[0].memory.weight_milli, -1000);
}

TEST(DecodeTest, QueueWithoutResourcesIsAllZero) {
  const ClusterState state =
      DecodeOk("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q1}\n");
  ASSERT_EQ(state.queues.size(), 1u);
  EXPECT_FALSE(state.queues[0].has_resources);
  EXPECT_EQ(state.queues[0].gpu.quota, 0);
  EXPECT_FALSE(state.queues[0].priority.has_value());
}

TEST(DecodeTest, GpuFractionInMilli) {
  const ClusterState state = DecodeOk(PodYaml("p1", "    gpu-fraction: '0.25'\n"));
  EXPECT_EQ(OnlyPod(state).gpu_sharing.fraction_milli, 250);
  EXPECT_TRUE(OnlyPod(state).gpu_sharing.IsShared());
  EXPECT_EQ(OnlyPod(state).request.milli_gpu, 0);
}

TEST(DecodeTest, PodDefaults) {
  const ClusterState state = DecodeOk(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c}]}\n");
  const PodObject& p = OnlyPod(state);
  EXPECT_EQ(p.meta.ns, "default");
  EXPECT_EQ(p.meta.uid, "default/p1");
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_TRUE(p.pod_group.empty());
}

TEST(DecodeTest, TimestampsAreParsed) {
  const ClusterState state = DecodeOk(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: q1\n"
      "  creationTimestamp: '2025-01-01T12:00:00Z'\n");
  ASSERT_EQ(state.queues.size(), 1u);
  EXPECT_EQ(state.queues[0].meta.creation, 1735732800);
}

}  // namespace
}  // namespace kai
