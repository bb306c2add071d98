#pragma once
// What the running scheduler did not apply of its SchedulingShard (framework/config.h ApplyShard):
// logged once per change, and written by the leader as the shard's SettingsApplied condition
// (True when every setting applied; False, reason not_applied, naming the fields otherwise).
// Condition type and reason spellings follow KAI's kai.scheduler/v1 conditions (config_types.go).
#include <functional>
#include <string>
#include <vector>

#include "kai/core/framework/config.h"
#include "kai/core/k8s/doc.h"
#include "kai/core/util/time.h"
#include "kai/kube/client/api_client.h"

namespace kai::scheduler {

inline constexpr std::string_view kSettingsAppliedCondition = "SettingsApplied";

// The condition's message: every field not applied and why, or that all applied.
std::string SettingsMessage(const std::vector<NotApplied>& items);

// The merge patch of the shard's status.conditions: `shard` (the object as read) keeps its other
// conditions, and SettingsApplied is set (its transition time kept while its status stays). The
// patch names the resourceVersion read, so that a concurrent change fails it (409). Empty when
// the condition already says this.
std::string SettingsConditionPatch(const doc::Node& shard, const std::vector<NotApplied>& items,
                                   UnixSeconds now);

class ShardSettingsReport {
 public:
  explicit ShardSettingsReport(std::function<void(const std::string&)> log)
      : log_(std::move(log)) {}
  // This cycle's list: each item is logged when the list differs from the last cycle's.
  void Observe(const std::vector<NotApplied>& items);
  // Writes the condition of the observed list unless it is written already (leader only). A
  // failed write is tried again on the next call.
  void Write(const k8s::ApiClient& client, const std::string& shard_name, UnixSeconds now);
  const std::vector<NotApplied>& items() const { return items_; }

 private:
  std::function<void(const std::string&)> log_;
  std::vector<NotApplied> items_;
  bool written_ = false;
  bool failure_logged_ = false;
};

}  // namespace kai::scheduler
