#include "kai/core/actions/common/placement.h"

#include <algorithm>
#include <limits>

#include "kai/core/framework/job_tasks.h"
#include "kai/core/framework/node_ranking.h"
#include "kai/core/snapshot/fit.h"

namespace kai::actions {

NodeVerdict CheckNode(const Session& s, PodId pod, NodeId node) {
  NodeVerdict v;
  const SnapPod& p = s.snap().pods[pod];
  const SnapNode& n = s.snap().nodes[node];
  if (!FitsIdleOrReleasing(p, n, &v.shortage)) {
    v.code = v.shortage.is_core && v.shortage.core == CoreResource::kPods
                 ? FitCode::kTooManyPods
                 : FitCode::kInsufficientResources;
    v.never = !FitsEmptyNode(p, n);
    return v;
  }
  v = s.CheckPredicates(pod, node);
  v.never = v.never || IsStaticMismatch(v.code);  // a predicate may know it never fits
  return v;
}

namespace {

struct Cand {
  double score;
  int32_t rank;
  NodeId id;
};

}  // namespace

bool AnyNodeHasRoom(const Session& s, PodId pod, std::span<const NodeId> nodes) {
  const SnapPod& p = s.snap().pods[pod];
  for (NodeId n : nodes) {
    if (FitsIdleOrReleasing(p, s.snap().nodes[n])) return true;
  }
  return false;
}

namespace {

// Allocates the pod on the node's idle resources, else pipelines it onto resources being freed.
// A shared-GPU pod also needs GPUs of the node chosen for it; without them it does not go here.
bool PlaceOnNode(Session& s, Statement& stmt, PodId pod, NodeId node, bool pipeline_only) {
  const SnapPod& p = s.snap().pods[pod];
  if (p.share.IsShared()) {
    auto choice = s.ChooseSharedGpus(pod, node, pipeline_only);
    if (!choice) return false;
    if (pipeline_only || choice->releasing) {
      stmt.Pipeline(pod, node, std::move(choice->groups));
    } else {
      stmt.Allocate(pod, node, std::move(choice->groups));
    }
    return true;
  }
  if (!pipeline_only && FitsIdle(p, s.snap().nodes[node])) {
    stmt.Allocate(pod, node);
  } else {
    stmt.Pipeline(pod, node);
  }
  return true;
}

// The candidates with room (idle + releasing) for the pod. Simulations place many pods with one
// request: while no pod leaves a node (RoomVersion unchanged) room only shrinks, so over all
// nodes the next such pod re-checks only the nodes that had room for the last one.
void CollectRoomy(const Session& s, const SnapPod& p, std::span<const NodeId> candidates,
                  std::vector<NodeId>& out) {
  struct Remembered {
    uint64_t version = 0;
    Resources request;
    std::vector<NodeId> nodes;
  };
  static thread_local Remembered last;
  // Shared-GPU pods fit by device state, which is not tracked here: always checked in full.
  const bool all = candidates.size() == s.snap().nodes.size() && !p.share.IsShared();
  std::span<const NodeId> from = candidates;
  if (all && last.version == s.RoomVersion() && last.request == p.request) from = last.nodes;
  out.clear();
  for (NodeId id : from) {
    if (FitsIdleOrReleasing(p, s.snap().nodes[id])) out.push_back(id);
  }
  if (all) {
    last.version = s.RoomVersion();
    last.request = p.request;
    last.nodes = out;
  }
}

// `verdicts` may be null (simulations): no explanation is collected then, so candidate nodes
// without the resources (idle + releasing) are left out before the best node is chosen instead of
// being checked one by one; the choice is the same, since such a node is always refused.
bool PlaceTask(Session& s, Statement& stmt, PodId pod, bool pipeline_only,
               std::vector<NodeVerdict>* verdicts) {
  // Alike tasks share a ranking that re-scores only the nodes changed since its last use: the
  // candidates with room in placement order, so the choice is the one made below. Only a failure
  // to explain takes the full pass.
  if (const RankedNodes* ranked = s.ranking().Ranked(pod)) {
    // A ranking holds only nodes with room for the pod, as they stand now (nothing moves while
    // it is walked): the predicates are what is left of CheckNode.
    for (const RankedNode& c : *ranked) {
      if (s.CheckPredicates(pod, c.id).Fits() && PlaceOnNode(s, stmt, pod, c.id, pipeline_only)) {
        return true;
      }
    }
    if (!verdicts) return false;
  }
  static thread_local std::vector<Cand> cands;
  static thread_local std::vector<double> scores;
  static thread_local std::vector<NodeId> roomy;
  std::span<const NodeId> nodes = s.CandidateNodes();
  if (!verdicts) {
    CollectRoomy(s, s.snap().pods[pod], nodes, roomy);
    if (roomy.empty()) return false;
    nodes = roomy;
  }
  s.PrepareScores(pod);
  cands.clear();
  scores.resize(s.snap().nodes.size());
  if (verdicts) {
    s.ScoreNodes(pod, scores);
  } else {
    s.ScoreNodes(pod, scores, nodes);
  }
  for (NodeId id : nodes) {
    if (scores[id] == -std::numeric_limits<double>::infinity()) continue;  // vetoed by a scorer
    cands.push_back({scores[id], s.snap().node_name_rank[id], id});
  }
  auto worse = [](const Cand& a, const Cand& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.rank > b.rank;
  };
  auto try_node = [&](NodeId node) {
    NodeVerdict v = CheckNode(s, pod, node);
    if (!v.Fits()) {
      if (verdicts) verdicts->push_back(std::move(v));
      return false;
    }
    return PlaceOnNode(s, stmt, pod, node, pipeline_only);
  };
  if (cands.empty()) return false;
  // Usually the best node takes the task: find it in one pass, order the rest only if needed.
  auto best = std::max_element(cands.begin(), cands.end(), worse);
  if (try_node(best->id)) return true;
  std::iter_swap(best, cands.end() - 1);
  cands.pop_back();
  std::make_heap(cands.begin(), cands.end(), worse);
  while (!cands.empty()) {
    std::pop_heap(cands.begin(), cands.end(), worse);
    const NodeId node = cands.back().id;
    cands.pop_back();
    if (try_node(node)) return true;
  }
  return false;
}

}  // namespace

PlacementResult PlaceTasks(Session& s, Statement& stmt, std::span<const PodId> tasks,
                           bool pipeline_only) {
  PlacementResult result;
  for (PodId pod : tasks) {
    std::vector<NodeVerdict> verdicts;
    // Simulations (pipeline only) need no explanation of a failure.
    if (!PlaceTask(s, stmt, pod, pipeline_only, pipeline_only ? nullptr : &verdicts)) {
      result.failed_task = pod;
      result.reasons = SummariseVerdicts(verdicts);
      if (s.snap().nodes.empty()) result.reasons.push_back(NoNodesReason{});
      return result;
    }
    ++result.placed;
  }
  result.ok = true;
  return result;
}

namespace {

// Restores the session's candidate nodes when a node set attempt ends.
class CandidateScope {
 public:
  CandidateScope(Session& s, std::span<const NodeId> nodes) : s_(s), saved_(s.CandidateNodes()) {
    s_.SetCandidateNodes(nodes);
  }
  ~CandidateScope() { s_.SetCandidateNodes(saved_); }
  CandidateScope(const CandidateScope&) = delete;
  CandidateScope& operator=(const CandidateScope&) = delete;

