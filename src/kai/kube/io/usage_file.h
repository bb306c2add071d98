#pragma once
// The front ends' reader of usage files (kai simulate --usage, kai queues --usage): the file's
// text goes to usage::ParseUsage, which does no I/O.
#include <string>

#include "kai/core/usage/usage_store.h"
#include "kai/core/util/result.h"

namespace kai::usage {

// Reads and parses a usage file (usage_store.h states its format).
Result<UsageStore> LoadUsageFile(const std::string& path);

}  // namespace kai::usage
