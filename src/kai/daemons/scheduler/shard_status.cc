#include "kai/daemons/scheduler/shard_status.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "kai/core/k8s/json_body.h"

namespace kai::scheduler {
namespace {

using k8s::JsonWriter;
using k8s::KeyStr;
using k8s::Str;
namespace res = k8s::resources;

constexpr size_t kMaxMessage = 32000;  // metav1.Condition's message holds at most 32768 bytes

struct Condition {
  std::string type, status, reason, message, transition;
  std::optional<int64_t> observed_generation;
};

Condition Read(const doc::Node& c) {
  Condition out{std::string(c["type"].Scalar()),
                std::string(c["status"].Scalar()),
                std::string(c["reason"].Scalar()),
                std::string(c["message"].Scalar()),
                std::string(c["lastTransitionTime"].Scalar()),
                std::nullopt};
  const std::string_view g = c["observedGeneration"].Scalar();
  int64_t v = 0;
  if (!g.empty() && std::from_chars(g.data(), g.data() + g.size(), v).ec == std::errc()) {
    out.observed_generation = v;
  }
  return out;
}

void WriteCondition(JsonWriter& w, const Condition& c) {
  w.StartObject();
  KeyStr(w, "type", c.type);
  KeyStr(w, "status", c.status);
  KeyStr(w, "reason", c.reason);
  KeyStr(w, "message", c.message);
  KeyStr(w, "lastTransitionTime", c.transition);
  if (c.observed_generation) {
    Str(w, "observedGeneration");
    w.Int64(*c.observed_generation);
  }
  w.EndObject();
}

Condition SettingsCondition(const std::vector<NotApplied>& items, UnixSeconds now) {
  Condition c;
  c.type = std::string(kSettingsAppliedCondition);
  c.status = items.empty() ? "True" : "False";
  c.reason = items.empty() ? "applied" : "not_applied";
  c.message = SettingsMessage(items);
  c.transition = FormatRfc3339(now);
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
  Condition ours = SettingsCondition(items, now);
  std::vector<Condition> conditions;
  const doc::Node existing = shard["status"]["conditions"];
  for (size_t i = 0; i < existing.size(); ++i) {
    Condition c = Read(existing[i]);
    if (c.type != ours.type) {
      conditions.push_back(std::move(c));
      continue;
    }
    if (c.status == ours.status && c.reason == ours.reason && c.message == ours.message) return "";
    if (c.status == ours.status) ours.transition = c.transition;
  }
  conditions.push_back(ours);
  return k8s::Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "resourceVersion", shard["metadata"]["resourceVersion"].Scalar());
    w.EndObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "conditions");
    w.StartArray();
    for (const Condition& c : conditions) WriteCondition(w, c);
    w.EndArray();
    w.EndObject();
    w.EndObject();
  });
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
