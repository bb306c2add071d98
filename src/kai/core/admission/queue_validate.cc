// The validating Queue webhook (KAI's pkg/admission/webhook/queuehooks/queue_validator.go), plus
// the field rules of kai's decoder and a limit that is not below the quota.
#include <algorithm>
#include <set>

#include "kai/core/admission/admission.h"
#include "kai/core/admission/decode_request.h"
#include "kai/core/resource/quantity.h"

namespace kai::admission {
namespace {

constexpr std::string_view kQueueApiVersion = "scheduling.run.ai/v2";
constexpr size_t kMaxQueueDepth = 1000;  // a longer parent chain is taken for a cycle

struct ResourceField {
  std::string_view name;
  QueueResource QueueObject::*member;
};
constexpr ResourceField kResources[] = {
    {"gpu", &QueueObject::gpu}, {"cpu", &QueueObject::cpu}, {"memory", &QueueObject::memory}};

// An amount as the Queue spec writes it: GPUs, millicores, megabytes (kai keeps milli-GPU,
// millicores and bytes).
std::string SpecAmount(std::string_view resource, int64_t v) {
  if (v == -1) return "-1";
  if (resource == "gpu") return FormatMilli(v);
  if (resource == "memory") return FormatMilli(v / 1000);
  return std::to_string(v);
}

// A limit (other than -1) below the quota (other than -1) can never let the queue reach its
// quota; only limits the spec states are compared (an unset limit is a cap of 0 in KAI, and
// manifests that leave it out are common).
std::optional<std::string> LimitBelowQuota(const std::string& ref, const doc::Node& resources,
                                           const QueueObject& q) {
  for (const ResourceField& r : kResources) {
    const doc::Node n = resources[r.name];
    if (!n["limit"].IsScalar() || !n["quota"].IsScalar()) continue;
    const QueueResource& v = q.*r.member;
    if (v.limit == -1 || v.quota == -1 || v.limit >= v.quota) continue;
    return ref + ": spec.resources." + std::string(r.name) +
           ".limit: " + SpecAmount(r.name, v.limit) + " is below the quota " +
           SpecAmount(r.name, v.quota) + " (use -1 for no limit)";
  }
  return std::nullopt;
}

// The parent exists and is not the queue itself nor one of its descendants.
std::optional<std::string> ParentError(const std::string& ref, const QueueObject& q,
                                       const ClusterLookup& lookup) {
  const std::string field = ref + ": spec.parentQueue: ";
  std::string up = q.parent;
  for (size_t depth = 0; !up.empty(); ++depth) {
    if (up == q.meta.name || depth > kMaxQueueDepth) {
      return field + "queue \"" + q.parent + "\" would make the queue hierarchy a cycle";
    }
    auto found = lookup.FindQueue(up);
    if (!found.ok()) return field + "cannot read queue \"" + up + "\": " + found.error().message;
    if (!found.value()) {
      if (depth == 0) return field + "queue \"" + up + "\" does not exist";
      break;  // an ancestor further up is missing: the scheduler drops that subtree, not ours
    }
    up = found.value()->parent;
  }
  return std::nullopt;
}

int64_t QuotaSum(int64_t a, int64_t b) { return a == -1 || b == -1 ? -1 : a + b; }

bool Exceeds(int64_t v, int64_t limit) { return limit != -1 && (v == -1 || v > limit); }

// KAI's opt-in quota warnings: the queue's quota above its parent's, and its siblings' and its
// own together above the parent's.
Result<std::vector<std::string>> QuotaWarnings(const std::string& ref, const QueueObject& q,
                                               const ClusterLookup& lookup) {
  std::vector<std::string> out;
  auto parent = lookup.FindQueue(q.parent);
  if (!parent.ok()) return parent.error();
  if (!parent.value()) return out;
  auto siblings = lookup.ChildQueues(q.parent);
  if (!siblings.ok()) return siblings.error();
  std::vector<QueueObject> others;
  for (const std::string& name : siblings.value()) {
    if (name == q.meta.name) continue;
    auto s = lookup.FindQueue(name);
    if (!s.ok()) return s.error();
    if (s.value()) others.push_back(*s.value());
  }
  for (const ResourceField& r : kResources) {
    const int64_t own = (q.*r.member).quota, of_parent = (*parent.value().*r.member).quota;
    int64_t total = own;
    for (const QueueObject& o : others) total = QuotaSum(total, (o.*r.member).quota);
    const std::string field = ref + ": spec.resources." + std::string(r.name) + ".quota: ";
    const std::string parent_part = " exceeds the quota of parent queue \"" + q.parent + "\" (" +
                                    SpecAmount(r.name, of_parent) + ")";
    if (Exceeds(own, of_parent)) out.push_back(field + SpecAmount(r.name, own) + parent_part);
    if (!others.empty() && Exceeds(total, of_parent)) {
      out.push_back(field + "the child queues' quotas together (" + SpecAmount(r.name, total) +
                    ")" + parent_part);
    }
  }
  return out;
}

Verdict ValidateQueueDelete(const Request& request, const ClusterLookup& lookup) {
  const std::string ref = ObjectRef(request, request.old_object, "Queue", false);
  std::set<std::string> children;
  const doc::Node listed = request.old_object["status"]["childQueues"];
  for (size_t i = 0; i < listed.size(); ++i) children.emplace(listed[i].Scalar());
  std::string name(request.old_object["metadata"]["name"].Scalar());
  if (name.empty()) name = request.name;
  auto found = lookup.ChildQueues(name);
  if (!found.ok()) {
    return Verdict::Deny(ref + ": cannot list its child queues: " + found.error().message,
                         "lookup_failed");
  }
  children.insert(found.value().begin(), found.value().end());
  if (children.empty()) return Verdict::Allow();
  std::string names;
  for (const std::string& c : children) names += (names.empty() ? "" : ", ") + c;
  return Verdict::Deny(
      ref + ": status.childQueues: a queue with child queues cannot be deleted (" + names + ")",
      "has_children");
}

bool ParentChanged(const Request& request, const QueueObject& q) {
  if (request.operation == Operation::kCreate) return true;
  return request.old_object["spec"]["parentQueue"].Scalar() != q.parent;
}

}  // namespace

Verdict ValidateQueue(const Request& request, const Options& options, const ClusterLookup& lookup) {
  if (request.operation == Operation::kDelete) return ValidateQueueDelete(request, lookup);
  const std::string ref = ObjectRef(request, request.object, "Queue", false);
  // A name from generateName comes after admission.
  auto decoded = DecodeRequestObject(request, request.object, kQueueApiVersion, "Queue", false,
                                     {"metadata.name: missing"});
  if (!decoded.ok()) return Verdict::Deny(decoded.error().message);
  const QueueObject& q = decoded->queues.front();
  const doc::Node resources = request.object["spec"]["resources"];
  if (!resources.IsMap()) return Verdict::Deny(ref + ": spec.resources: must be specified");
  if (auto e = LimitBelowQuota(ref, resources, q)) return Verdict::Deny(*e, "limit_below_quota");
  if (!q.parent.empty() && ParentChanged(request, q)) {
    if (auto e = ParentError(ref, q, lookup)) return Verdict::Deny(*e, "parent");
  }
  Verdict v;
  if (options.queue_quota_warnings && !q.parent.empty()) {
    auto w = QuotaWarnings(ref, q, lookup);
    if (!w.ok()) {
      return Verdict::Deny(ref + ": cannot read the parent queue: " + w.error().message,
                           "lookup_failed");
    }
    v.warnings = std::move(w.value());
  }
  return v;
}

}  // namespace kai::admission
