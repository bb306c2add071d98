#pragma once
// Operational errors travel as values (docs/design.md rule 2): exceptions only at the process edge.
// Result<T> is the one error type of libkai's fallible calls (a value, or an Error with a
// human-readable message); Status is a Result without a value. A call that finds several
// problems at once (a manifest's every bad field) returns one Error listing them, one per line.
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kai {

struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(std::move(e)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A fallible call with no value: ok, or an Error.
using Status = Result<std::monostate>;
inline Status Ok() { return std::monostate{}; }

// Problems found together: Ok when there are none, else one Error listing them one per line.
inline Status Problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return Ok();
  std::string message;
  for (const std::string& p : problems) message += (message.empty() ? "" : "\n") + p;
  return Error{std::move(message)};
}

// The problems a Status lists (none when it is ok), one per line of its message.
inline std::vector<std::string> ProblemsOf(const Status& s) {
  std::vector<std::string> out;
  if (s.ok()) return out;
  std::string_view rest = s.error().message;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    out.emplace_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace kai
