#pragma once
// Typed verdicts and structured reasons (docs/design.md rule 2). A node verdict says why one pod
// does not fit one node; a Reason summarises verdicts for a pending pod or job, for people and for
// JSON.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kai/core/resource/resources.h"

namespace kai {

enum class FitCode : uint8_t {
  kFits,
  kInsufficientResources,  // resources short on the node (even counting releasing ones)
  kNodeUnusable,           // NotReady, unschedulable, pressure
  kNodeSelectorMismatch,
  kNodeAffinityMismatch,
  kTaintNotTolerated,
  kTooManyPods,
  kPodAffinity,
  kGpuSharingUnsupported,  // fractional/MIG request the node cannot serve
  kOverQueueLimit,
  kNonPreemptibleOverQuota,
  kDraClaim,  // a ResourceClaim of the pod cannot be served there (detail: "claim X: why")
  // The node's kubelet Topology Manager would reject the pod: no NUMA zone (or zone mask) its
  // policy admits holds the request. shortage: the resource, the request and the most one zone
  // offers; detail: the node's name.
  kNumaUnaligned,
  // Another pod on the node holds a host port the pod asks for (kube-scheduler's NodePorts);
  // detail: "8080/TCP".
  kHostPortConflict,
  // A PersistentVolumeClaim of the pod cannot be used there (kube-scheduler's VolumeBinding):
  // detail names the claim and why (not found, unbound Immediate claim, volume node affinity,
  // no free volume, the class's allowedTopologies).
  kVolumeBinding,
  // The node may attach no more volumes of a CSI driver (its CSINode's allocatable count;
  // kube-scheduler's NodeVolumeLimits); detail: the driver and the counts.
  kVolumeLimit,
};

struct NodeVerdict {
  FitCode code = FitCode::kFits;
  Shortage shortage;   // kInsufficientResources
  std::string detail;  // e.g. the taint or label involved
  // Never fits: a mismatch of the pod and the node themselves (selector, affinity, taint, GPU
  // sharing) or a request beyond what the empty node has. Otherwise it fits later: resources
  // others hold now, a node not ready, a queue's limit.
  bool never = false;
  bool Fits() const { return code == FitCode::kFits; }
};

// The kinds of Reason, in the order of Reason::Payload's alternatives.
enum class ReasonKind : uint8_t {
  kNodes,      // per-node verdicts summarised (code, count, shortage)
  kGang,       // gang could not be completed: pods that fit / minMember
  kOverLimit,  // queue limit would be exceeded
  kNonPreemptibleOverQuota,
  kQueueMissing,
  kNotReady,  // fewer live pods than minMember
  kNoNodes,
  kPreemptionDelay,  // may not trigger evictions yet
  kNoVictims,        // a disruptive action did not make room
  kTopology,         // a topology constraint could not be met
};

// `nodes` nodes gave one pod the verdict `code`. With code kFits, `detail` is a reason about the
// pod itself rather than nodes (no PodGroup, a missing SubGroup).
struct NodesReason {
  FitCode code = FitCode::kFits;
  std::string resource;  // kInsufficientResources: the resource short
  int nodes = 0;
  int never_nodes = 0;   // of those, nodes the pod can never fit (NodeVerdict::never)
  int64_t short_by = 0;  // smallest shortage among those nodes, in kai units
  std::string detail;    // the taint, label, condition or rule involved
  // kNumaUnaligned with a `resource`: `requested` of it in one zone, the most one zone offers
  // (`available`) and on which node (`best_node`).
  int64_t requested = 0, available = 0;
  std::string best_node;
};

// A gang (or one SubGroup of it) that found room for `placed` of its `required` pods.
struct GangReason {
  std::string sub_group;  // empty for the whole PodGroup
  int placed = 0, required = 0;
};

// cpu (millicores), memory (bytes) and GPUs (milli-GPU) of a queue or a request; -1: unlimited.
struct QueueVector {
  int64_t milli_cpu = 0, memory = 0, milli_gpu = 0;
  static QueueVector Of(const Resources& r) { return {r.milli_cpu, r.memory, r.milli_gpu}; }
  friend bool operator==(const QueueVector&, const QueueVector&) = default;
};

// A queue as a capacity check saw it (what KAI reports as a condition's QuotaDetails).
struct QueueStanding {
  QueueVector requested, deserved, allocated, allocated_non_preemptible, limits;
};

// A request that would take `queue` past a cap on `resource`: `requested` against what the cap
// leaves (`available`), in kai units.
struct QueueCapReason {
  std::string queue, resource;
  int64_t requested = 0, available = 0;
  std::string subject;     // who asks when not "the job" (a SubGroup floor); empty otherwise
  QueueStanding standing;  // of `queue`
  QueueVector job_requested, job_requested_non_preemptible;
};
struct OverLimitReason : QueueCapReason {};
struct NonPreemptibleOverQuotaReason : QueueCapReason {};

struct QueueMissingReason {
  std::string queue;
};

struct NotReadyReason {
  int live = 0, min_member = 0;
};

struct NoNodesReason {};
struct PreemptionDelayReason {};

// Why reclaim, preempt or consolidation did not make room for a job.
enum class DisruptionOutcome : uint8_t {
  kNotEligible,   // the job may not trigger the action (`rule` says why)
  kNoCandidates,  // no running workload qualifies as a victim under `rule`
  kGaveUp,        // the search hit `bound` before any scenario fit
  kNoFit,         // every scenario simulated left the job short
};

struct DisruptionReason {
  std::string action;  // reclaim, preempt, consolidation
  DisruptionOutcome outcome = DisruptionOutcome::kNoFit;
  std::string rule;  // kNotEligible: why not; kNoCandidates: which victims the action may take
  int candidate_jobs = 0;           // kGaveUp, kNoFit
  int64_t candidate_milli_gpu = 0;  // GPUs the candidates hold (kGaveUp, kNoFit)
  int scenarios_tried = 0, scenarios_pruned = 0;
  int64_t search_work = 0;  // work units the search spent (kGaveUp, kNoFit)
  // kGaveUp: the search limit reached, as the configuration field with its value
  // ("spec.args.max-search-work-per-job=200000").
  std::string bound;
};

// A topology constraint no domain could meet. `detail` alone: a configuration error (unknown
// topology or level). Otherwise: the level no domain of which could hold the group (empty when
// the search scope itself could not); the best domain at that level (free `available` of
// `resource`, or room for `placed` of `required` pods); the scope searched ("block b1",
// "cluster") with its free amount of `resource`.
struct TopologyReason {
  std::string topology, level, domain, scope;
  std::string sub_group;  // the constrained SubGroup; empty for the whole PodGroup
  std::string resource;
  int64_t requested = 0, available = 0, scope_free = 0;
  int placed = 0, required = 0;
  std::string detail;
};

// Why a pending pod or job did not run: one typed value per kind, which the table, the JSON
// output, the explainer and the scheduler's events render (none of them parses a sentence).
class Reason {
 public:
  using Payload =
      std::variant<NodesReason, GangReason, OverLimitReason, NonPreemptibleOverQuotaReason,
                   QueueMissingReason, NotReadyReason, NoNodesReason, PreemptionDelayReason,
                   DisruptionReason, TopologyReason>;
  Reason() = default;  // an empty NodesReason
  template <class T>
  requires(!std::is_same_v<std::remove_cvref_t<T>, Reason> && std::is_constructible_v<Payload, T&&>)
      Reason(T&& payload)
      : payload_(std::forward<T>(payload)) {}  // NOLINT: implicit by design

  ReasonKind kind() const { return static_cast<ReasonKind>(payload_.index()); }
  // The payload when it is a T, else nullptr.
  template <class T>
  const T* As() const {
    return std::get_if<T>(&payload_);
  }
  template <class T>
  T* As() {
    return std::get_if<T>(&payload_);
  }
  const Payload& payload() const { return payload_; }
  // Both caps share one payload shape.
  const QueueCapReason* QueueCap() const;
  QueueCapReason* QueueCap() {
    return const_cast<QueueCapReason*>(std::as_const(*this).QueueCap());
  }
  std::string Message() const;
  std::string KindName() const;

 private:
  Payload payload_;
};

// The reasons as one line for people: their messages joined by "; ".
std::string JoinReasons(const std::vector<Reason>& reasons);

// Groups per-node verdicts of one pod into reasons, largest group first.
std::vector<Reason> SummariseVerdicts(const std::vector<NodeVerdict>& verdicts);
std::string FitCodeName(FitCode code);
// Codes that no change of the cluster's load undoes (the pod's and node's own properties).
bool IsStaticMismatch(FitCode code);
std::string FormatResourceAmount(const std::string& resource, int64_t amount);

}  // namespace kai
