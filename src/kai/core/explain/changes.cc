#include "kai/core/explain/changes.h"

#include <algorithm>

#include "kai/core/framework/reasons.h"

namespace kai {

std::string WorkloadRef::Name() const { return ns + "/" + (pod_group.empty() ? pod : pod_group); }

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kWait:
      return "wait";
    case ChangeKind::kRemoveNodeSelector:
      return "remove-node-selector";
    case ChangeKind::kRemoveNodeAffinity:
      return "remove-node-affinity";
    case ChangeKind::kTolerateTaints:
      return "tolerate-taints";
    case ChangeKind::kRelaxTopology:
      return "relax-topology";
    case ChangeKind::kRaiseLimit:
      return "raise-limit";
    case ChangeKind::kRaiseQuota:
      return "raise-quota";
    case ChangeKind::kFreeGpus:
      return "free-gpus";
    case ChangeKind::kNonPreemptible:
      return "non-preemptible";
    case ChangeKind::kMinRuntime:
      return "min-runtime";
  }
  return "unknown";
}

std::vector<size_t> WorkloadPods(const ClusterState& world, const WorkloadRef& w) {
  std::vector<size_t> out;
  for (size_t i = 0; i < world.pods.size(); ++i) {
    const PodObject& p = world.pods[i];
    if (p.meta.ns != w.ns) continue;
    if (w.pod_group.empty() ? p.meta.name == w.pod : p.pod_group == w.pod_group) out.push_back(i);
  }
  return out;
}

namespace {

QueueObject* FindQueue(ClusterState& world, const std::string& name) {
  for (QueueObject& q : world.queues) {
    if (q.meta.name == name) return &q;
  }
  return nullptr;
}

const QueueObject* FindQueue(const ClusterState& world, const std::string& name) {
  return FindQueue(const_cast<ClusterState&>(world), name);
}

PodGroupObject* FindPodGroup(ClusterState& world, const WorkloadRef& w) {
  for (PodGroupObject& pg : world.pod_groups) {
    if (pg.meta.ns == w.ns && pg.meta.name == w.pod_group) return &pg;
  }
  return nullptr;
}

QueueResource* QueueResourceOf(QueueObject& q, const std::string& resource) {
  if (resource == "cpu") return &q.cpu;
  if (resource == "memory") return &q.memory;
  if (resource == "nvidia.com/gpu") return &q.gpu;
  return nullptr;
}

std::string TaintText(const Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

std::string Joined(const std::vector<std::string>& items, size_t most) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += " and " + std::to_string(items.size() - most) + " more";
  return out;
}

std::string DescribeRaise(const Change& c, const ClusterState& world, bool limit) {
  const QueueObject* q = FindQueue(world, c.queue);
  std::string to;
  if (q) {
    QueueResource* r = QueueResourceOf(const_cast<QueueObject&>(*q), c.resource);
    const int64_t before = r ? (limit ? r->limit : r->quota) : 0;
    to = " (from " + FormatResourceAmount(c.resource, before) + " to " +
         FormatResourceAmount(c.resource, before + c.amount) + ")";
  }
  return "raise queue " + c.queue + "'s " + c.resource + (limit ? " limit" : " quota") + " by " +
         FormatResourceAmount(c.resource, c.amount) + to;
}

std::string DescribeFreed(const Change& c) {
  std::vector<std::string> jobs;
  for (const FreedJob& j : c.freed) {
    jobs.push_back((j.job.empty() ? j.pods.front() : j.job) + " (queue " + j.queue + ", " +
                   (j.over_quota ? "over quota" : "in quota") + ", " +
                   FormatResourceAmount("nvidia.com/gpu", j.milli_gpu) +
                   (j.milli_gpu == 1000 ? " GPU)" : " GPUs)"));
  }
  return "free " + FormatResourceAmount("nvidia.com/gpu", c.amount) + " GPUs on " +
         Joined(c.nodes, 4) + " by stopping " + Joined(jobs, 4);
}

std::string DescribeTopology(const Change& c) {
  const std::string whose = c.sub_group.empty() ? "" : " of subgroup " + c.sub_group;
  return "relax the required topology level" + whose + " from " + c.from_level + " to " +
         (c.to_level.empty() ? "none (drop it)" : c.to_level);
}

std::string DescribeTaints(const Change& c) {
  std::vector<std::string> taints;
  for (const Taint& t : c.taints) taints.push_back(TaintText(t));
  return "tolerate taint" + std::string(c.taints.size() == 1 ? " " : "s ") + Joined(taints, 4) +
         " on the pods of " + c.workload.Name();
}

}  // namespace

