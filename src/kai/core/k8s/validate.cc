// Cross-object validation of a decoded cluster (see decode.h).
#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "kai/core/k8s/decode.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/k8s/nvfractions.h"
#include "kai/core/resource/quantity.h"

namespace kai {
namespace {

template <class T>
void CheckDuplicates(const std::vector<T>& objects, std::vector<std::string>& errors) {
  std::map<std::string, const ObjectMeta*> seen;
  for (const T& o : objects) {
    const std::string key = o.meta.ns + "/" + o.meta.name;
    auto [it, inserted] = seen.emplace(key, &o.meta);
    if (!inserted) {
      errors.push_back(o.meta.source + ": " + o.meta.Ref() +
                       ": metadata.name: duplicate name (also in " + it->second->source + ")");
    }
  }
}

void CheckQueueTree(const ClusterState& s, std::vector<std::string>& errors) {
  std::map<std::string, const QueueObject*> by_name;
  for (const auto& q : s.queues) by_name[q.meta.name] = &q;
  for (const auto& q : s.queues) {
    if (!q.parent.empty() && !by_name.count(q.parent)) {
      errors.push_back(q.meta.source + ": " + q.meta.Ref() + ": spec.parentQueue: queue \"" +
                       q.parent + "\" not found");
      continue;
    }
    std::set<std::string> path = {q.meta.name};
    for (const QueueObject* p = q.parent.empty() ? nullptr : by_name[q.parent]; p;
         p = p->parent.empty() || !by_name.count(p->parent) ? nullptr : by_name[p->parent]) {
      if (!path.insert(p->meta.name).second) {
        errors.push_back(q.meta.source + ": " + q.meta.Ref() +
                         ": spec.parentQueue: the queue hierarchy has a cycle through \"" +
                         p->meta.name + "\"");
        break;
      }
    }
  }
}

// The SubGroup tree must be a tree (KAI's admission webhook rejects the rest): unique names,
// known parents, no cycles; a SubGroup states minMember or minSubGroup, not both, and only a
// SubGroup with children may state minSubGroup.
void CheckSubGroups(const PodGroupObject& pg, std::vector<std::string>& errors) {
  if (pg.sub_groups.empty()) return;
  const std::string where = pg.meta.source + ": " + pg.meta.Ref() + ": ";
  std::map<std::string_view, size_t> index;
  std::set<std::string_view> parents;
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    const SubGroupSpec& sg = pg.sub_groups[i];
    const std::string path = "spec.subGroups[" + std::to_string(i) + "]";
    if (!index.emplace(sg.name, i).second) {
      errors.push_back(where + path + ".name: duplicate SubGroup \"" + sg.name + "\"");
    }
    if (!sg.parent.empty()) parents.insert(sg.parent);
    if (sg.min_member && sg.min_sub_group) {
      errors.push_back(where + path + ": minMember and minSubGroup are mutually exclusive");
    }
  }
  for (size_t i = 0; i < pg.sub_groups.size(); ++i) {
    const SubGroupSpec& sg = pg.sub_groups[i];
    const std::string path = "spec.subGroups[" + std::to_string(i) + "]";
    if (!sg.parent.empty() && !index.count(sg.parent)) {
      errors.push_back(where + path + ".parent: SubGroup \"" + sg.parent + "\" not found");
      continue;
    }
    if (sg.min_sub_group && !parents.count(sg.name)) {
      errors.push_back(where + path + ".minSubGroup: SubGroup \"" + sg.name +
                       "\" has no child SubGroups (a leaf states minMember)");
    }
    std::string_view up = sg.parent;
    for (size_t steps = 0; !up.empty(); ++steps) {
      auto it = index.find(up);
      if (it == index.end()) break;  // reported on its own entry
      if (steps > pg.sub_groups.size()) {
        errors.push_back(where + path + ".parent: the SubGroup tree has a cycle through \"" +
                         sg.name + "\"");
        break;
      }
      up = pg.sub_groups[it->second].parent;
    }
  }
}

void CheckPodGroups(const ClusterState& s, std::vector<std::string>& errors) {
  std::set<std::string> queues, parents;
  for (const auto& q : s.queues) {
    queues.insert(q.meta.name);
    if (!q.parent.empty()) parents.insert(q.parent);
  }
  for (const auto& pg : s.pod_groups) {
    CheckSubGroups(pg, errors);
    if (pg.queue.empty()) continue;  // reported by the decoder
    if (!queues.count(pg.queue)) {
      errors.push_back(pg.meta.source + ": " + pg.meta.Ref() + ": spec.queue: queue \"" + pg.queue +
                       "\" not found");
    } else if (parents.count(pg.queue)) {
      errors.push_back(pg.meta.source + ": " + pg.meta.Ref() + ": spec.queue: queue \"" + pg.queue +
                       "\" is not a leaf queue (it has child queues); only leaf queues run jobs");
    }
  }
}

void CheckPods(const ClusterState& s, std::vector<std::string>& errors) {
  std::set<std::string> groups, nodes;
  for (const auto& pg : s.pod_groups) groups.insert(pg.meta.ns + "/" + pg.meta.name);
  for (const auto& n : s.nodes) nodes.insert(n.meta.name);
  for (const auto& p : s.pods) {
    if (!p.pod_group.empty() && !groups.count(p.meta.ns + "/" + p.pod_group)) {
      errors.push_back(p.meta.source + ": " + p.meta.Ref() + ": metadata.annotations." +
                       std::string(keys::kPodGroupAnnotation) + ": PodGroup " + p.meta.ns + "/" +
                       p.pod_group + " not found");
    }
    if (!p.node_name.empty() && !nodes.count(p.node_name)) {
      errors.push_back(p.meta.source + ": " + p.meta.Ref() + ": spec.nodeName: node \"" +
                       p.node_name + "\" not found");
    }
  }
}

// The annotation a pod's GPU memory came from: gpu-memory, or an NvFractions request or limit.
std::string GpuMemoryKey(const PodObject& p) {
  for (const auto& [key, value] : p.meta.annotations) {
    if (key != keys::kGpuMemory && nvfractions::HasNvFractions({{key, value}})) {
      return std::string(key.view());
    }
  }
  return std::string(keys::kGpuMemory);
}

// A gpu-memory request larger than every device of the cluster can never be served (KAI's
// admission refuses such pods); checked when some node reports its GPU memory.
void CheckGpuMemory(const ClusterState& s, std::vector<std::string>& errors) {
  int64_t largest = 0;
  for (const auto& n : s.nodes) largest = std::max(largest, NodeGpuMemoryMib(n).value_or(0));
  if (largest == 0) return;
  for (const auto& p : s.pods) {
    const int64_t asked = p.gpu_sharing.memory_mib;
    if (asked <= largest || p.gpu_sharing.fraction_milli > 0) continue;
    errors.push_back(p.meta.source + ": " + p.meta.Ref() + ": metadata.annotations." +
                     GpuMemoryKey(p) + ": " + std::to_string(asked) +
                     " MiB is more than any GPU in the cluster has (largest: " +
                     std::to_string(largest) + " MiB)");
  }
}

std::string QuotaText(const std::string& resource, int64_t v) {
  if (resource == "gpu" || resource == "cpu") return FormatMilli(v);
  return FormatBytes(v);
}

void CheckBindRequests(const ClusterState& s, std::vector<std::string>& errors) {
  std::set<std::string> pods, nodes;
  for (const auto& p : s.pods) pods.insert(p.meta.ns + "/" + p.meta.name);
  for (const auto& n : s.nodes) nodes.insert(n.meta.name);
  for (const auto& b : s.bind_requests) {
    if (!b.pod_name.empty() && !pods.count(b.meta.ns + "/" + b.pod_name)) {
      errors.push_back(b.meta.source + ": " + b.meta.Ref() + ": spec.podName: pod " + b.meta.ns +
                       "/" + b.pod_name + " not found");
    }
    if (!b.selected_node.empty() && !nodes.count(b.selected_node)) {
      errors.push_back(b.meta.source + ": " + b.meta.Ref() + ": spec.selectedNode: node \"" +
                       b.selected_node + "\" not found");
    }
  }
}

}  // namespace

