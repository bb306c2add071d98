#pragma once
// The usage history's file format (the file store is io/usage_dir.h; this part does no I/O).
// Text, one record a line, after a header that lets a reader tell a whole file from a damaged one:
//   kai-usage-history <version> <records> <fnv1a64 of the body, 16 hex digits>
//   sample <unix seconds of the last sample>
//   params <half-life seconds> <window seconds>
//   capacity <start> <duration> <milli-cpu> <memory bytes> <milli-gpu>
//   queue <name> <start> <duration> <milli-cpu> <memory bytes> <milli-gpu>
//   open <queue name> | open-capacity     (the last interval is held at the last sample)
// A file cut short anywhere, or with any byte changed, fails the record count or the checksum.
#include <string>
#include <string_view>

#include "kai/core/usage/history.h"
#include "kai/core/util/result.h"

namespace kai::usage {

inline constexpr int kHistoryFormatVersion = 1;

struct HistoryFile {
  UsageHistory history;
  UsageParams params;  // what the writer used (kai queues --usage-dir reads the same)
};

std::string EncodeHistory(const UsageHistory& history, const UsageParams& params);

// Checks and decodes a file's text; the error says what is wrong (and `source` names the file).
Result<HistoryFile> DecodeHistory(std::string_view text, const std::string& source,
                                  HistoryLimits limits = {});

// FNV-1a, 64 bits: enough to catch a torn or damaged write (not an adversary).
uint64_t Fnv1a64(std::string_view bytes);

}  // namespace kai::usage
