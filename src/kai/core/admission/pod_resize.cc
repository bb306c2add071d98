#include "kai/core/admission/pod_resize.h"

#include <algorithm>
#include <functional>

#include "kai/core/admission/decode_request.h"
#include "kai/core/k8s/keys.h"
#include "kai/core/resource/quantity.h"

namespace kai::admission {
namespace {

// Deeper than any real queue tree: a parent cycle (which the Queue webhook refuses) ends here.
constexpr int kMaxQueueDepth = 64;

// The review's pod, through admission's decoder (decode_request.h).
Result<PodObject> DecodeRequestPod(const Request& request, const doc::Node& object) {
  auto state = DecodeRequestObject(request, object, "v1", "Pod", /*namespaced=*/true);
  if (!state.ok()) return state.error();
  if (state->pods.empty()) return Error{ObjectRef(request, object, "Pod", true) + ": not a Pod"};
  return std::move(state->pods.front());
}

// The pod as its spec asks, without what its status reports: the request a resize asks for (a
// stale "infeasible" of an earlier resize must not hide it).
Result<PodObject> DecodeSpecOnly(const Request& request) {
  const doc::Document copy = doc::CopyOf(request.object, {"status"});
  return DecodeRequestPod(request, copy.Roots()[0]);
}

bool HoldsANode(const PodObject& pod) {
  return !pod.node_name.empty() && pod.phase != "Succeeded" && pod.phase != "Failed";
}

// The CPU and memory the update adds (KEP-1287 resizes only those): what the new spec asks above
// what the pod counts for now (k8s/decode_pod.cc: the largest of spec, admitted and applied
// requests, which the pod keeps counting while the resize is pending).
Resources Growth(const Resources& before, const Resources& after) {
  Resources g;
  g.milli_cpu = std::max<int64_t>(0, after.milli_cpu - before.milli_cpu);
  g.memory = std::max<int64_t>(0, after.memory - before.memory);
  return g;
}

Result<std::string> QueueOf(const PodObject& pod, const QueueUsageLookup& lookup) {
  if (auto it = pod.meta.labels.find(keys::kQueueLabel); it != pod.meta.labels.end()) {
    return it->second;
  }
  if (pod.pod_group.empty()) return std::string();
  return lookup.PodGroupQueue(pod.meta.ns, pod.pod_group);
}

struct Amount {
  const char* name;
  int64_t limit, held, added;
  std::function<std::string(int64_t)> format;
};

std::optional<std::string> OverLimit(const std::string& queue, const Amount& a) {
  if (a.limit < 0 || a.added == 0 || a.held + a.added <= a.limit) return std::nullopt;
  return "the resize adds " + std::string(a.name) + " " + a.format(a.added) + " to queue " + queue +
         ", which holds " + a.format(a.held) + " of its limit of " + a.format(a.limit);
}

std::optional<std::string> QueueOverLimit(const QueueObject& q, const Resources& held,
                                          const Resources& growth) {
  const Amount cpu{"cpu", q.cpu.limit, held.milli_cpu, growth.milli_cpu, FormatMilli};
  const Amount memory{"memory", q.memory.limit, held.memory, growth.memory, FormatBytes};
  if (auto e = OverLimit(q.meta.name, cpu)) return e;
  return OverLimit(q.meta.name, memory);
}

std::string Field() { return "spec.containers[*].resources"; }

Verdict DenyLookup(const PodObject& pod, const std::string& what, const Error& e) {
  return Verdict::Deny(pod.meta.Ref() + ": " + Field() +
                           ": cannot check the queue limits: " + what + ": " + e.message,
                       "lookup");
}

// Walks the queue and its parents; the first limit the growth would pass denies.
Verdict CheckQueues(const PodObject& pod, std::string queue, const Resources& growth,
                    const QueueUsageLookup& lookup) {
  for (int depth = 0; !queue.empty() && depth < kMaxQueueDepth; ++depth) {
    auto q = lookup.Queue(queue);
    if (!q.ok()) return DenyLookup(pod, "queue " + queue, q.error());
    if (!q.value()) return Verdict::Allow();  // the Queue webhook and the scheduler say so
    if (auto e = QueueOverLimit((*q)->queue, (*q)->allocated, growth)) {
      return Verdict::Deny(pod.meta.Ref() + ": " + Field() + ": " + *e, "queue_limit");
    }
    queue = (*q)->queue.parent;
  }
  return Verdict::Allow();
}

}  // namespace

Verdict ValidatePodResize(const Request& request, const Options& options,
                          const QueueUsageLookup& lookup) {
  if (request.operation != Operation::kUpdate || !request.old_object.IsDefined()) {
    return Verdict::Allow();
  }
  // The new pod as its spec asks: all the rule reads of it (scheduler, queue, request).
  auto after = DecodeSpecOnly(request);
  if (!after.ok()) return Verdict::Deny(after.error().message, "invalid");
  if (after->scheduler_name != options.scheduler_name) return Verdict::Allow();
  auto before = DecodeRequestPod(request, request.old_object);
  if (!before.ok()) return Verdict::Deny(before.error().message, "invalid");
  if (!HoldsANode(*before)) return Verdict::Allow();
  const Resources growth = Growth(before->request, after->request);
  if (growth.milli_cpu == 0 && growth.memory == 0) return Verdict::Allow();
  auto queue = QueueOf(*after, lookup);
  if (!queue.ok()) {
    return DenyLookup(*after, "PodGroup " + after->pod_group + " of the pod", queue.error());
  }
  return CheckQueues(*after, queue.value(), growth, lookup);
}

}  // namespace kai::admission
