#include "kai/core/util/interned_string.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace kai {
namespace {

using Entry = InternedString::Entry;

struct EntryHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  size_t operator()(const Entry& e) const noexcept { return (*this)(e.text); }
};

struct EntryEqual {
  using is_transparent = void;
  bool operator()(const Entry& a, const Entry& b) const noexcept { return a.text == b.text; }
  bool operator()(std::string_view a, const Entry& b) const noexcept { return a == b.text; }
  bool operator()(const Entry& a, std::string_view b) const noexcept { return a.text == b; }
};

struct Pool {
  std::mutex mu;
  // Nodes of an unordered_set never move, so the entries handed out stay where they are until
  // erased (when their count reaches zero).
  std::unordered_set<Entry, EntryHash, EntryEqual> entries;
};

// Never destroyed: handles in static objects are dropped after main returns.
Pool& GlobalPool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

KAI_EMPTY_ENTRY_CONSTINIT const InternedString::Entry InternedString::kEmpty;

const InternedString::Entry* InternedString::Intern(std::string_view s) {
  if (s.empty()) return EmptyEntry();
  Pool& pool = GlobalPool();
  std::lock_guard<std::mutex> lock(pool.mu);
  auto it = pool.entries.find(s);
  if (it == pool.entries.end()) it = pool.entries.emplace(s).first;
  it->refs.fetch_add(1, std::memory_order_relaxed);
  return &*it;
}

// The last handle may be going: the count leaves 1 only here, under the lock that Intern holds
// while it finds entries, so a count seen at zero stays there and the entry can go.
void InternedString::Release(const Entry* e) {
  Pool& pool = GlobalPool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (e->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  pool.entries.erase(pool.entries.find(std::string_view(e->text)));
}

size_t InternedString::PoolSize() {
  Pool& pool = GlobalPool();
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.entries.size();
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
