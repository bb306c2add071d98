#pragma once
// Pieces of the status merge patches (JSON merge patch, RFC 7386): a map field replaced by one
// with other names must null the names it lost, or the server keeps them.
#include <string_view>

#include "kai/core/controllers/objects.h"
#include "kai/core/k8s/json_body.h"

namespace kai::controllers {

// Writes `field` with the merge patch of `held` -> `next` when they differ: null when `next` is
// empty (KAI omits an empty list), else next's entries plus null for each name only in `held`.
void WriteListPatch(k8s::JsonWriter& w, std::string_view field, const TextList& held,
                    const TextList& next);

}  // namespace kai::controllers
