#pragma once
// Go's time.Duration text, exactly: the PodGroup fields spec.preemptionDelay and
// spec.stalenessGracePeriod are metav1.Duration, which KAI parses with time.ParseDuration and the
// API server stores as Duration.String().
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kai::podgrouper {

// time.ParseDuration: "300ms", "-1.5h", "2h45m", "0"; nanoseconds, nullopt when invalid or out of
// range.
std::optional<int64_t> ParseGoDurationNanos(std::string_view text);
// Duration.String(): "1h2m3.5s", "500ms", "0s".
std::string FormatGoDuration(int64_t nanos);

}  // namespace kai::podgrouper
