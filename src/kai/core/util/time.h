#pragma once
// Time is plain seconds since the Unix epoch; the clock is always injected (docs/design.md rule 4).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kai {

using UnixSeconds = int64_t;

// Parses RFC 3339 ("2025-01-01T12:00:00Z", fractional seconds and offsets accepted).
std::optional<UnixSeconds> ParseRfc3339(std::string_view text);
std::string FormatRfc3339(UnixSeconds t);
// The same with a fraction of `digits` decimal digits (0 <= fraction < 10^digits):
// FormatRfc3339WithFraction(t, 7, 3) is "...:05.007Z" (a log time), with 6 digits a MicroTime.
std::string FormatRfc3339WithFraction(UnixSeconds t, int64_t fraction, int digits);
// Parses a Go duration ("60s", "1m30s", "2h", "-1s", "0"); returns seconds (fractions truncated).
std::optional<int64_t> ParseGoDuration(std::string_view text);
// The same in milliseconds (fractions truncated): "250ms" is 250, "1.5s" is 1500.
std::optional<int64_t> ParseGoDurationMillis(std::string_view text);
// The system clock, for the front ends that inject it (the core never reads it).
UnixSeconds WallClockSeconds();

}  // namespace kai
