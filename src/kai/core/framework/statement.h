#pragma once
// A Statement is an undo log over the session's snapshot (docs/design.md rule 5): every operation
// records its inverse, so Checkpoint/Rollback cost O(operations), never a copy.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kai/core/framework/session.h"

namespace kai {

class Statement {
 public:
  explicit Statement(Session& session);
  ~Statement();  // an uncommitted statement is discarded
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Places a pending pod on idle resources of `node` (status Allocated); a shared-GPU pod takes
  // the GPU groups `groups` there.
  void Allocate(PodId pod, NodeId node);
  void Allocate(PodId pod, NodeId node, std::vector<std::string> groups);
  // Places a pod on resources of `node` that are being released (status Pipelined).
  void Pipeline(PodId pod, NodeId node);
  void Pipeline(PodId pod, NodeId node, std::vector<std::string> groups);
  // Evicts a running pod (status Releasing; its resources become releasing on its node). A
  // Pipelined pod only loses its reservation (Pending again).
  void Evict(PodId pod);

  // Restarts a pod that holds its place on its node: evicted and pipelined back onto the same
  // node (and GPUs), so that its owner deletes and recreates it while its place stays reserved.
  void Restart(PodId pod);

  size_t Checkpoint() const { return logs_->ops.size(); }
  void Rollback(size_t checkpoint);
  void Discard() { Rollback(0); }
  // Makes the operations final: allocations become Binding (a BindRequest), evictions stay
  // Releasing, pipelined pods stay Pipelined (never persisted). Counts each in the session.
  void Commit();

  const std::vector<PodId> AllocatedPods() const;
  bool HasPipelined(JobId job) const;

 private:
  enum class Kind : uint8_t { kAllocate, kPipeline, kEvict };
  // The accounting of a node before an operation on a shared-GPU pod. KAI's incremental group
  // accounting is not its own inverse in every order (and a pod moved between GPUs of its node
  // leaves its first instance releasing), so rollback restores it as it was. An operation only
  // appends groups and never renames one, so the node's totals, its group count and the
  // counters of those groups (in logs_->groups from first_group on) are all it can change.
  struct NodeGpuState {
    NodeId node;
    Resources idle, releasing, used;
    size_t group_count;
    size_t first_group;
  };
  // A GpuGroup without its name.
  struct GroupCounters {
    int64_t used, releasing, allocated;
    bool has_allocated, marked_releasing;
  };
  struct Op {
    Kind kind;
    PodId pod;
    PodStatus prev_status;
    NodeId prev_node;
    bool set_groups;                       // the operation set the pod's shared GPU groups
    std::vector<std::string> prev_groups;  // ... and these were the groups before it
    // This op's nodes in logs_->gpu: from here to the next op's (or the end).
    size_t first_gpu_state;
    PodNuma prev_numa;  // the pod's NUMA placement before the op (snapshot/numa.h)
  };
  void SaveGpuStates(PodId pod, NodeId target);
  void SaveNodeGpuState(NodeId node);
  void RestoreGpuStates(size_t first_gpu_state);
  // `groups`, when given, are the pod's new groups; they are taken (the pod's previous ones are
  // kept in the op for rollback).
  void Record(Kind kind, PodId pod, PodStatus status, NodeId node,
              std::vector<std::string>* groups = nullptr);
  void PipelineOn(PodId pod, NodeId node, std::vector<std::string>* groups);
  bool VirtuallyEvicted(PodId pod) const;
  // Distinct pods among `pods` (reordered).
  static int CountDistinct(std::vector<PodId>& pods) {
    return pods.size() < 2 ? static_cast<int>(pods.size()) : CountDistinctOfMany(pods);
  }
  static int CountDistinctOfMany(std::vector<PodId>& pods);

  // The logs of a statement. A statement is made per job, so they are reused: a statement takes
  // spare (empty, with capacity) logs of an earlier one and gives its own back when it ends.
  struct Logs {
    std::vector<Op> ops;
    std::vector<NodeGpuState> gpu;      // the nodes each shared-GPU operation saved, in op order
    std::vector<GroupCounters> groups;  // the groups of those nodes, in node order
    std::vector<PodId> evicted, pipelined;  // Commit's pods to count
  };
  static std::vector<std::unique_ptr<Logs>>& SpareLogs();
  static std::unique_ptr<Logs> TakeSpareLogs();
  // Spares `logs`, unless they are huge or enough are spared already.
  static void GiveBackLogs(std::unique_ptr<Logs> logs);

  Session& session_;
  std::unique_ptr<Logs> logs_;
};

}  // namespace kai
