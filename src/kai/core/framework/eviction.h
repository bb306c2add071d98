#pragma once
// Why a running pod is disrupted in a cycle, as a typed verdict (docs/design.md rule 2): which
// action, for which job, how, under which rule. `kai simulate`'s table and JSON, the scheduler's
// events and decisions read these fields; the one-line text is rendered from them.
#include <cstdint>
#include <memory>
#include <string>

#include "kai/core/framework/reasons.h"
#include "kai/core/snapshot/snapshot.h"

namespace kai {

enum class EvictionKind : uint8_t {
  kNone,
  kEvicted,    // taken to make room for the preemptor
  kMoved,      // re-placed on another node to make room
  kRestarted,  // moved back onto its node, restarted with its gang
  kStaleGang,  // its gang ran below minMember past the staleness grace period
  kDisplaced,  // a background pod whose place a workload took (actions/common/background.h)
};

// A queue's use as an action saw it before its decision: what reclaim's rule compared.
struct QueueUse {
  std::string name;
  QueueVector allocated, quota, fair_share;  // quota: -1 where the queue has none
  int priority = 0;
};

// The two queues a reclaim weighed against each other (KAI names the leaf queues when they are
// siblings, else each one's parent).
struct ReclaimQueues {
  QueueUse victim, reclaimer;
};

struct EvictionVerdict {
  EvictionKind kind = EvictionKind::kNone;
  std::string action;       // reclaim, preempt, consolidation, stalegangeviction
  JobId preemptor = kNone;  // the job the room is made for (kNone for a stale gang)
  // The rule that let the action take the pod (shared by the pods of one decision).
  std::shared_ptr<const std::string> rule;
  // A semi-preemptible job's pod, taken because it is above its (SubGroup's) minMember.
  bool above_semi_preemptible_floor = false;
  // Reclaim: the queues' use before the decision (shared by the victims of one queue).
  std::shared_ptr<const ReclaimQueues> queues;
  bool empty() const { return kind == EvictionKind::kNone; }
  const std::string& rule_text() const;
};

// "evicted", "moved", "restarted", "stale-gang" ("" for kNone).
const char* EvictionKindName(EvictionKind kind);

// "queue a uses <gpu 4, cpu 8, memory 16G> with a quota of <...>, a fair share of <...> and
// priority 100".
std::string DescribeQueueUse(const QueueUse& q);

// The verdict of `pod` as one line, e.g. "reclaim for ns/job: <rule>"; "" when empty.
std::string DescribeEviction(const EvictionVerdict& v, const Snapshot& snap, PodId pod);

}  // namespace kai
