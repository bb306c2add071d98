#pragma once
// Field-by-field comparison of two snapshots: how the incremental SnapshotCache (cache.h) is held
// to its contract of equality with a full BuildSnapshot.
#include <string>

#include "kai/core/snapshot/snapshot.h"

namespace kai {

// "" when `want` and `got` are equal in every field (object pointers, views, ids, list orders,
// node accounting, GPU groups, floors, queue fields); else the first differences found, one per
// line ("pod default/p3 (3): status Running != Pending"), at most `limit` of them.
std::string SnapshotDifference(const Snapshot& want, const Snapshot& got, int limit = 10);

}  // namespace kai
