#pragma once
// The usage history on disk (kai scheduler --usage-dir, kai queues --usage-dir): one file,
// <dir>/usage-history, in the format of usage/history_format.h. A save writes a temporary file,
// syncs it, renames it over the old one and syncs the directory, so a crash at any moment leaves
// either the old file or the new one. A file that fails its checks is never overwritten or
// silently dropped: it is renamed aside to usage-history.corrupt-<RFC 3339 time> and reported.
#include <optional>
#include <string>

#include "kai/core/usage/history_format.h"
#include "kai/core/util/result.h"

namespace kai::usage {

struct LoadedHistory {
  std::optional<HistoryFile> file;  // none: no file yet (an empty history)
  std::string corrupt;              // what was wrong with a file set aside ("" = nothing)
  std::string set_aside_as;         // where it went
  bool removed_temp = false;        // a temporary file left by an interrupted save was removed
};

class UsageDir {
 public:
  explicit UsageDir(std::string dir);
  const std::string& path() const { return path_; }

  // Reads the file. A damaged one is renamed aside (its name uses `now`); an error only when the
  // directory cannot be used at all (it is created when missing).
  Result<LoadedHistory> Load(UnixSeconds now, HistoryLimits limits = {}) const;
  // Reads the file without touching it (kai queues --usage-dir): none when there is none; a
  // damaged file is an error saying what is wrong.
  Result<std::optional<HistoryFile>> Read(HistoryLimits limits = {}) const;
  // Replaces the file with `text` atomically; the error names the step that failed.
  std::optional<Error> Save(const std::string& text) const;

 private:
  std::string dir_, path_, temp_;
};

}  // namespace kai::usage
