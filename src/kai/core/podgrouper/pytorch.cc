// A Kubeflow PyTorchJob (PG/kubeflow/pytorch/pytorch_grouper.go). minMember: schedulingPolicy.
// minAvailable, else elasticPolicy.minReplicas, else the sum of the replicas. SubGroups: `master`
// (its replicas) and `worker` (minMember minus the masters); with a segment size (the
// kai.scheduler/segment-size annotation of the pod or of the Worker template) `worker` becomes a
// parent of segments worker-0..n-1, those past the minimum elastic (minMember 0).
#include <algorithm>

#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"
#include "kai/core/podgrouper/kubeflow.h"

namespace kai::podgrouper {
namespace {

constexpr std::string_view kReplicaSpecs = "pytorchReplicaSpecs";
constexpr std::string_view kMaster = "Master", kWorker = "Worker";
constexpr int kMaxSegments = 10000;

std::vector<std::string> PodIfRole(const Object& pod, std::string_view role) {
  const std::string* v = pod.Label(keys::kKubeflowReplicaType);
  if (v != nullptr && *v == role) return {pod.name};
  return {};
}

// The segment size: the pod's annotation, else the Worker template's; nullopt when none.
Result<std::optional<int>> SegmentSize(const Object& job, const Object& pod, const Field& specs) {
  const std::string key(keys::kSegmentSizeAnnotation);
  if (const std::string* v = pod.Annotation(key); v != nullptr && !v->empty()) {
    const auto size = Atoi(*v);
    if (!size || *size <= 0 || *size > INT32_MAX) {
      return FieldError(pod, "metadata.annotations." + key,
                        "invalid segment size \"" + *v + "\" (a positive integer)");
    }
    return std::optional<int>(static_cast<int>(*size));
  }
  auto v = NestedString(job, specs, {kWorker, "template", "metadata", "annotations", key});
  if (!v) return v.error();
  if (!v->has_value() || (*v)->empty()) return std::optional<int>();
  const auto size = Atoi(**v);
  if (!size || *size <= 0 || *size > INT32_MAX) {
    return FieldError(job, specs.path + ".Worker.template.metadata.annotations." + key,
                      "invalid segment size \"" + **v + "\" (a positive integer)");
  }
  return std::optional<int>(static_cast<int>(*size));
}

// A Worker template annotation, the pod's (when not empty) first; "" when neither.
std::string WorkerAnnotation(const Object& job, const Object& pod, const Field& specs,
                             std::string_view key) {
  if (const std::string* v = pod.Annotation(key); v != nullptr && !v->empty()) return *v;
  auto v = NestedString(job, specs, {kWorker, "template", "metadata", "annotations", key});
  return v && v->has_value() ? **v : std::string();
}

std::optional<TopologyConstraint> SegmentTopology(const Object& job, const Object& pod,
                                                  const Field& specs) {
  std::string topology = WorkerAnnotation(job, pod, specs, keys::kTopologyAnnotation);
  if (topology.empty()) {
    if (const std::string* v = job.Annotation(keys::kTopologyAnnotation)) topology = *v;
  }
  if (topology.empty()) return std::nullopt;
  TopologyConstraint c{topology,
                       WorkerAnnotation(job, pod, specs, keys::kSegmentRequiredAnnotation),
                       WorkerAnnotation(job, pod, specs, keys::kSegmentPreferredAnnotation)};
  if (c.required_level.empty() && c.preferred_level.empty()) return std::nullopt;
  return c;
}

// The pod's segment (replica index / segment size); -1 for a pod that is not a worker.
Result<int> PodSegment(const Object& pod, int segment_size) {
  const std::string* role = pod.Label(keys::kKubeflowReplicaType);
  if (role == nullptr || *role != "worker") return -1;
  const std::string key(keys::kKubeflowReplicaIndex);
  const std::string* index = pod.Label(key);
  if (index == nullptr) return FieldError(pod, "metadata.labels." + key, "missing on a worker pod");
  const auto i = Atoi(*index);
  if (!i || *i < 0 || *i > INT32_MAX) {
    return FieldError(pod, "metadata.labels." + key, "invalid replica index \"" + *index + "\"");
  }
  return static_cast<int>(*i / segment_size);
}

Result<std::vector<SubGroupMetadata>> WorkerSubGroups(const Object& job, const Object& pod,
                                                      const Field& specs, int worker_min) {
  if (!specs.node[kWorker].IsDefined()) return std::vector<SubGroupMetadata>();
  auto replicas = NestedInt(job, specs, {kWorker, "replicas"});
  if (!replicas) return replicas.error();
  const int workers = static_cast<int>(replicas->value_or(1));
  std::vector<std::string> pods = PodIfRole(pod, "worker");
  auto size = SegmentSize(job, pod, specs);
  if (!size) return size.error();
  const SubGroupMetadata leaf{"worker", std::nullopt, worker_min, std::nullopt, std::nullopt, pods};
  if (!size->has_value()) return std::vector<SubGroupMetadata>{leaf};
  const int segment = **size;
  const int partial = workers % segment;
  const int segments = workers / segment + (partial != 0 ? 1 : 0);
  if (segments > kMaxSegments) {
    return FieldError(job, specs.path + ".Worker.replicas",
                      std::to_string(segments) + " segments of " + std::to_string(segment) +
                          " workers exceed the limit of " + std::to_string(kMaxSegments));
  }
  if (segments <= 0) return std::vector<SubGroupMetadata>{leaf};  // no segment: worker stays a leaf
  auto pod_segment = PodSegment(pod, segment);
  if (!pod_segment) return pod_segment.error();
  const std::optional<TopologyConstraint> topology = SegmentTopology(job, pod, specs);
  // Segments whose first worker is within the minimum are required; the rest are elastic.
  const int mandatory = (worker_min + segment - 1) / segment;
  std::vector<SubGroupMetadata> out{{"worker", std::nullopt, 0, segments, std::nullopt, {}}};
  for (int i = 0; i < segments; ++i) {
    SubGroupMetadata sg{
        "worker-" + std::to_string(i), "worker", segment, std::nullopt, topology, {}};
    if (i == *pod_segment) sg.pods = pods;
    if (i >= mandatory) {
      sg.min_member = 0;
    } else if (partial != 0 && i == segments - 1) {
      sg.min_member = partial;
    }
    out.push_back(std::move(sg));
  }
  return out;
}

class PyTorchGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "PyTorchJob Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    auto md = KubeflowDistributedMetadata(in, kReplicaSpecs, {});
    if (!md) return md.error();
    const Object& job = in.top_owner;
    // KAI reads both leniently here: a malformed value is ignored (minAvailable was read
    // strictly above).
    if (auto v = NestedInt(job, Root(job), {"spec", "elasticPolicy", "minReplicas"});
        v && v->has_value()) {
      md->min_member = static_cast<int>(**v);
    }
    if (auto v =
            NestedInt(job, Root(job), {"spec", "runPolicy", "schedulingPolicy", "minAvailable"});
        v && v->has_value()) {
      md->min_member = static_cast<int>(**v);
    }
    auto specs = NestedMap(job, Root(job), {"spec", kReplicaSpecs});
    if (!specs) return specs.error();
    if (!specs->has_value()) return FieldError(job, "spec.pytorchReplicaSpecs", "missing");
    auto masters = NestedInt(job, **specs, {kMaster, "replicas"});
    if (!masters) return masters.error();
    const int master_replicas = static_cast<int>(masters->value_or(0));
    md->sub_groups.clear();
    if ((**specs).node[kMaster].IsDefined() && master_replicas != 0) {
      md->sub_groups.push_back({"master", std::nullopt, master_replicas, std::nullopt, std::nullopt,
                                PodIfRole(in.pod, "master")});
    }
    auto workers =
        WorkerSubGroups(job, in.pod, **specs, std::max(0, md->min_member - master_replicas));
    if (!workers) return workers.error();
    for (auto& sg : *workers) md->sub_groups.push_back(std::move(sg));
    return md;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakePyTorchJobGrouper() { return std::make_unique<PyTorchGrouper>(); }

}  // namespace kai::podgrouper
