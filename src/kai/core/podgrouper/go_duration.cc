#include "kai/core/podgrouper/go_duration.h"

#include <cstdlib>

namespace kai::podgrouper {
namespace {

constexpr int64_t kMicro = 1000, kMilli = 1000 * kMicro, kSecond = 1000 * kMilli;
constexpr int64_t kMinute = 60 * kSecond, kHour = 60 * kMinute;

std::optional<int64_t> UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return kMicro;  // µs, μs
  if (unit == "ms") return kMilli;
  if (unit == "s") return kSecond;
  if (unit == "m") return kMinute;
  if (unit == "h") return kHour;
  return std::nullopt;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The digits of v / 10^prec after the point, trailing zeros dropped (Go's fmtFrac), then v's
// whole part.
std::string WithFraction(uint64_t v, int prec) {
  std::string frac;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const char digit = static_cast<char>('0' + v % 10);
    print = print || digit != '0';
    if (print) frac.insert(frac.begin(), digit);
    v /= 10;
  }
  std::string out = std::to_string(v);
  if (print) out += "." + frac;
  return out;
}

}  // namespace

std::optional<int64_t> ParseGoDurationNanos(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  unsigned __int128 total = 0;
  const unsigned __int128 limit = static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
  while (!s.empty()) {
    unsigned __int128 whole = 0, frac = 0, scale = 1;
    size_t i = 0;
    bool digits = false;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      whole = whole * 10 + static_cast<unsigned>(s[i] - '0');
      if (whole > limit) return std::nullopt;
      digits = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      for (; i < s.size() && IsDigit(s[i]); ++i) {
        if (scale < static_cast<unsigned __int128>(1e18)) {  // further digits cannot matter
          frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
          scale *= 10;
        }
        digits = true;
      }
    }
    if (!digits) return std::nullopt;
    size_t j = i;
    while (j < s.size() && !IsDigit(s[j]) && s[j] != '.') ++j;
    const auto unit = UnitNanos(s.substr(i, j - i));
    if (!unit) return std::nullopt;
    const auto u = static_cast<unsigned __int128>(*unit);
    total += whole * u + frac * u / scale;
    if (total > limit) return std::nullopt;
    s.remove_prefix(j);
  }
  if (negative) return total == limit ? INT64_MIN : -static_cast<int64_t>(total);
  return static_cast<int64_t>(total);
}

std::string FormatGoDuration(int64_t nanos) {
  if (nanos == 0) return "0s";
  const bool negative = nanos < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string out;
  if (u < static_cast<uint64_t>(kSecond)) {
    if (u < static_cast<uint64_t>(kMicro)) {
      out = std::to_string(u) + "ns";
    } else if (u < static_cast<uint64_t>(kMilli)) {
      out = WithFraction(u, 3) + "\xC2\xB5s";
    } else {
      out = WithFraction(u, 6) + "ms";
    }
  } else {
    const std::string seconds = WithFraction(u % (60 * static_cast<uint64_t>(kSecond)), 9) + "s";
    u /= 60 * static_cast<uint64_t>(kSecond);
    if (u == 0) {
      out = seconds;
    } else if (u < 60) {
      out = std::to_string(u) + "m" + seconds;
    } else {
      out = std::to_string(u / 60) + "h" + std::to_string(u % 60) + "m" + seconds;
    }
  }
  return negative ? "-" + out : out;
}

}  // namespace kai::podgrouper
