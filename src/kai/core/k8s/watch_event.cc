#include "kai/core/k8s/watch_event.h"

#include <optional>
#include <string>

namespace kai::k8s {
namespace {

std::optional<WatchEventType> TypeNamed(std::string_view name) {
  if (name == "ADDED") return WatchEventType::kAdded;
  if (name == "MODIFIED") return WatchEventType::kModified;
  if (name == "DELETED") return WatchEventType::kDeleted;
  if (name == "BOOKMARK") return WatchEventType::kBookmark;
  if (name == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

}  // namespace

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  auto parsed = doc::ParseJson(line);
  if (!parsed.ok()) return Error{"watch event: " + parsed.error().message};
  const doc::Node root = parsed->Roots().at(0);
  if (!root.IsMap()) return Error{"watch event: not an object"};
  const doc::Node type = root["type"];
  const std::optional<WatchEventType> t = TypeNamed(type.Scalar());
  if (!t) {
    return Error{"watch event: type: unknown watch event type \"" + std::string(type.Scalar()) +
                 "\""};
  }
  const doc::Node object = root["object"];
  if (!object.IsMap()) return Error{"watch event: object: not an object"};
  if (*t != WatchEventType::kError && !object["metadata"].IsMap()) {
    return Error{"watch event: object.metadata: not an object"};
  }
  return WatchEvent(std::move(*parsed), *t);
}

}  // namespace kai::k8s
