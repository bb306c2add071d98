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

#include "kai/core/framework/config.h"
#include "kai/core/framework/hooks.h"
#include "kai/core/framework/plugin.h"
#include "kai/core/framework/session_metrics.h"
#include "kai/core/framework/session_state.h"
#include "kai/core/framework/verdict_memo.h"
#include "kai/core/snapshot/snapshot.h"

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
  // The clock of the session's measurements (framework/session_metrics.h), monotonic
  // milliseconds; without one, no duration is measured.
  void SetMetricsClock(MonotonicClock clock) { metrics_clock_ = std::move(clock); }
  // Its reading; -1 without a metrics clock.
  int64_t MetricsMillis() const { return metrics_clock_ ? metrics_clock_() : -1; }
  SessionMetrics& metrics() { return metrics_; }
  const SessionMetrics& metrics() const { return metrics_; }
  // Starts the measurement of an action (its counts and its time, until the next one starts or
  // FinishAction).
  void StartAction(const std::string& action);
  void FinishAction();

  // Verdicts on pending jobs kept from the last cycle or shared by jobs of one shape
  // (framework/verdict_memo.h).
  VerdictMemo& memo() { return memo_; }

  // The candidate nodes of pods ranked best first, kept up to date across tasks.
  NodeRanking& ranking() { return *ranking_; }

  // Moves a pod to a status and node, keeping node accounting and firing events; `groups`, when
  // given, become the pod's shared GPU groups on the new node, and receive its previous ones
  // (exchanged, not copied). Used by Statement; anything else should go through a Statement.
  void MovePod(PodId pod, PodStatus status, NodeId node,
               std::vector<std::string>* groups = nullptr);

 private:
  // Every plugin's OnSessionOpen (or OnSessionClose), each measured; the time they all took.
  int64_t CallPlugins(bool open);
  int64_t Elapsed(int64_t since) const;  // -1 when `since` is

  SchedulerConfig config_;
  MonotonicClock clock_;
  MonotonicClock metrics_clock_;
  SessionMetrics metrics_;
  VerdictMemo memo_;
  int64_t action_started_ = -1;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::unique_ptr<NodeRanking> ranking_;
};

}  // namespace kai