 private:
  Session& s_;
  std::span<const NodeId> saved_;
};

// True when `sg` is `ancestor` or lies below it.
bool InSubtree(const SnapJob& job, SubGroupIndex sg, SubGroupIndex ancestor) {
  for (; sg != kNone; sg = job.sub_groups[sg].parent) {
    if (sg == ancestor) return true;
  }
  return false;
}

// Places a job's tasks SubGroup by SubGroup (KAI allocateSubGroupSet / allocatePodSet): each
// task group asks the SubsetNodes hooks for its node sets and tries them in order from a
// checkpoint; inside a set, a SubGroupSet places its members in SubGroup order (as they stand when
// the set is reached), each member on the node set its parent is trying. A flat PodGroup is placed
// as one group at its root: its only PodSet adds no constraint of its own.
class SubGroupPlacer {
 public:
  SubGroupPlacer(Session& s, Statement& stmt, JobId job, bool pipeline_only)
      : s_(s), stmt_(stmt), job_(s.snap().jobs[job]), pipeline_only_(pipeline_only) {}

  // A failure keeps the reasons of the first node set tried (the best-fitting one) after the
  // hooks' own reasons.
  PlacementResult PlaceGroup(const TaskGroup& group, std::span<const NodeId> nodes) {
    NodeSubsets subsets = s_.SubsetNodes(group, nodes);
    PlacementResult result;
    result.reasons = std::move(subsets.reasons);
    bool first = true;
    for (std::span<const NodeId> set : subsets.sets) {
      const size_t cp = stmt_.Checkpoint();
      PlacementResult attempt;
      {
        CandidateScope scope(s_, set);
        attempt = PlaceOn(group, set);
      }
      if (attempt.ok) return attempt;
      stmt_.Rollback(cp);
      if (first) {
        result.placed = attempt.placed;
        result.failed_task = attempt.failed_task;
        result.reasons.insert(result.reasons.end(), attempt.reasons.begin(), attempt.reasons.end());
        first = false;
      }
    }
    return result;
  }

