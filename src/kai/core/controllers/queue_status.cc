#include "kai/core/controllers/queue_status.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <tuple>

#include "kai/core/controllers/status_patch.h"

namespace kai::controllers {
namespace {

// Statuses are validated when decoded (objects.h), so a held text always parses.
ResourceList Parsed(const TextList& texts) {
  auto list = ParseList(texts, "status");
  return list.ok() ? *list : ResourceList{};
}

struct Totals {
  ResourceList allocated, non_preemptible, requested;
  // KAI adds each item as the left operand: SumResources(item, total).
  void Add(const TextList& allocated_text, const TextList& non_preemptible_text,
           const TextList& requested_text) {
    allocated = Sum(Parsed(allocated_text), allocated);
    non_preemptible = Sum(Parsed(non_preemptible_text), non_preemptible);
    requested = Sum(Parsed(requested_text), requested);
  }
};

void WriteChildQueues(k8s::JsonWriter& w, const std::vector<std::string>& held,
                      const std::vector<std::string>& next) {
  if (held == next) return;
  k8s::Str(w, "childQueues");
  if (next.empty()) {
    w.Null();
    return;
  }
  w.StartArray();
  for (const auto& name : next) k8s::Str(w, name);
  w.EndArray();
}

double AllocatedOf(const ResourceList& allocated, std::string_view name) {
  auto it = allocated.find(name);
  return it == allocated.end() ? 0 : RoundedTo4Decimals(it->second);
}

double AllocatedGpus(const ResourceList& allocated) {
  constexpr std::string_view kSuffix = "/gpu";
  for (const auto& [name, q] : allocated) {
    if (name.size() >= kSuffix.size() && name.compare(name.size() - 4, 4, kSuffix) == 0) {
      return RoundedTo4Decimals(q);
    }
  }
  return 0;
}

}  // namespace

QueueStatusValue ComputeQueueStatus(const QueueFacts& queue,
                                    const std::vector<const QueueFacts*>& children,
                                    const std::vector<const PodGroupFacts*>& pod_groups) {
  std::vector<const QueueFacts*> kids;
  for (const QueueFacts* c : children) {
    if (c->parent == queue.name) kids.push_back(c);
  }
  std::sort(kids.begin(), kids.end(),
            [](const QueueFacts* a, const QueueFacts* b) { return a->name < b->name; });
  std::vector<const PodGroupFacts*> groups = pod_groups;
  std::sort(groups.begin(), groups.end(), [](const PodGroupFacts* a, const PodGroupFacts* b) {
    return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
  });
  Totals t;
  QueueStatusValue out;
  for (const QueueFacts* c : kids) {
    t.Add(c->status.allocated, c->status.allocated_non_preemptible, c->status.requested);
    out.child_queues.push_back(c->name);
  }
  for (const PodGroupFacts* pg : groups) {
    if (pg->queue != queue.name) continue;
    t.Add(pg->status.allocated, pg->status.allocated_non_preemptible, pg->status.requested);
  }
  out.allocated = Texts(t.allocated);
  out.allocated_non_preemptible = Texts(t.non_preemptible);
  out.requested = Texts(t.requested);
  return out;
}

std::string QueueStatusPatch(const QueueStatusValue& held, const QueueStatusValue& next) {
  if (held == next) return "{}";
  return k8s::Json([&](k8s::JsonWriter& w) {
    w.StartObject();
    k8s::Str(w, "status");
    w.StartObject();
    WriteListPatch(w, "allocated", held.allocated, next.allocated);
    WriteListPatch(w, "allocatedNonPreemptible", held.allocated_non_preemptible,
                   next.allocated_non_preemptible);
    WriteChildQueues(w, held.child_queues, next.child_queues);
    WriteListPatch(w, "requested", held.requested, next.requested);
    w.EndObject();
    w.EndObject();
  });
}

QueueMetrics QueueMetricsOf(const QueueFacts& queue, const QueueStatusValue& status) {
  QueueMetrics m;
  m.name = queue.name;
  m.display_name = queue.display_name;
  if (queue.has_resources) {
    m.deserved_gpus = queue.gpu_quota;
    m.quota_cpu_cores = queue.cpu_quota == -1 ? -1 : queue.cpu_quota / 1000;
    m.quota_memory_bytes = queue.memory_quota == -1 ? -1 : queue.memory_quota * 1000000;
  }
  const ResourceList allocated = Parsed(status.allocated);
  m.allocated_gpus = AllocatedGpus(allocated);
  m.allocated_cpu_cores = AllocatedOf(allocated, "cpu");
  m.allocated_memory_bytes = AllocatedOf(allocated, "memory");
  return m;
}

}  // namespace kai::controllers
