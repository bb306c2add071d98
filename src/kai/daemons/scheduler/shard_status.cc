#include "kai/daemons/scheduler/shard_status.h"

#include <algorithm>
#include <optional>

#include "kai/core/k8s/conditions.h"

namespace kai::scheduler {
namespace {

namespace res = k8s::resources;

constexpr size_t kMaxMessage = 32000;  // metav1.Condition's message holds at most 32768 bytes

k8s::Condition SettingsCondition(const std::vector<NotApplied>& items) {
  k8s::Condition c;
  c.type = std::string(kSettingsAppliedCondition);
  c.status = items.empty() ? "True" : "False";
  c.reason = items.empty() ? "applied" : "not_applied";
  c.message = SettingsMessage(items);
  return c;
}

}  // namespace

std::string SettingsMessage(const std::vector<NotApplied>& items) {
  if (items.empty()) return "kai applied every setting of the shard";
  std::string out = "not applied (kai keeps its defaults for them): ";
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string one = (i ? "; " : "") + items[i].field + ": " + items[i].detail;
    if (out.size() + one.size() > kMaxMessage) {
      out += "; and " + std::to_string(items.size() - i) + " more";
      break;
    }
    out += one;
  }
  return out;
}

std::string SettingsConditionPatch(const doc::Node& shard, const std::vector<NotApplied>& items,
                                   UnixSeconds now) {
  return k8s::ConditionsPatch(shard, {SettingsCondition(items)}, now);
}

void ShardSettingsReport::Observe(const std::vector<NotApplied>& items) {
  if (items == items_) return;
  for (const NotApplied& n : items) {
    if (std::find(items_.begin(), items_.end(), n) == items_.end()) {
      log_("SchedulingShard setting not applied (kai keeps its default): " + n.Message());
    }
  }
  if (items.empty()) log_("every SchedulingShard setting applied");
  items_ = items;
  written_ = false;
  failure_logged_ = false;
}

void ShardSettingsReport::Write(const k8s::ApiClient& client, const std::string& shard_name,
                                UnixSeconds now) {
  if (written_ || shard_name.empty()) return;
  const std::string path = k8s::ObjectPath(res::kShard, "", shard_name);
  auto fail = [&](const std::string& what) {
    if (!failure_logged_)
      log_("the SchedulingShard's " + std::string(kSettingsAppliedCondition) +
           " condition is not written (tried again next cycle): " + what);
    failure_logged_ = true;
  };
  const k8s::HttpResponse cur = client.Get(path);
  if (!cur.ok()) return fail(k8s::Describe({"GET", path}, cur));
  auto shard = doc::ParseJson(cur.body);
  if (!shard.ok() || shard->Roots().empty()) return fail(path + ": not a JSON object");
  const std::string body = SettingsConditionPatch(shard->Roots()[0], items_, now);
  if (!body.empty()) {
    const k8s::HttpResponse r = client.Patch(path + "/status", body, k8s::PatchType::kMerge);
    if (!r.ok()) return fail(k8s::Describe({"PATCH", path + "/status"}, r));
  }
  written_ = true;
}

}  // namespace kai::scheduler
