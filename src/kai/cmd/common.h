#pragma once
// What every command's driver shares: the bad-input exit, the clock flag, the debug trace and
// the one stop-signal handler.
#include <optional>
#include <string>
#include <vector>

#include "kai/usage/usage_store.h"
#include "kai/util/time.h"

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

// KAI_DEBUG=1: the disruptive actions' search traced on stderr; otherwise null.
TraceSink* DebugTrace();

// SIGTERM and SIGINT call `stop` (a component's stop request: async-signal-safe).
void StopOnSignals(void (*stop)());

}  // namespace kai::cmd