std::vector<std::string> QuotaWarnings(const ClusterState& s) {
  std::vector<std::string> warnings;
  std::map<std::string, std::vector<const QueueObject*>> children;
  for (const auto& q : s.queues) {
    if (!q.parent.empty()) children[q.parent].push_back(&q);
  }
  for (const auto& parent : s.queues) {
    auto it = children.find(parent.meta.name);
    if (it == children.end()) continue;
    const std::pair<const char*, const QueueResource QueueObject::*> resources[] = {
        {"gpu", &QueueObject::gpu}, {"cpu", &QueueObject::cpu}, {"memory", &QueueObject::memory}};
    for (const auto& [name, field] : resources) {
      const int64_t limit = (parent.*field).quota;
      if (limit < 0) continue;
      int64_t sum = 0;
      for (const QueueObject* c : it->second) sum += std::max<int64_t>(0, (c->*field).quota);
      if (sum > limit) {
        warnings.push_back(parent.meta.source + ": " + parent.meta.Ref() + ": spec.resources." +
                           name + ".quota: children's quotas add up to " + QuotaText(name, sum) +
                           ", more than this queue's " + QuotaText(name, limit) +
                           " (children share what the parent gets)");
      }
    }
  }
  return warnings;
}

std::optional<int64_t> NodeGpuMemoryMib(const NodeObject& n) {
  auto it = n.meta.labels.find(keys::kNodeGpuMemory);
  if (it == n.meta.labels.end()) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || p != it->second.data() + it->second.size() || v <= 0) {
    return std::nullopt;
  }
  constexpr int64_t kMibPerTib = int64_t{1} << 20, kBytesPerMib = int64_t{1} << 20;
  if (v >= kMibPerTib) v /= kBytesPerMib;
  return v - v % 100;
}

