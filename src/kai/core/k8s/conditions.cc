#include "kai/core/k8s/conditions.h"

#include <charconv>

#include "kai/core/k8s/json_body.h"

namespace kai::k8s {
namespace {

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

bool Same(const Condition& a, const Condition& b) {
  return a.status == b.status && a.reason == b.reason && a.message == b.message &&
         a.observed_generation == b.observed_generation;
}

}  // namespace

Condition ReadCondition(const doc::Node& c) {
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

std::string ConditionsPatch(const doc::Node& object, const std::vector<Condition>& set,
                            UnixSeconds now) {
  std::vector<Condition> out;
  std::vector<bool> placed(set.size(), false);
  bool changed = false;
  const doc::Node existing = object["status"]["conditions"];
  for (size_t i = 0; i < existing.size(); ++i) {
    Condition c = ReadCondition(existing[i]);
    size_t k = 0;
    while (k < set.size() && set[k].type != c.type) ++k;
    if (k == set.size() || placed[k]) {
      out.push_back(std::move(c));
      continue;
    }
    placed[k] = true;
    Condition ours = set[k];
    ours.transition = ours.status == c.status ? c.transition : FormatRfc3339(now);
    changed = changed || !Same(ours, c);
    out.push_back(std::move(ours));
  }
  for (size_t k = 0; k < set.size(); ++k) {
    if (placed[k]) continue;
    Condition ours = set[k];
    ours.transition = FormatRfc3339(now);
    out.push_back(std::move(ours));
    changed = true;
  }
  if (!changed) return "";
  return Json([&](JsonWriter& w) {
    w.StartObject();
    Str(w, "metadata");
    w.StartObject();
    KeyStr(w, "resourceVersion", object["metadata"]["resourceVersion"].Scalar());
    w.EndObject();
    Str(w, "status");
    w.StartObject();
    Str(w, "conditions");
    w.StartArray();
    for (const Condition& c : out) WriteCondition(w, c);
    w.EndArray();
    w.EndObject();
    w.EndObject();
  });
}

}  // namespace kai::k8s
