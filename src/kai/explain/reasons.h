#pragma once
// Typed verdicts and structured reasons (DESIGN.md rule 2). A node verdict says why one pod does
// not fit one node; a Reason summarises verdicts for a pending pod or job, for people and for JSON.
#include <cstdint>
#include <string>
#include <vector>

#include "kai/resource/resources.h"

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
  // The node's kubelet Topology Manager would reject the pod: no NUMA zone (or zone mask) its
  // policy admits holds the request. shortage: the resource, the request and the most one zone
  // offers; detail: the node's name.
  kNumaUnaligned,
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

enum class ReasonKind : uint8_t {
  kGang,       // gang could not be completed: pods that fit / minMember
  kNodes,      // per-node verdicts summarised (code, count, shortage)
  kOverLimit,  // queue limit would be exceeded
  kNonPreemptibleOverQuota,
  kQueueMissing,
  kNotReady,  // fewer live pods than minMember
  kNoNodes,
  kPreemptionDelay,  // may not trigger evictions yet
  kNoVictims,        // a disruptive action found no scenario
  kTopology,         // a topology constraint could not be met
};

struct Reason {
  ReasonKind kind = ReasonKind::kNodes;
  FitCode code = FitCode::kFits;  // kNodes only
  std::string resource;           // kNodes (insufficient), kOverLimit, kNonPreemptibleOverQuota
  std::string queue;              // queue named by a quota reason
  int nodes = 0;                  // number of nodes with this verdict
  int never_nodes = 0;            // of those, nodes the pod can never fit (NodeVerdict::never)
  int64_t short_by = 0;           // smallest shortage among those nodes, in kai units
  int64_t requested = 0, available = 0;  // quota reasons
  int placed = 0, required = 0;  // kGang, kNotReady; kTopology: pods the best domain holds / pods
  std::string detail;
  // kTopology: the topology; the level no domain of which could hold the group (empty when the
  // search scope itself could not); the best domain at that level (free `available` of
  // `resource`, or room for `placed` pods); the scope searched ("block b1", "cluster") with its
  // free amount of `resource`. `detail` alone: a configuration error (unknown topology or level).
  std::string topology, level, domain, scope;
  int64_t scope_free = 0;
  std::string sub_group;  // kTopology: the constrained SubGroup; empty for the whole PodGroup
  // kNodes with kNumaUnaligned: `requested` of `resource` in one zone, the most one zone offers
  // (`available`) and on which node (`domain`).
  std::string Message() const;
  std::string KindName() const;
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