namespace {

void CheckNotRaised(const PodGroupObject& pg, const std::string& field, std::optional<int> before,
                    std::optional<int> after, std::vector<std::string>& errors) {
  if (!before || !after || *after <= *before) return;
  errors.push_back(pg.meta.source + ": " + pg.meta.Ref() + ": " + field + ": may not be raised (" +
                   std::to_string(*before) + " to " + std::to_string(*after) +
                   ") on a running semi-preemptible PodGroup");
}

}  // namespace

namespace {

// The raised fields of one PodGroup update, one error each.
std::vector<std::string> RaisedFields(const PodGroupObject& before, const PodGroupObject& after,
                                      bool running) {
  std::vector<std::string> errors;
  if (!running || after.preemptibility != "semi-preemptible") return errors;
  // An unset root minMember means 1 (KAI's default).
  CheckNotRaised(after, "spec.minMember", before.min_member.value_or(1),
                 after.min_member.value_or(1), errors);
  CheckNotRaised(after, "spec.minSubGroup", before.min_sub_group, after.min_sub_group, errors);
  for (const SubGroupSpec& sg : after.sub_groups) {
    const auto old = std::find_if(before.sub_groups.begin(), before.sub_groups.end(),
                                  [&](const SubGroupSpec& b) { return b.name == sg.name; });
    if (old == before.sub_groups.end()) continue;
    const std::string field = "spec.subGroups[" + sg.name + "].";
    CheckNotRaised(after, field + "minMember", old->min_member, sg.min_member, errors);
    CheckNotRaised(after, field + "minSubGroup", old->min_sub_group, sg.min_sub_group, errors);
  }
  return errors;
}

bool HasRunningPod(const ClusterState& world, const PodGroupObject& pg) {
  return std::any_of(world.pods.begin(), world.pods.end(), [&](const PodObject& p) {
    return p.meta.ns == pg.meta.ns && p.pod_group == pg.meta.name && !p.meta.deletion &&
           p.phase != "Succeeded" && p.phase != "Failed" &&
           (p.phase == "Running" || !p.node_name.empty());
  });
}

}  // namespace

Status ValidatePodGroupUpdate(const PodGroupObject& before, const PodGroupObject& after,
                              bool running) {
  return Problems(RaisedFields(before, after, running));
}

Status ValidateWorldUpdate(const ClusterState& before, const ClusterState& after) {
  std::vector<std::string> errors;
  for (const PodGroupObject& updated : after.pod_groups) {
    const auto old = std::find_if(
        before.pod_groups.begin(), before.pod_groups.end(), [&](const PodGroupObject& pg) {
          return pg.meta.ns == updated.meta.ns && pg.meta.name == updated.meta.name;
        });
    if (old == before.pod_groups.end()) continue;
    auto found = RaisedFields(*old, updated, HasRunningPod(before, *old));
    errors.insert(errors.end(), found.begin(), found.end());
  }
  return Problems(errors);
}

Status ValidateCluster(const ClusterState& s) {
  std::vector<std::string> errors;
  CheckDuplicates(s.nodes, errors);
  CheckDuplicates(s.pods, errors);
  CheckDuplicates(s.pod_groups, errors);
  CheckDuplicates(s.queues, errors);
  CheckDuplicates(s.priority_classes, errors);
  CheckDuplicates(s.topologies, errors);
  CheckDuplicates(s.bind_requests, errors);
  CheckQueueTree(s, errors);
  CheckPodGroups(s, errors);
  CheckPods(s, errors);
  CheckGpuMemory(s, errors);
  CheckBindRequests(s, errors);
  return Problems(errors);
}

}  // namespace kai
