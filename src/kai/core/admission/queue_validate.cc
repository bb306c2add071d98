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

// A quota in KAI's messages: its spec amount, or "unlimited" for -1.
std::string QuotaText(std::string_view resource, int64_t v) {
  return v == -1 ? "unlimited" : SpecAmount(resource, v);
}

std::string_view DisplayName(std::string_view resource) {
  if (resource == "gpu") return "GPU";
  if (resource == "cpu") return "CPU";
  return "Memory";
}

// The queues whose parent is `parent`, but `except`.
Result<std::vector<QueueObject>> ChildrenOf(const ClusterLookup& lookup, const std::string& parent,
                                            const std::string& except) {
  auto names = lookup.ChildQueues(parent);
  if (!names.ok()) return names.error();
  std::vector<QueueObject> out;
  for (const std::string& name : names.value()) {
    if (name == except) continue;
    auto found = lookup.FindQueue(name);
    if (!found.ok()) return found.error();
    if (found.value()) out.push_back(*found.value());
  }
  return out;
}

// KAI's parent-child quota checks, seen from the queue as a child: its quota above its parent's,
// and its siblings' and its own together above the parent's.
Result<std::vector<std::string>> AsChild(const std::string& ref, const QueueObject& q,
                                         const ClusterLookup& lookup) {
  std::vector<std::string> out;
  auto parent = lookup.FindQueue(q.parent);
  if (!parent.ok()) return parent.error();
  if (!parent.value()) return out;
  auto others = ChildrenOf(lookup, q.parent, q.meta.name);
  if (!others.ok()) return others.error();
  for (const ResourceField& r : kResources) {
    const int64_t own = (q.*r.member).quota, of_parent = (*parent.value().*r.member).quota;
    int64_t total = own;
    for (const QueueObject& o : others.value()) total = QuotaSum(total, (o.*r.member).quota);
    const std::string field = ref + ": spec.resources." + std::string(r.name) + ".quota: ";
    const std::string tail = " exceeds parent queue " + q.parent + " " +
                             std::string(DisplayName(r.name)) + " quota (" +
                             QuotaText(r.name, of_parent) + ")";
    const std::string kind(DisplayName(r.name));
    if (Exceeds(own, of_parent)) {
      out.push_back(field + "child queue " + kind + " quota (" + QuotaText(r.name, own) + ")" +
                    tail);
    }
    if (!others.value().empty() && Exceeds(total, of_parent)) {
      out.push_back(field + "total children " + kind + " quota (" + QuotaText(r.name, total) + ")" +
                    tail);
    }
  }
  return out;
}

// The same checks seen from the queue as a parent: each child's quota, and all of them together,
// above the queue's own.
Result<std::vector<std::string>> AsParent(const std::string& ref, const QueueObject& q,
                                          const ClusterLookup& lookup) {
  std::vector<std::string> out;
  auto children = ChildrenOf(lookup, q.meta.name, "");
  if (!children.ok()) return children.error();
  if (children.value().empty()) return out;
  for (const ResourceField& r : kResources) {
    const int64_t own = (q.*r.member).quota;
    const std::string kind(DisplayName(r.name));
    const std::string field = ref + ": spec.resources." + std::string(r.name) + ".quota: ";
    const std::string tail = " exceeds parent " + kind + " quota (" + QuotaText(r.name, own) + ")";
    int64_t total = 0;
    for (const QueueObject& c : children.value()) {
      const int64_t quota = (c.*r.member).quota;
      total = QuotaSum(total, quota);
      if (Exceeds(quota, own)) {
        out.push_back(field + "child queue " + c.meta.name + " " + kind + " quota (" +
                      QuotaText(r.name, quota) + ")" + tail);
      }
    }
    if (Exceeds(total, own)) {
      out.push_back(field + "total children " + kind + " quota (" + QuotaText(r.name, total) + ")" +
                    tail);
    }
  }
  return out;
}

// A create, or an update that changes a quota or the parent: what `block` refuses.
bool ChangesQuotas(const Request& request, const QueueObject& q) {
  if (request.operation == Operation::kCreate) return true;
  if (request.old_object["spec"]["parentQueue"].Scalar() != q.parent) return true;
  const doc::Node now = request.object["spec"]["resources"];
  const doc::Node before = request.old_object["spec"]["resources"];
  for (const ResourceField& r : kResources) {
    const doc::Node a = now[r.name]["quota"], b = before[r.name]["quota"];
    if (a.IsDefined() != b.IsDefined() || a.Scalar() != b.Scalar()) return true;
  }
  return false;
}

// --limit-descendents-over-subscription: warnings, or a refusal, listing every over-subscription
// the queue takes part in as a child and as a parent.
Verdict OverSubscriptionVerdict(const std::string& ref, const Request& request,
                                const QueueObject& q, OverSubscription mode,
                                const ClusterLookup& lookup) {
  std::vector<std::string> problems;
  std::optional<Error> failed;
  auto add = [&](Result<std::vector<std::string>> found) {
    if (!found.ok()) return failed.emplace(found.error()), void();
    problems.insert(problems.end(), found.value().begin(), found.value().end());
  };
  if (!q.parent.empty()) add(AsChild(ref, q, lookup));
  add(AsParent(ref, q, lookup));
  if (failed) {
    return Verdict::Deny(ref + ": cannot read the queue tree: " + failed->message, "lookup_failed");
  }
  if (problems.empty()) return Verdict::Allow();
  if (mode == OverSubscription::kBlock && ChangesQuotas(request, q)) {
    std::string message;
    for (const std::string& p : problems) message += (message.empty() ? "" : "; ") + p;
    return Verdict::Deny(message, "quota_over_subscription");
  }
  Verdict v;
  v.warnings = std::move(problems);
  return v;
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
  if (options.descendants_over_subscription == OverSubscription::kNone) return Verdict::Allow();
  return OverSubscriptionVerdict(ref, request, q, options.descendants_over_subscription, lookup);
}

}  // namespace kai::admission
