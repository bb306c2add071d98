#pragma once
// Metadata every decoded object carries (see cluster.h for the memory layout notes).
#include <optional>
#include <string>

#include "kai/core/model/labels.h"
#include "kai/core/util/interned_string.h"
#include "kai/core/util/time.h"

namespace kai {

struct ObjectMeta {
  InternedString kind;
  std::string name;
  InternedString ns;
  std::string uid;
  Labels labels;
  Labels annotations;
  std::optional<UnixSeconds> creation;
  std::optional<UnixSeconds> deletion;
  InternedString source;  // file the object came from, for messages
  // "Kind namespace/name" or "Kind name".
  std::string Ref() const;
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

}  // namespace kai
