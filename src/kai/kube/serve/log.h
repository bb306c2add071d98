#pragma once
// The daemons' one logger (spdlog). Every record has a UTC time (ISO 8601, milliseconds), a
// level and the component that wrote it, as console text (`TIME<TAB>LEVEL<TAB>component<TAB>
// message`) or as one JSON object a line with KAI's keys (level, ts, logger, msg). The core
// library never logs; the daemons write whole lines to a LogStream, which turns each line into
// one record. spdlog stays out of this header (pimpl): only log.cc compiles it.
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "kai/core/util/trace.h"

namespace kai::serve {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

struct LogOptions {
  // Records above this verbosity are dropped (KAI's `--v`; its scheduler's default is 3).
  int verbosity = 0;
  LogLevel min_level = LogLevel::kDebug;  // records below it are dropped (--zap-log-level error)
  bool json = false;            // one JSON object a line (KAI's --log-json, zap's json encoder)
  bool capital_levels = false;  // "INFO" as KAI's scheduler writes it; "info" as zap's JSON does
};

// The verbosity from which the disruptive actions' search trace is logged (KAI_DEBUG does the
// same at any verbosity).
inline constexpr int kTraceVerbosity = 5;

// One record, as a LogStream reads it from a line.
struct LogRecord {
  LogLevel level = LogLevel::kInfo;
  std::string component;
  std::string message;
};

// A component's line as a record: a leading `kai NAME: ` names the component (`kai: ` leaves
// `default_component`), and a following `error: ` or `warning: ` sets the level.
LogRecord ParseLogLine(std::string_view line, std::string_view default_component);

// One record as the logger writes it, without the newline; `time` is what goes in ts.
std::string FormatLogRecord(const LogRecord& record, const LogOptions& options,
                            std::string_view time);

class Logger {
 public:
  // Records go to `sink` (std::cerr in the daemons), which must outlive the logger.
  Logger(std::ostream& sink, std::string component, LogOptions options);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  bool Enabled(int verbosity) const { return verbosity <= options_.verbosity; }
  const std::string& component() const { return component_; }
  // Writes the record when its verbosity is enabled (info, warnings and errors are at 0) and its
  // level is at least the options' min_level.
  void Write(const LogRecord& record, int verbosity = 0);

 private:
  class Impl;
  std::string component_;
  LogOptions options_;
  std::unique_ptr<Impl> impl_;
};

// A std::ostream for the daemons' `err`: each complete line written to it becomes one record of
// the logger (ParseLogLine). Threads may write to one LogStream at once: each thread's partial
// line is kept apart, and a line longer than 64 KiB is cut into records of that size.
class LogStream final : public std::ostream {
 public:
  explicit LogStream(Logger& logger);
  ~LogStream() override;

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
};

// The disruptive actions' search trace as debug records of `logger` at `verbosity`.
class LogTraceSink final : public TraceSink {
 public:
  LogTraceSink(Logger& logger, int verbosity) : logger_(logger), verbosity_(verbosity) {}
  void Line(std::string_view line) override;

 private:
  Logger& logger_;
  int verbosity_;
};

}  // namespace kai::serve
