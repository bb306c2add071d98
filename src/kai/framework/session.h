#pragma once
// A scheduling session: one snapshot, the plugins' hooks, and the decisions taken on it. The
// hooks and their combine rules are SessionHooks (framework/hooks.h); the snapshot as decisions
// change it, with the change tracking, is SessionState (framework/session_state.h). A Session is
// both, and moves pods between them: MovePod changes the state and fires the events.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kai/framework/config.h"
#include "kai/framework/hooks.h"
#include "kai/framework/plugin.h"
#include "kai/framework/session_state.h"
#include "kai/snapshot/snapshot.h"

namespace kai {

class NodeRanking;

class Session : public SessionHooks, public SessionState {
 public:
  Session(Snapshot snapshot, SchedulerConfig config);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Instantiates the configured plugins and lets each register its hooks.
  Result<bool> OpenPlugins();
  void Close();

  const SchedulerConfig& config() const { return config_; }
  // Monotonic milliseconds for the disruptive search's time bound (spec.args
  // max-search-time-per-job); read only when that bound is set. Injected: tests install a fake,
  // the default reads std::chrono::steady_clock.
  using MonotonicClock = std::function<int64_t()>;
  void SetMonotonicClock(MonotonicClock clock) { clock_ = std::move(clock); }
  int64_t MonotonicMillis() const;

  // The candidate nodes of pods ranked best first, kept up to date across tasks.
  NodeRanking& ranking() { return *ranking_; }

  // Moves a pod to a status and node, keeping node accounting and firing events; `groups`, when
  // given, become the pod's shared GPU groups on the new node, and receive its previous ones
  // (exchanged, not copied). Used by Statement; anything else should go through a Statement.
  void MovePod(PodId pod, PodStatus status, NodeId node,
               std::vector<std::string>* groups = nullptr);

 private:
  SchedulerConfig config_;
  MonotonicClock clock_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::unique_ptr<NodeRanking> ranking_;
};

}  // namespace kai
