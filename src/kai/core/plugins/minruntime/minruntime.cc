// minruntime: a workload that started recently is protected from preemption and reclaim for the
// queue's preemptMinRuntime / reclaimMinRuntime (kai-semantics.md §2.11). Values are inherited
// down the queue tree; the plugin arguments give the defaults. For reclaim the value is resolved
// from the victim's queue (`queue`) or from the victim-side child of the lowest common ancestor
// of the two queues (`lca`, the default). A protected gang is never a victim; a protected elastic
// job may lose pods above its minimum only.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "kai/core/framework/session.h"
#include "kai/core/framework/subgroups.h"
#include "kai/core/plugins/builtin.h"
#include "kai/core/util/time.h"

namespace kai::plugins {
namespace {

struct MinRuntimeArgs {
  int64_t preempt = 0;
  int64_t reclaim = 0;
  bool lca = true;
};

using QueueRuntime = std::optional<int64_t> QueueObject::*;

// First value set from `q` upward, else the default.
int64_t Resolve(const Snapshot& snap, QueueId q, QueueRuntime field, int64_t fallback) {
  for (; q != kNone; q = snap.queues[q].parent) {
    if (const auto& v = snap.queues[q].obj->*field) return *v;
  }
  return fallback;
}

bool OnPathToRoot(const Snapshot& snap, QueueId from, QueueId q) {
  for (; from != kNone; from = snap.queues[from].parent) {
    if (from == q) return true;
  }
  return false;
}

// Without allocating: it runs for every reclaimer x victim job pair.
QueueId VictimSideOfLca(const Snapshot& snap, QueueId reclaimer, QueueId victim) {
  QueueId child = victim;
  for (QueueId q = victim; q != kNone; child = q, q = snap.queues[q].parent) {
    if (OnPathToRoot(snap, reclaimer, q)) return q == victim ? victim : child;
  }
  return victim;
}

// Each queue's resolved runtimes, read once per session: the filter runs for every preemptor x
// victim job pair. The reclaim side of the lowest common ancestor is kept for the last pair of
// queues asked (candidates come grouped by queue).
class Runtimes {
 public:
  Runtimes(const Snapshot& snap, const MinRuntimeArgs& args)
      : lca_(args.lca), preempt_default_(args.preempt), reclaim_default_(args.reclaim) {
    for (QueueId q = 0; q < static_cast<QueueId>(snap.queues.size()); ++q) {
      preempt_.push_back(Resolve(snap, q, &QueueObject::preempt_min_runtime, args.preempt));
      reclaim_.push_back(Resolve(snap, q, &QueueObject::reclaim_min_runtime, args.reclaim));
    }
  }
  int64_t Preempt(QueueId victim) const {
    return victim == kNone ? preempt_default_ : preempt_[victim];
  }
  int64_t Reclaim(const Snapshot& snap, QueueId reclaimer, QueueId victim) {
    if (!lca_) return victim == kNone ? reclaim_default_ : reclaim_[victim];
    if (reclaimer != last_.reclaimer || victim != last_.victim || !last_.known) {
      const QueueId from = VictimSideOfLca(snap, reclaimer, victim);
      last_ = {reclaimer, victim, from == kNone ? reclaim_default_ : reclaim_[from], true};
    }
    return last_.runtime;
  }

 private:
  bool lca_;
  std::vector<int64_t> preempt_, reclaim_;  // per queue id
  int64_t preempt_default_ = 0, reclaim_default_ = 0;
  struct {
    QueueId reclaimer = kNone, victim = kNone;
    int64_t runtime = 0;
    bool known = false;
  } last_;
};

class MinRuntimePlugin : public Plugin {
 public:
  explicit MinRuntimePlugin(MinRuntimeArgs args) : args_(args) {}