std::string DescribeChange(const Change& c, const ClusterState& world) {
  switch (c.kind) {
    case ChangeKind::kWait:
      return "wait until " + FormatRfc3339(c.at) + " (" + c.waiting_for + ")";
    case ChangeKind::kRemoveNodeSelector:
      return "remove nodeSelector " + c.key + " from the pods of " + c.workload.Name();
    case ChangeKind::kRemoveNodeAffinity:
      return "remove the required node affinity of the pods of " + c.workload.Name();
    case ChangeKind::kTolerateTaints:
      return DescribeTaints(c);
    case ChangeKind::kRelaxTopology:
      return DescribeTopology(c);
    case ChangeKind::kRaiseLimit:
      return DescribeRaise(c, world, true);
    case ChangeKind::kRaiseQuota:
      return DescribeRaise(c, world, false);
    case ChangeKind::kFreeGpus:
      return DescribeFreed(c);
    case ChangeKind::kNonPreemptible:
      return "make PodGroup " + c.workload.Name() + " non-preemptible";
    case ChangeKind::kMinRuntime:
      return "give queue " + c.queue + " a " + c.disruption + "MinRuntime of " +
             std::to_string(c.amount) + "s";
  }
  return "";
}

namespace {

Status EditPods(const Change& c, ClusterState& world) {
  const std::vector<size_t> pods = WorkloadPods(world, c.workload);
  if (pods.empty()) return Error{"no pods of " + c.workload.Name()};
  for (size_t i : pods) {
    PodObject& p = world.pods[i];
    switch (c.kind) {
      case ChangeKind::kRemoveNodeSelector:
        p.node_selector.erase(c.key);
        break;
      case ChangeKind::kRemoveNodeAffinity:
        p.required_node_affinity.clear();
        break;
      default:
        for (const Taint& t : c.taints)
          p.tolerations.push_back({t.key, "Equal", t.value, t.effect});
    }
  }
  return Ok();
}

Status RelaxTopology(const Change& c, ClusterState& world) {
  PodGroupObject* pg = FindPodGroup(world, c.workload);
  if (!pg) return Error{"PodGroup " + c.workload.Name() + " not found"};
  std::optional<TopologyConstraintSpec>* spec = &pg->topology_constraint;
  for (SubGroupSpec& sg : pg->sub_groups.Mutable()) {
    if (!c.sub_group.empty() && sg.name == c.sub_group) spec = &sg.topology_constraint;
  }
  if (!*spec) return Error{"PodGroup " + c.workload.Name() + ": no topology constraint"};
  (*spec)->required_level = InternedString(c.to_level);
  // A constraint must name a level: without a preferred one, dropping the required level drops
  // the constraint.
  if ((*spec)->required_level.empty() && (*spec)->preferred_level.empty()) spec->reset();
  return Ok();
}

void RaiseQuota(QueueResource& r, int64_t amount) {
  r.quota += amount;
  if (r.limit >= 0) r.limit = std::max(r.limit, r.quota);
}

// A quota raised on a queue is shared out by its parent: the quotas set above it rise too, and
// every limit stays at least its quota.
Status RaiseQueue(const Change& c, ClusterState& world) {
  QueueObject* q = FindQueue(world, c.queue);
  if (!q) return Error{"queue " + c.queue + " not found"};
  QueueResource* r = QueueResourceOf(*q, c.resource);
  if (!r) return Error{"queue " + c.queue + ": unknown resource " + c.resource};
  if (c.kind == ChangeKind::kRaiseLimit) {
    r->limit += c.amount;
    return Ok();
  }
  RaiseQuota(*r, c.amount);
  for (QueueObject* p = FindQueue(world, q->parent); p; p = FindQueue(world, p->parent)) {
    QueueResource* pr = QueueResourceOf(*p, c.resource);
    if (pr->quota >= 0) RaiseQuota(*pr, c.amount);
  }
  return Ok();
}

Status FreePods(const Change& c, ClusterState& world) {
  std::vector<std::string> names;
  for (const FreedJob& j : c.freed) names.insert(names.end(), j.pods.begin(), j.pods.end());
  std::sort(names.begin(), names.end());
  auto freed = [&](const std::string& ns, const std::string& name) {
    return std::binary_search(names.begin(), names.end(), ns + "/" + name);
  };
  const size_t before = world.pods.size();
  std::erase_if(world.pods,
                [&](const PodObject& p) { return freed(p.meta.ns.str(), p.meta.name); });
  std::erase_if(world.bind_requests,
                [&](const BindRequestObject& b) { return freed(b.meta.ns.str(), b.pod_name); });
  if (before - world.pods.size() != names.size()) return Error{"pods to free not found"};
  return Ok();
}

Status ProtectWithMinRuntime(const Change& c, ClusterState& world) {
  QueueObject* q = FindQueue(world, c.queue);
  if (!q) return Error{"queue " + c.queue + " not found"};
  (c.disruption == "preempt" ? q->preempt_min_runtime : q->reclaim_min_runtime) = c.amount;
  return Ok();
}

}  // namespace

