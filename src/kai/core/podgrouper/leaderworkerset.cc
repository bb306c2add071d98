// A LeaderWorkerSet (PG/leaderworkerset/lws_grouper.go): one PodGroup per group of pods
// (`pg-<lws>-<uid>-group-<i>`). minMember: the group size (startupPolicy LeaderCreated, the
// default), or 1 while the leader of a LeaderReady set is not yet scheduled. SubGroups `leader`
// (1) and `workers` (the rest), or with a segment size, segments `segment-<i>`: under the
// LeaderWorker policy the first segment holds the leader (as children `leader` and `workers`),
// under LeaderExcluded the leader sits alone before the segments.
#include "kai/core/podgrouper/default_grouper.h"
#include "kai/core/podgrouper/keys.h"

namespace kai::podgrouper {
namespace {

constexpr int kMaxSegments = 10000;

bool IsLeader(const Object& pod) {
  const std::string* v = pod.Label(keys::kLwsWorkerIndexLabel);
  return v != nullptr && *v == "0";
}

std::vector<std::string> PodIf(bool yes, const Object& pod) {
  return yes ? std::vector<std::string>{pod.name} : std::vector<std::string>{};
}

// (replicas - 1) % segment == 0: the leader is one pod beyond whole segments of workers.
bool Divisible(int replicas, int segment) { return (replicas - 1) % segment == 0; }

int SegmentIndex(int worker_index, int replicas, int segment) {
  if (worker_index == 0) return 0;  // the leader is always in the first segment
  if (Divisible(replicas, segment)) return (worker_index - 1) / segment;
  return worker_index / segment;
}

int SegmentCount(int replicas, int segment) {
  return SegmentIndex(replicas - 1, replicas, segment) + 1;
}

// The segment size: spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize, else the LWS's
// kai.scheduler/segment-size annotation, else the worker template's; nullopt when none.
Result<std::optional<int>> SegmentSize(const Object& lws, int replicas) {
  auto size =
      NestedInt(lws, Root(lws), {"spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize"});
  if (!size) return size.error();
  std::optional<int64_t> value = *size;
  const std::string key(keys::kSegmentSizeAnnotation);
  if (!value) {
    if (const std::string* v = lws.Annotation(key)) {
      value = Atoi(*v);
      if (!value) {
        return FieldError(lws, "metadata.annotations." + key,
                          "invalid segment size \"" + *v + "\"");
      }
    }
  }
  if (!value) {
    auto v = NestedString(
        lws, Root(lws),
        {"spec", "leaderWorkerTemplate", "workerTemplate", "metadata", "annotations", key});
    if (v && v->has_value()) {
      value = Atoi(**v);
      if (!value) {
        return FieldError(lws,
                          "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations." + key,
                          "invalid segment size \"" + **v + "\"");
      }
    }
  }
  if (!value) return std::optional<int>();
  if (*value <= 1) {
    return FieldError(
        lws, "",
        "segment size " + std::to_string(*value) + " is not valid: it must be greater than 1");
  }
  if (*value > replicas) {
    return FieldError(lws, "",
                      "segment size " + std::to_string(*value) + " is greater than the " +
                          std::to_string(replicas) + " pods of a group");
  }
  return std::optional<int>(static_cast<int>(*value));
}

std::string WorkerAnnotation(const Object& lws, const Object& pod, const Field& worker_template,
                             std::string_view key) {
  if (const std::string* v = pod.Annotation(key); v != nullptr && !v->empty()) return *v;
  auto v = NestedString(lws, worker_template, {"metadata", "annotations", key});
  return v && v->has_value() ? **v : std::string();
}

Result<std::optional<TopologyConstraint>> SegmentTopology(const Object& lws, const Object& pod) {
  auto tmpl = NestedMap(lws, Root(lws), {"spec", "leaderWorkerTemplate", "workerTemplate"});
  if (!tmpl) return tmpl.error();
  if (!tmpl->has_value()) return std::optional<TopologyConstraint>();
  std::string topology = WorkerAnnotation(lws, pod, **tmpl, keys::kTopologyAnnotation);
  if (topology.empty()) {
    if (const std::string* v = lws.Annotation(keys::kTopologyAnnotation)) topology = *v;
  }
  if (topology.empty()) return std::optional<TopologyConstraint>();
  TopologyConstraint c{topology,
                       WorkerAnnotation(lws, pod, **tmpl, keys::kSegmentRequiredAnnotation),
                       WorkerAnnotation(lws, pod, **tmpl, keys::kSegmentPreferredAnnotation)};
  if (c.required_level.empty() && c.preferred_level.empty())
    return std::optional<TopologyConstraint>();
  return std::optional<TopologyConstraint>(std::move(c));
}

std::vector<SubGroupMetadata> Unsegmented(int replicas, const Object& pod) {
  std::vector<SubGroupMetadata> out{
      {"leader", std::nullopt, 1, std::nullopt, std::nullopt, PodIf(IsLeader(pod), pod)}};
  if (replicas - 1 > 0) {
    out.push_back({"workers", std::nullopt, replicas - 1, std::nullopt, std::nullopt,
                   PodIf(!IsLeader(pod), pod)});
  }
  return out;
}

// segment-0..n-1 of `segment` pods each; the last holds what is left of the group.
std::vector<SubGroupMetadata> SegmentSubGroups(int replicas, int segment,
                                               const std::optional<TopologyConstraint>& topology) {
  const int count = SegmentCount(replicas, segment);
  std::vector<SubGroupMetadata> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(
        {"segment-" + std::to_string(i), std::nullopt, segment, std::nullopt, topology, {}});
  }
  int last = 0;
  for (int w = replicas - 1; w >= 0 && SegmentIndex(w, replicas, segment) == count - 1; --w) ++last;
  out.back().min_member = last;
  return out;
}

// LeaderWorker: the first segment becomes the parent of `leader` and its `workers`. Returns
// whether the pod was placed in one of them.
bool SplitFirstSegment(std::vector<SubGroupMetadata>& out, int replicas, int segment,
                       const Object& pod, int pod_segment) {
  SubGroupMetadata& first = out.front();
  if (Divisible(replicas, segment)) first.min_member += 1;
  const std::string parent = first.name;
  const int first_min = first.min_member;
  first.min_sub_group = 2;
  first.min_member = 0;
  const bool leader = IsLeader(pod), first_worker = pod_segment == 0 && !leader;
  out.push_back({"leader", parent, 1, std::nullopt, std::nullopt, PodIf(leader, pod)});
  out.push_back(
      {"workers", parent, first_min - 1, std::nullopt, std::nullopt, PodIf(first_worker, pod)});
  return leader || first_worker;
}

Result<std::vector<SubGroupMetadata>> Segmented(const Object& lws, const Object& pod, int replicas,
                                                int segment, std::string_view policy,
                                                const std::optional<TopologyConstraint>& topology) {
  std::vector<SubGroupMetadata> out = SegmentSubGroups(replicas, segment, topology);
  const std::string key(keys::kLwsWorkerIndexLabel);
  const std::string* index = pod.Label(key);
  const auto worker = index == nullptr ? std::nullopt : Atoi(*index);
  if (!worker) {
    return FieldError(pod, "metadata.labels." + key,
                      index == nullptr ? "missing" : "invalid worker index \"" + *index + "\"");
  }
  int pod_segment = SegmentIndex(static_cast<int>(*worker), replicas, segment);
  bool placed = false;
  if (policy == "LeaderWorker") {
    placed = SplitFirstSegment(out, replicas, segment, pod, pod_segment);
  } else if (policy == "LeaderExcluded") {
    if (!Divisible(replicas, segment)) {
      return FieldError(lws, "spec.leaderWorkerTemplate.subGroupPolicy",
                        "LeaderExcluded needs the " + std::to_string(replicas - 1) +
                            " workers of a group to divide into segments of " +
                            std::to_string(segment));
    }
    out.insert(out.begin(), {"leader", std::nullopt, 1, std::nullopt, std::nullopt, {}});
    if (!IsLeader(pod)) pod_segment += 1;
  }
  if (placed) return out;
  if (pod_segment < 0 || pod_segment >= static_cast<int>(out.size())) {
    return FieldError(
        pod, "metadata.labels." + key,
        "worker index " + *index + " is beyond the group's " + std::to_string(replicas) + " pods");
  }
  out[pod_segment].pods.push_back(pod.name);
  return out;
}

Result<std::vector<SubGroupMetadata>> SubGroups(const Object& lws, const Object& pod,
                                                int replicas) {
  auto size = SegmentSize(lws, replicas);
  if (!size) return size.error();
  if (!size->has_value()) return Unsegmented(replicas, pod);
  const int segment = **size;
  if (SegmentCount(replicas, segment) > kMaxSegments) {
    return FieldError(lws, "", "more than " + std::to_string(kMaxSegments) + " segments");
  }
  auto policy = NestedString(
      lws, Root(lws), {"spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupPolicyType"});
  if (!policy) return policy.error();
  auto topology = SegmentTopology(lws, pod);
  if (!topology) return topology.error();
  return Segmented(lws, pod, replicas, segment, policy->value_or("LeaderWorker"), *topology);
}

class LwsGrouper : public Grouper {
 public:
  std::string_view Name() const override { return "LWS Grouper"; }
  Result<PodGroupMetadata> Group(const GroupingInput& in) const override {
    const Object& lws = in.top_owner;
    PodGroupMetadata md = DefaultMetadata(in, lws, {});
    auto size = NestedInt(lws, Root(lws), {"spec", "leaderWorkerTemplate", "size"});
    if (!size) return size.error();
    if (!size->has_value()) return FieldError(lws, "spec.leaderWorkerTemplate.size", "missing");
    if (**size <= 0) return FieldError(lws, "spec.leaderWorkerTemplate.size", "must be positive");
    const int group_size = static_cast<int>(**size);
    auto policy = NestedString(lws, Root(lws), {"spec", "startupPolicy"});
    if (!policy) return policy.error();
    const std::string key(keys::kLwsWorkerIndexLabel);
    if (const std::string* v = in.pod.Label(key)) {
      const auto index = Atoi(*v);
      if (!index || *index < 0) {
        return FieldError(in.pod, "metadata.labels." + key, "invalid worker index \"" + *v + "\"");
      }
    }
    const std::string startup = policy->value_or("LeaderCreated");
    if (startup == "LeaderReady") {
      md.min_member = LeaderReadyMinMember(in.pod, group_size);
    } else if (startup == "LeaderCreated") {
      md.min_member = group_size;
    } else {
      return FieldError(lws, "spec.startupPolicy", "unknown startup policy \"" + startup + "\"");
    }
    auto sub_groups = SubGroups(lws, in.pod, md.min_member);
    if (!sub_groups) return sub_groups.error();
    md.sub_groups = std::move(*sub_groups);
    if (const std::string* v = in.pod.Label(keys::kLwsGroupIndexLabel)) {
      if (const auto group = Atoi(*v)) md.name += "-group-" + std::to_string(*group);
    }
    return md;
  }

 private:
  // 1 while the leader is not yet scheduled (its workers are created once it is ready); else the
  // group size (the pod's leaderworkerset.sigs.k8s.io/size annotation, when an integer).
  static int LeaderReadyMinMember(const Object& pod, int group_size) {
    if (const std::string* v = pod.Annotation(keys::kLwsSizeAnnotation)) {
      if (const auto size = Atoi(*v)) group_size = static_cast<int>(*size);
    }
    if (IsLeader(pod) && ScalarAt(pod, {"spec", "nodeName"}).empty()) return 1;
    return group_size;
  }
};

}  // namespace

std::unique_ptr<Grouper> MakeLeaderWorkerSetGrouper() { return std::make_unique<LwsGrouper>(); }

}  // namespace kai::podgrouper
