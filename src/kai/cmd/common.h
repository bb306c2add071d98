#pragma once
// What every command's driver shares: the bad-input exit, the clock flag, the debug trace and
// the one stop-signal handler.
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kai/cmd/command.h"
#include "kai/cmd/flags.h"
#include "kai/core/usage/usage_store.h"
#include "kai/core/util/time.h"
#include "kai/kube/serve/log.h"

namespace kai {
class TraceSink;
namespace sim {
struct SimulateOptions;
}
}  // namespace kai

namespace kai::cmd {

inline constexpr int kExitBadInput = 2;

// Prints `kai: message` on stderr; returns kExitBadInput.
int Fail(const std::string& message);

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> SplitCommas(const std::string& s);

// --now: "" is the wall clock; otherwise RFC 3339. False on a malformed time.
bool ParseNow(const std::string& text, UnixSeconds& now);
std::string NowError(const std::string& text);

// Sets options.now and, with a usage file, loads it into `usage` and points options at it.
std::optional<std::string> ReadClockAndUsage(const std::string& now, const std::string& usage_file,
                                             sim::SimulateOptions& options,
                                             std::optional<usage::UsageStore>& usage);

// --fips-mode (FipsModeRequested): the process's TLS through OpenSSL's FIPS provider only, set
// before the command runs. Prints `kai: FIPS mode: ...` (what is missing and how to get it) and
// returns false where the provider is not available; true without the flag.
bool StartFipsMode();

// KAI_DEBUG=1: the disruptive actions' search traced on stderr; otherwise null.
TraceSink* DebugTrace();

// A daemon's logging: its logger on stderr, the stream its component writes its lines to, and
// the disruptive actions' search trace (KAI_DEBUG=1 at any verbosity, or --v 5 and more).
class DaemonLog {
 public:
  // The log of `component` as the flags set it; an error names the flag.
  static Result<std::unique_ptr<DaemonLog>> Open(const LogFlags& flags, std::string component);
  DaemonLog(std::string component, const serve::LogOptions& options);

  std::ostream& stream() { return stream_; }
  TraceSink* trace() { return trace_.get(); }

 private:
  serve::Logger logger_;
  serve::LogStream stream_;
  std::unique_ptr<serve::LogTraceSink> trace_;
};

// SIGTERM and SIGINT call `stop` (a component's stop request: async-signal-safe).
void StopOnSignals(void (*stop)());

// A long-running component's command (kai scheduler, binder, podgrouper, ...), the same start
// for each: its logger from the logging flags, the command's own flags applied, KAI's flags that
// kai only accepts checked and warned about, SIGTERM and SIGINT stopping the process's
// components (runtime::RequestProcessStop), then the component on the runtime.
class DaemonCommand : public Command {
 public:
  int Run() final;

 protected:
  explicit DaemonCommand(std::string component) : component_(std::move(component)) {}
  // The flags that need more than a copy; an error names the flag.
  virtual std::optional<std::string> Apply() { return std::nullopt; }
  // Runs the component, logging to `log`; returns the process's exit status.
  virtual int RunComponent(DaemonLog& log) = 0;

  LogFlags log_;
  KaiOnlyFlags kai_;

 private:
  std::string component_;
};

}  // namespace kai::cmd
