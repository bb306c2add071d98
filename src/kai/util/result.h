#pragma once
// Operational errors travel as values (DESIGN.md rule 2): exceptions only at the process edge.
// Result<T> is the one error type of libkai's fallible calls (a value, or an Error with a
// human-readable message). Not yet converted: the decoders' error lists (k8s/decode.h returns
// every error of a document as std::vector<std::string>, joined by CheckDecoded).
#include <string>
#include <utility>
#include <variant>

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

}  // namespace kai
