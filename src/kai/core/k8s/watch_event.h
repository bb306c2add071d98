#pragma once
// One line of a Kubernetes watch stream (`{"type": "ADDED", "object": {...}}`), read and checked
// without I/O, so that the reflector acts only on well-formed events and a fuzzer can reach it.
#include <string_view>

#include "kai/core/k8s/doc.h"
#include "kai/core/util/result.h"

namespace kai::k8s {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

class WatchEvent {
 public:
  WatchEventType type() const { return type_; }
  // A map: the object (ADDED, MODIFIED, DELETED), a bookmark's metadata holder, or the Status of
  // an ERROR event.
  doc::Node object() const { return doc_.Roots()[0]["object"]; }
  std::string_view resource_version() const {
    return object()["metadata"]["resourceVersion"].Scalar();
  }

 private:
  friend Result<WatchEvent> ParseWatchEvent(std::string_view line);
  WatchEvent(doc::Document doc, WatchEventType type) : doc_(std::move(doc)), type_(type) {}
  doc::Document doc_;
  WatchEventType type_;
};

// Errors name what is wrong ("type: unknown watch event type \"X\"", "object: not an object").
// JSON is parsed under doc::Limits' defaults (depth 256).
Result<WatchEvent> ParseWatchEvent(std::string_view line);

}  // namespace kai::k8s
