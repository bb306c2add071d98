#include "kai/util/interned_string.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace kai {
namespace {

struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};

struct Pool {
  std::mutex mu;
  // Nodes of an unordered_set never move, so the pointers handed out stay valid.
  std::unordered_set<std::string, ViewHash, std::equal_to<>> strings;
};

// Never destroyed: interned strings may be read by static destructors elsewhere.
Pool& GlobalPool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

const std::string& InternedString::Empty() {
  static const std::string* empty = new std::string();
  return *empty;
}

const std::string* InternedString::Intern(std::string_view s) {
  if (s.empty()) return &Empty();
  Pool& pool = GlobalPool();
  std::lock_guard<std::mutex> lock(pool.mu);
  auto it = pool.strings.find(s);
  if (it == pool.strings.end()) it = pool.strings.emplace(s).first;
  return &*it;
}

size_t InternedString::PoolSize() {
  Pool& pool = GlobalPool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.strings.size();
}

std::string operator+(const InternedString& a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + b.size());
  out.append(a.view()).append(b);
  return out;
}
std::string operator+(const InternedString& a, const std::string& b) {
  return a + std::string_view(b);
}
std::string operator+(const InternedString& a, const char* b) { return a + std::string_view(b); }
std::string operator+(std::string a, const InternedString& b) { return a.append(b.view()); }
std::string operator+(const char* a, const InternedString& b) {
  return std::string(a).append(b.view());
}

std::ostream& operator<<(std::ostream& os, const InternedString& s) { return os << s.view(); }

}  // namespace kai
