#pragma once
// Environment variables set (or unset) for one test's scope, restored on destruction. For the
// tests of code that reads the process environment at its edge (KAI_NVML_LIBRARY, the fake
// NVML's FAKE_NVML_*, POD_NAME). Not thread-safe: tests using it run their threads after it is
// set and join them before it is destroyed.
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kai::testutil {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) Apply(it->first, it->second);
  }

  // Sets `name` to `value`; std::nullopt unsets it.
  ScopedEnv& Set(const std::string& name, std::optional<std::string> value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    Apply(name, value);
    return *this;
  }
  ScopedEnv& Unset(const std::string& name) { return Set(name, std::nullopt); }

 private:
  static void Apply(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace kai::testutil