 private:
  PlacementResult PlaceOn(const TaskGroup& group, std::span<const NodeId> nodes) {
    const SnapSubGroup& sg = job_.sub_groups[group.sub_group];
    if (sg.pod_set || !job_.HasSubGroups()) {
      return PlaceTasks(s_, stmt_, group.tasks, pipeline_only_);
    }
    PlacementResult done;
    for (SubGroupIndex m : OrderedMembers(s_, group.job, group.sub_group)) {
      const std::vector<PodId> mine = TasksIn(m, group.tasks);
      if (mine.empty()) continue;
      PlacementResult r =
          PlaceGroup(TaskGroup{.job = group.job, .sub_group = m, .tasks = mine}, nodes);
      if (!r.ok) return r;
      done.placed += r.placed;
    }
    done.ok = true;
    return done;
  }

  std::vector<PodId> TasksIn(SubGroupIndex sg, std::span<const PodId> tasks) const {
    std::vector<PodId> out;
    for (PodId t : tasks) {
      if (InSubtree(job_, s_.snap().pods[t].sub_group, sg)) out.push_back(t);
    }
    return out;
  }

  Session& s_;
  Statement& stmt_;
  const SnapJob& job_;
  bool pipeline_only_;
};

}  // namespace

PlacementResult PlaceJob(Session& s, Statement& stmt, JobId job, std::span<const PodId> tasks,
                         bool pipeline_only) {
  s.StartJobAttempt(job);
  const TaskGroup root{.job = job, .sub_group = kRootSubGroup, .tasks = tasks};
  return SubGroupPlacer(s, stmt, job, pipeline_only).PlaceGroup(root, s.AllNodes());
}

bool ShouldPipelineJob(const Session& s, JobId j) {
  const SnapJob& job = s.snap().jobs[j];
  for (size_t i = 0; i < job.sub_groups.size(); ++i) {
    const SnapSubGroup& set = job.sub_groups[i];
    if (!set.pod_set) continue;
    bool any_pipelined = false;
    int holding = 0;
    for (PodId p : job.PodsOf(static_cast<SubGroupIndex>(i))) {
      const PodStatus st = s.snap().pods[p].status;
      if (st == PodStatus::kPipelined) {
        any_pipelined = true;
      } else if (IsActiveAllocated(st)) {
        ++holding;
      }
    }
    if (any_pipelined && holding < set.min_member) return true;
  }
  return false;
}

void ConvertAllocatedToPipelined(Session& s, Statement& stmt, JobId j) {
  for (PodId p : stmt.AllocatedPods()) {
    const SnapPod& pod = s.snap().pods[p];
    if (pod.job == j && pod.status == PodStatus::kAllocated) stmt.Pipeline(p, pod.node);
  }
}

}  // namespace kai::actions