  void OnSessionOpen(Session& s) override {
    auto runtimes = std::make_shared<Runtimes>(s.snap(), args_);
    auto protected_for = [runtimes](const Session& ss, DisruptionKind kind, JobId preemptor,
                                    JobId victim) {
      const Snapshot& snap = ss.snap();
      const SnapJob& v = snap.jobs[victim];
      if (!v.last_start) return false;
      const int64_t runtime = kind == DisruptionKind::kPreempt
                                  ? runtimes->Preempt(v.queue)
                                  : runtimes->Reclaim(snap, snap.jobs[preemptor].queue, v.queue);
      return ss.now() < *v.last_start + runtime;
    };
    for (DisruptionKind kind : {DisruptionKind::kPreempt, DisruptionKind::kReclaim}) {
      s.AddVictimFilter(kind, [kind, protected_for](const Session& ss, JobId p, JobId v) {
        return !protected_for(ss, kind, p, v) || IsElasticJob(ss.snap().jobs[v]);
      });
      s.AddScenarioValidator(kind, [kind, protected_for](const Session& ss, const Scenario& sc) {
        return KeepsProtectedGangs(
            ss, sc, [&](JobId v) { return protected_for(ss, kind, sc.preemptor, v); });
      });
    }
  }

 private:
  // A protected elastic job may lose only pods above the minimum of each PodSet they leave.
  // The evicted (job, PodSet) pairs are sorted and each job asked once, in job order.
  template <class F>
  static bool KeepsProtectedGangs(const Session& s, const Scenario& sc, F is_protected) {
    std::vector<std::pair<JobId, SubGroupIndex>> evicted;
    for (PodId p : *sc.victims) {
      const SnapPod& pod = s.snap().pods[p];
      if (pod.status == PodStatus::kReleasing) evicted.emplace_back(pod.job, pod.sub_group);
    }
    std::sort(evicted.begin(), evicted.end());
    evicted.erase(std::unique(evicted.begin(), evicted.end()), evicted.end());
    for (size_t i = 0; i < evicted.size();) {
      const JobId job = evicted[i].first;
      size_t end = i;
      while (end < evicted.size() && evicted[end].first == job) ++end;
      if (is_protected(job) && BelowMinimum(s.snap().jobs[job], evicted, i, end)) return false;
      i = end;
    }
    return true;
  }

  // Some PodSet of evicted[begin, end) (all of `job`) holds fewer than its minimum.
  static bool BelowMinimum(const SnapJob& job,
                           const std::vector<std::pair<JobId, SubGroupIndex>>& evicted,
                           size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      // active_allocated already excludes the evicted pods inside the simulation.
      const SnapSubGroup& set = job.sub_groups[evicted[i].second];
      if (set.active_allocated < set.min_member) return true;
    }
    return false;
  }

  MinRuntimeArgs args_;
};

Result<int64_t> DurationArg(const PluginArguments& args, const std::string& key) {
  auto it = args.find(key);
  if (it == args.end()) return int64_t{0};
  auto d = ParseGoDuration(it->second);
  if (!d || *d < 0)
    return Error{"argument " + key + ": expected a duration such as 10m, got \"" + it->second +
                 "\""};
  return *d;
}

}  // namespace

Result<std::unique_ptr<Plugin>> MakeMinRuntime(const PluginArguments& args) {
  MinRuntimeArgs a;
  auto preempt = DurationArg(args, "defaultPreemptMinRuntime");
  if (!preempt.ok()) return preempt.error();
  auto reclaim = DurationArg(args, "defaultReclaimMinRuntime");
  if (!reclaim.ok()) return reclaim.error();
  a.preempt = *preempt;
  a.reclaim = *reclaim;
  if (auto it = args.find("reclaimResolveMethod"); it != args.end()) {
    if (it->second != "lca" && it->second != "queue") {
      return Error{"argument reclaimResolveMethod: must be lca or queue, got \"" + it->second +
                   "\""};
    }
    a.lca = it->second == "lca";
  }
  return std::unique_ptr<Plugin>(std::make_unique<MinRuntimePlugin>(a));
}

}  // namespace kai::plugins
