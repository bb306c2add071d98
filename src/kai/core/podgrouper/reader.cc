#include "kai/core/podgrouper/reader.h"

namespace kai::podgrouper {
namespace {

std::string GroupOf(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

}  // namespace

MemoryReader::Key MemoryReader::KeyOf(std::string_view api_version, std::string_view kind,
                                      std::string_view ns, std::string_view name) {
  return {GroupOf(api_version), std::string(kind), std::string(ns), std::string(name)};
}

MemoryReader::MemoryReader(std::vector<Object> objects) {
  for (auto& o : objects) Add(std::move(o));
}

void MemoryReader::Add(Object o) {
  Key key = KeyOf(o.api_version, o.kind, o.ns, o.name);
  objects_.insert_or_assign(std::move(key), std::move(o));
}

void MemoryReader::Forbid(std::string_view api_version, std::string_view kind) {
  forbidden_.emplace(GroupOf(api_version), std::string(kind));
}

void MemoryReader::Fail(const ObjectKey& key, std::string message) {
  failing_.insert_or_assign(KeyOf(key.api_version, key.kind, key.ns, key.name), std::move(message));
}

Fetched MemoryReader::Get(const ObjectKey& key) const {
  ++calls_;
  const Key k = KeyOf(key.api_version, key.kind, key.ns, key.name);
  if (forbidden_.contains({std::get<0>(k), std::get<1>(k)})) {
    return {FetchStatus::kForbidden, {}, key.kind + " " + key.name + " is forbidden"};
  }
  if (auto it = failing_.find(k); it != failing_.end()) {
    return {FetchStatus::kFailed, {}, it->second};
  }
  auto it = objects_.find(k);
  if (it == objects_.end()) {
    return {FetchStatus::kNotFound, {}, key.kind + " \"" + key.name + "\" not found"};
  }
  return {FetchStatus::kFound, it->second, ""};
}

Result<std::vector<Object>> MemoryReader::List(std::string_view api_version, std::string_view kind,
                                               std::string_view ns, const Labels& selector) const {
  ++calls_;
  const std::string group = GroupOf(api_version);
  if (forbidden_.contains({group, std::string(kind)})) {
    return Error{std::string(kind) + " is forbidden"};
  }
  std::vector<Object> out;
  // The map is ordered by (group, kind, namespace, name): the range of one kind and namespace.
  for (auto it = objects_.lower_bound(Key{group, std::string(kind), std::string(ns), ""});
       it != objects_.end(); ++it) {
    const auto& [g, k, n, name] = it->first;
    if (g != group || k != kind || n != ns) break;
    bool match = true;
    for (const auto& [lk, lv] : selector) {
      const std::string* v = it->second.Label(lk.view());
      if (v == nullptr || *v != lv) {
        match = false;
        break;
      }
    }
    if (match) out.push_back(it->second);
  }
  return out;
}

}  // namespace kai::podgrouper
