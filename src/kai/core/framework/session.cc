#include "kai/core/framework/session.h"

#include <chrono>

#include "kai/core/framework/node_ranking.h"

namespace kai {

Session::Session(Snapshot snapshot, SchedulerConfig config)
    : SessionState(std::move(snapshot)), config_(std::move(config)) {
  ranking_ = std::make_unique<NodeRanking>(*this);
}

Session::~Session() = default;

int64_t Session::MonotonicMillis() const {
  if (clock_) return clock_();
  const auto since = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(since).count();
}

Result<bool> Session::OpenPlugins() {
  for (const PluginConfig& pc : config_.plugins) {
    const PluginInfo* info = FindPlugin(pc.name);
    if (!info) return Error{"unknown plugin \"" + pc.name + "\""};
    auto plugin = info->make(pc.arguments);
    if (!plugin.ok()) return Error{"plugin " + pc.name + ": " + plugin.error().message};
    plugins_.push_back(std::move(plugin.value()));
  }
  metrics_.open_millis = CallPlugins(/*open=*/true);
  return true;
}

void Session::Close() {
  FinishAction();
  metrics_.close_millis = CallPlugins(/*open=*/false);
}

int64_t Session::CallPlugins(bool open) {
  const int64_t started = MetricsMillis();
  for (size_t i = 0; i < plugins_.size(); ++i) {
    const int64_t before = MetricsMillis();
    if (open) {
      plugins_[i]->OnSessionOpen(*this);
    } else {
      plugins_[i]->OnSessionClose(*this);
    }
    if (before >= 0) metrics_.plugins.push_back({config_.plugins[i].name, open, Elapsed(before)});
  }
  return Elapsed(started);
}

int64_t Session::Elapsed(int64_t since) const { return since < 0 ? -1 : MetricsMillis() - since; }

void Session::StartAction(const std::string& action) {
  FinishAction();
  metrics_.actions.push_back({.action = action});
  memo_.StartAction(action);
  action_started_ = MetricsMillis();
}

void Session::FinishAction() {
  if (ActionMetrics* a = metrics_.current(); a && action_started_ >= 0) {
    a->millis = Elapsed(action_started_);
  }
  action_started_ = -1;
}

// The floor is joined before the allocation handlers run and left after the deallocation ones
// (snapshot/semi_preemptible.h).
void Session::MovePod(PodId id, PodStatus status, NodeId node, std::vector<std::string>* groups) {
  switch (ApplyMove(id, status, node, groups)) {
    case AllocationChange::kAllocated:
      JoinFloorOf(id);
      FireAllocated(id);
      break;
    case AllocationChange::kDeallocated:
      FireDeallocated(id);
      LeaveFloorOf(id);
      break;
    case AllocationChange::kNone:
      break;
  }
}

}  // namespace kai
