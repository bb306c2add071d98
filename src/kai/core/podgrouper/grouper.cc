#include "kai/core/podgrouper/grouper.h"

#include <cctype>

#include "kai/core/k8s/doc.h"

namespace kai::podgrouper {
namespace {

// Go's encoding/json matches object keys to struct fields case-insensitively.
bool KeyIs(std::string_view key, std::string_view field) {
  if (key.size() != field.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(key[i])) !=
        std::tolower(static_cast<unsigned char>(field[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<TypeDefaults> ParseTypeDefaults(std::string_view types_json) {
  auto parsed = doc::ParseJson(types_json);
  if (!parsed) return Error{"types: " + parsed.error().message};
  const doc::Node root = parsed->Roots().at(0);
  TypeDefaults out;
  if (root.IsNull()) return out;
  if (!root.IsSequence()) return Error{"types: expected a JSON list"};
  for (size_t i = 0; i < root.size(); ++i) {
    const doc::Node item = root[i];
    if (item.IsNull()) {
      out.insert_or_assign(std::string(), TypeDefault{});
      continue;
    }
    if (!item.IsMap()) return Error{"types[" + std::to_string(i) + "]: expected an object"};
    std::string type_name, group;
    TypeDefault d;
    for (const auto& [k, v] : item.Entries()) {
      std::string* field = nullptr;
      if (KeyIs(k.Scalar(), "typeName")) field = &type_name;
      if (KeyIs(k.Scalar(), "group")) field = &group;
      if (KeyIs(k.Scalar(), "priorityName")) field = &d.priority_name;
      if (KeyIs(k.Scalar(), "preemptibility")) field = &d.preemptibility;
      if (field == nullptr || v.IsNull()) continue;
      if (!v.IsScalar()) {
        return Error{"types[" + std::to_string(i) + "]." + std::string(k.Scalar()) +
                     ": expected a string"};
      }
      *field = std::string(v.Scalar());
    }
    out.insert_or_assign(group.empty() ? type_name : type_name + "." + group, std::move(d));
  }
  return out;
}

const TypeDefault* DefaultsForKind(const TypeDefaults& defaults, std::string_view group_kind,
                                   std::string_view kind) {
  if (group_kind.empty()) return nullptr;
  if (auto it = defaults.find(group_kind); it != defaults.end()) return &it->second;
  if (auto it = defaults.find(kind); it != defaults.end()) return &it->second;
  return nullptr;
}

void GroupingEnv::Note(std::string message) const {
  for (const std::string& n : notes_) {
    if (n == message) return;
  }
  notes_.push_back(std::move(message));
}

bool GroupingEnv::PriorityClassExists(std::string_view name) const {
  if (name.empty()) return false;
  if (auto it = priority_classes_.find(name); it != priority_classes_.end()) return it->second;
  const Fetched f = reader_.Get({"scheduling.k8s.io/v1", "PriorityClass", "", std::string(name)});
  if (f.status == FetchStatus::kFailed || f.status == FetchStatus::kForbidden) {
    Note("PriorityClass " + std::string(name) + " could not be read: " + f.message);
  }
  const bool exists = f.status == FetchStatus::kFound;
  priority_classes_.emplace(std::string(name), exists);
  return exists;
}

const TypeDefaults& GroupingEnv::Defaults() const {
  if (defaults_) return *defaults_;
  defaults_.emplace();
  const std::string& name = config_.default_priorities_configmap_name;
  const std::string& ns = config_.default_priorities_configmap_namespace;
  if (name.empty() || ns.empty()) return *defaults_;
  const std::string what = "default priorities ConfigMap " + ns + "/" + name;
  const Fetched f = reader_.Get({"v1", "ConfigMap", ns, name});
  if (f.status != FetchStatus::kFound) {
    Note(what + " could not be read: " + f.message);
    return *defaults_;
  }
  const doc::Node types = f.object.node["data"]["types"];
  if (!types.IsScalar()) {
    Note(what + " has no data.types");
    return *defaults_;
  }
  auto parsed = ParseTypeDefaults(types.Scalar());
  if (!parsed) {
    Note(what + ": " + parsed.error().message);
    return *defaults_;
  }
  *defaults_ = std::move(*parsed);
  return *defaults_;
}

}  // namespace kai::podgrouper
