#include "kai/core/explain/queues.h"

#include <algorithm>
#include <limits>

#include "kai/core/resource/quantity.h"

namespace kai {
namespace {

constexpr CoreResource kResources[] = {CoreResource::kCpu, CoreResource::kMemory,
                                       CoreResource::kGpu};

std::string Amount(CoreResource r, int64_t v) {
  if (v < 0) return "unlimited";
  return FormatAmount(r, v);
}

std::string CappedBy(const QueueQuota& q, int64_t requested, int64_t fs, int64_t deserved_part,
                     int64_t level_total, int64_t level_given) {
  if (fs >= requested) return "request";
  if (q.limit >= 0 && fs >= q.limit) return "limit";
  if (q.weight_milli <= 0 && fs <= deserved_part) return "no-weight";
  // The level was shared out: the queue got its weighted part of the surplus, or none was left.
  if (level_given >= level_total) return fs > deserved_part ? "proportional-share" : "nothing-left";
  // Surplus left undivided: time-based usage brought the queue's over-quota weight to zero.
  return "usage";
}

QueueResourceExplanation ExplainResource(const Snapshot& snap, const SnapQueue& q, CoreResource r,
                                         size_t ri) {
  QueueResourceExplanation e;
  e.resource = std::string(CoreResourceName(r));
  const QueueQuota& quota = q.Quota(r);
  e.quota = quota.quota;
  e.limit = quota.limit;
  e.weight_milli = quota.weight_milli;
  e.requested = q.requested.Get(r);
  e.allocated = q.allocated.Get(r);
  e.fair_share = q.fair_share.Get(r);
  e.usage = q.usage[ri];
  const std::vector<QueueId>& siblings =
      q.parent == kNone ? snap.root_queues : snap.queues[q.parent].children;
  e.level_total =
      q.parent == kNone ? snap.fair_share_capacity.Get(r) : snap.queues[q.parent].fair_share.Get(r);
  int64_t given = 0;
  for (QueueId s : siblings) given += snap.queues[s].fair_share.Get(r);
  const int64_t requestable = e.limit >= 0 ? std::min(e.requested, e.limit) : e.requested;
  const int64_t deserved = e.quota < 0 ? e.level_total : e.quota;
  e.deserved_part = std::min({deserved, requestable, e.fair_share});
  e.surplus_part = e.fair_share - e.deserved_part;
  if (e.fair_share > 0) {
    e.saturation = static_cast<double>(e.allocated) / static_cast<double>(e.fair_share);
  } else if (e.allocated > 0) {
    e.saturation = std::numeric_limits<double>::infinity();
  }
  e.capped_by = CappedBy(quota, e.requested, e.fair_share, e.deserved_part, e.level_total, given);
  return e;
}

void Visit(const Snapshot& snap, QueueId id, int depth, std::vector<QueueExplanation>& out) {
  const SnapQueue& q = snap.queues[id];
  QueueExplanation e;
  e.name = q.name;
  e.parent = q.parent == kNone ? "" : std::string(snap.queues[q.parent].name);
  e.depth = depth;
  e.priority = q.priority;
  e.leaf = q.IsLeaf();
  for (size_t i = 0; i < std::size(kResources); ++i) {
    e.resources.push_back(ExplainResource(snap, q, kResources[i], i));
  }
  out.push_back(std::move(e));
  std::vector<QueueId> children = q.children;
  std::sort(children.begin(), children.end(), [&](QueueId a, QueueId b) {
    const SnapQueue& qa = snap.queues[a];
    const SnapQueue& qb = snap.queues[b];
    return qa.creation != qb.creation ? qa.creation < qb.creation : qa.name < qb.name;
  });
  for (QueueId c : children) Visit(snap, c, depth + 1, out);
}

}  // namespace

std::string QueueResourceExplanation::Summary() const {
  CoreResource r = resource == "cpu"      ? CoreResource::kCpu
                   : resource == "memory" ? CoreResource::kMemory
                                          : CoreResource::kGpu;
  std::string s = Amount(r, fair_share) + " = " + Amount(r, deserved_part) + " deserved + " +
                  Amount(r, surplus_part) + " surplus";
  s += " (of " + Amount(r, level_total) + " at this level; ";
  static const std::pair<const char*, const char*> kWhy[] = {
      {"request", "all it requested"},
      {"limit", "capped by its limit"},
      {"no-weight", "overQuotaWeight 0: no surplus"},
      {"nothing-left", "nothing left to share"},
      {"usage", "its past usage leaves it no surplus now"},
      {"proportional-share", "its weighted part of the surplus"}};
  for (const auto& [key, text] : kWhy) {
    if (capped_by == key) s += text;
  }
  return s + ")";
}

std::vector<QueueExplanation> ExplainQueues(const Snapshot& snap) {
  std::vector<QueueExplanation> out;
  std::vector<QueueId> roots = snap.root_queues;
  std::sort(roots.begin(), roots.end(), [&](QueueId a, QueueId b) {
    const SnapQueue& qa = snap.queues[a];
    const SnapQueue& qb = snap.queues[b];
    return qa.creation != qb.creation ? qa.creation < qb.creation : qa.name < qb.name;
  });
  for (QueueId r : roots) Visit(snap, r, 0, out);
  return out;
}

}  // namespace kai
