#include "kai/framework/session.h"

#include <chrono>

#include "kai/framework/node_ranking.h"

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
  for (auto& p : plugins_) p->OnSessionOpen(*this);
  return true;
}

void Session::Close() {
  for (auto& p : plugins_) p->OnSessionClose(*this);
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
