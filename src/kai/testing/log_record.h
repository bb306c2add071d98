#pragma once
// What a daemon's console log record holds after its time: `LEVEL<TAB>component<TAB>message`
// (serve/log.h), for tests that read a kai process's stderr.
#include <regex>
#include <string>

namespace kai::testutil {

// The record of `line` (its newline kept) without its time, or "" when the line is not a console
// record.
inline std::string WithoutTime(const std::string& line) {
  static const std::regex record(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\t([\s\S]*))");
  std::smatch m;
  if (!std::regex_match(line, m, record)) return "";
  return m[1];
}

}  // namespace kai::testutil
