#include "kai/core/framework/eviction.h"

#include <initializer_list>
#include <string_view>

#include "kai/core/resource/quantity.h"

namespace kai {
namespace {

// Why a pod of a semi-preemptible job could be taken at all.
std::string SemiPreemptibleNote(const Snapshot& snap, PodId p) {
  const SnapPod& pod = snap.pods[p];
  const SnapJob& job = snap.jobs[pod.job];
  const SnapSubGroup& set = job.sub_groups[pod.sub_group];
  const std::string where = job.HasSubGroups() ? " of SubGroup " + std::string(set.name) : "";
  return "; evictable: above the semi-preemptible floor" + where + " (minMember " +
         std::to_string(set.min_member) + ")";
}

std::string StaleGangLine(const Snapshot& snap, PodId p) {
  const JobId j = snap.pods[p].job;
  const std::string name = j == kNone ? "" : std::string(snap.jobs[j].name);
  return "stalegangeviction: gang " + name +
         " ran below its minMember past its staleness grace period";
}

// "<action> for <ns>/<name>" + `tail`, in one allocation.
std::string Line(const EvictionVerdict& v, const Snapshot& snap,
                 std::initializer_list<std::string_view> tail) {
  std::string_view ns = "?", name;
  if (v.preemptor != kNone) {
    ns = snap.jobs[v.preemptor].ns;
    name = snap.jobs[v.preemptor].name;
  }
  size_t n = v.action.size() + 5 + ns.size() + 1 + name.size();
  for (std::string_view t : tail) n += t.size();
  std::string out;
  out.reserve(n);
  out.append(v.action).append(" for ").append(ns);
  if (v.preemptor != kNone) out.append("/").append(name);
  for (std::string_view t : tail) out.append(t);
  return out;
}

}  // namespace

namespace {

std::string Vector(const QueueVector& v) {
  auto amount = [](int64_t x, const std::string& text) { return x < 0 ? "unlimited" : text; };
  return "<gpu " + amount(v.milli_gpu, FormatMilli(v.milli_gpu)) + ", cpu " +
         amount(v.milli_cpu, FormatMilli(v.milli_cpu)) + ", memory " +
         amount(v.memory, FormatBytes(v.memory)) + ">";
}

}  // namespace

std::string DescribeQueueUse(const QueueUse& q) {
  return "queue " + q.name + " uses " + Vector(q.allocated) + " with a quota of " +
         Vector(q.quota) + ", a fair share of " + Vector(q.fair_share) + " and priority " +
         std::to_string(q.priority);
}

const char* EvictionKindName(EvictionKind kind) {
  switch (kind) {
    case EvictionKind::kEvicted:
      return "evicted";
    case EvictionKind::kMoved:
      return "moved";
    case EvictionKind::kRestarted:
      return "restarted";
    case EvictionKind::kStaleGang:
      return "stale-gang";
    case EvictionKind::kDisplaced:
      return "displaced";
    case EvictionKind::kNone:
      break;
  }
  return "";
}

const std::string& EvictionVerdict::rule_text() const {
  static const std::string kNoRule;
  return rule ? *rule : kNoRule;
}

std::string DescribeEviction(const EvictionVerdict& v, const Snapshot& snap, PodId pod) {
  const std::string note = v.above_semi_preemptible_floor ? SemiPreemptibleNote(snap, pod) : "";
  const std::string& rule = v.rule_text();
  switch (v.kind) {
    case EvictionKind::kNone:
      return "";
    case EvictionKind::kStaleGang:
      return StaleGangLine(snap, pod);
    case EvictionKind::kDisplaced:
      return Line(v, snap, {": a background pod, its place taken (", rule, ")"});
    case EvictionKind::kEvicted:
      return Line(v, snap, {": ", rule, note});
    case EvictionKind::kMoved:
      return Line(v, snap, {": moved to make room (", rule, ")", note});
    case EvictionKind::kRestarted:
      return Line(v, snap,
                  {": moved back onto its node, restarted with its gang (", rule, ")", note});
  }
  return "";
}

}  // namespace kai
