#include "kai/core/controllers/status_patch.h"

namespace kai::controllers {

void WriteListPatch(k8s::JsonWriter& w, std::string_view field, const TextList& held,
                    const TextList& next) {
  if (held == next) return;
  k8s::Str(w, field);
  if (next.empty()) {
    w.Null();
    return;
  }
  w.StartObject();
  for (const auto& [name, text] : next) k8s::KeyStr(w, name, text);
  for (const auto& [name, text] : held) {
    if (next.count(name)) continue;
    k8s::Str(w, name);
    w.Null();
  }
  w.EndObject();
}

}  // namespace kai::controllers
