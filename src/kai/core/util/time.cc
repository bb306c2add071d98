#include "kai/core/util/time.h"

#include <chrono>

#include <cctype>
#include <charconv>
#include <cstdio>

namespace kai {
namespace {

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool ReadInt(std::string_view s, size_t pos, size_t len, int& out) {
  if (pos + len > s.size()) return false;
  for (size_t i = pos; i < pos + len; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  std::from_chars(s.data() + pos, s.data() + pos + len, out);
  return true;
}

std::optional<int64_t> ParseOffsetSeconds(std::string_view s, size_t pos) {
  if (pos >= s.size()) return std::nullopt;
  if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) return 0;
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  int hh = 0, mm = 0;
  if (!ReadInt(s, pos + 1, 2, hh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
      !ReadInt(s, pos + 4, 2, mm) || pos + 6 != s.size()) {
    return std::nullopt;
  }
  const int64_t off = hh * 3600 + mm * 60;
  return s[pos] == '+' ? off : -off;
}

}  // namespace

std::optional<UnixSeconds> ParseRfc3339(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!ReadInt(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !ReadInt(s, 5, 2, mo) ||
      s[7] != '-' || !ReadInt(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !ReadInt(s, 11, 2, h) || s[13] != ':' || !ReadInt(s, 14, 2, mi) || s[16] != ':' ||
      !ReadInt(s, 17, 2, se)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == start) return std::nullopt;
  }
  const auto offset = ParseOffsetSeconds(s, pos);
  if (!offset) return std::nullopt;
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - *offset;
}

std::string FormatRfc3339(UnixSeconds t) {
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400;
  // Civil from days (inverse of DaysFromCivil).
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

std::string FormatRfc3339WithFraction(UnixSeconds t, int64_t fraction, int digits) {
  std::string out = FormatRfc3339(t);
  out.pop_back();  // the Z
  char buf[32];
  std::snprintf(buf, sizeof buf, ".%0*lldZ", digits, static_cast<long long>(fraction));
  return out + buf;
}

namespace {

// Sums the duration's terms in seconds (a double, as Go's parser accumulates in one number).
std::optional<double> GoDurationSeconds(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  size_t pos = 0;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    pos = 1;
  }
  if (s.substr(pos) == "0") return 0.0;
  double total = 0;
  bool any = false;
  while (pos < s.size()) {
    const size_t start = pos;
    while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) {
      ++pos;
    }
    if (pos == start) return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data() + start, s.data() + pos, value);
    if (ec != std::errc() || end != s.data() + pos) return std::nullopt;
    const size_t ustart = pos;
    while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) ++pos;
    const std::string_view unit = s.substr(ustart, pos - ustart);
    double scale;
    if (unit == "h")
      scale = 3600;
    else if (unit == "m")
      scale = 60;
    else if (unit == "s")
      scale = 1;
    else if (unit == "ms")
      scale = 1e-3;
    else if (unit == "us" || unit == "µs")
      scale = 1e-6;
    else if (unit == "ns")
      scale = 1e-9;
    else
      return std::nullopt;
    total += value * scale;
    any = true;
  }
  if (!any || !(total < 9.2e15)) return std::nullopt;  // also rejects NaN and overflow
  return negative ? -total : total;
}

}  // namespace

std::optional<int64_t> ParseGoDuration(std::string_view s) {
  const auto seconds = GoDurationSeconds(s);
  if (!seconds) return std::nullopt;
  return static_cast<int64_t>(*seconds);
}

std::optional<int64_t> ParseGoDurationMillis(std::string_view s) {
  const auto seconds = GoDurationSeconds(s);
  if (!seconds) return std::nullopt;
  return static_cast<int64_t>(*seconds * 1000);
}

UnixSeconds WallClockSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kai