Status ApplyChange(const Change& c, ClusterState& world, UnixSeconds& now) {
  switch (c.kind) {
    case ChangeKind::kWait:
      now = c.at;
      return Ok();
    case ChangeKind::kRemoveNodeSelector:
    case ChangeKind::kRemoveNodeAffinity:
    case ChangeKind::kTolerateTaints:
      return EditPods(c, world);
    case ChangeKind::kRelaxTopology:
      return RelaxTopology(c, world);
    case ChangeKind::kRaiseLimit:
    case ChangeKind::kRaiseQuota:
      return RaiseQueue(c, world);
    case ChangeKind::kFreeGpus:
      return FreePods(c, world);
    case ChangeKind::kNonPreemptible: {
      PodGroupObject* pg = FindPodGroup(world, c.workload);
      if (!pg) return Error{"PodGroup " + c.workload.Name() + " not found"};
      pg->preemptibility = InternedString("non-preemptible");
      return Ok();
    }
    case ChangeKind::kMinRuntime:
      return ProtectWithMinRuntime(c, world);
  }
  return Error{"unknown change"};
}

ChangeSize SizeOf(const Change& c) {
  switch (c.kind) {
    case ChangeKind::kWait:
      return {0, c.at, 0};
    case ChangeKind::kRemoveNodeSelector:
    case ChangeKind::kRemoveNodeAffinity:
      return {1, 1, 0};
    case ChangeKind::kTolerateTaints:
      return {1, static_cast<int64_t>(c.taints.size()), 0};
    case ChangeKind::kRelaxTopology:
      return {1, c.to_level.empty() ? 3 : 2, 0};
    case ChangeKind::kNonPreemptible:
      return {1, 1, 0};
    case ChangeKind::kMinRuntime:
      return {2, c.amount, 0};
    case ChangeKind::kRaiseLimit:
      return {2, c.amount, 0};
    case ChangeKind::kRaiseQuota:
      return {3, c.amount, 0};
    case ChangeKind::kFreeGpus:
      return {4, static_cast<int64_t>(c.freed.size()), c.amount};
  }
  return {};
}

}  // namespace kai
