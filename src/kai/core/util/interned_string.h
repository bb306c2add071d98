#pragma once
// InternedString: an immutable string held once per process in a pool, for the repetitive strings
// of the object model (kinds, namespaces, phases, scheduler, priority class, queue and node names,
// label and annotation keys). It is one pointer wide (a std::string is 32 bytes, plus a heap block
// past 15 characters); equality is pointer equality. It converts implicitly to
// const std::string& and std::string_view, so readers use it as a string.
//
// Reclaimable: a pooled string is reference-counted and leaves the pool when its last handle
// dies, so a process that runs for months (the scheduler, whose nodes, namespaces and queues come
// and go) keeps only the strings its live objects use (bench/RESULTS.md, "Soak: memory under
// churn"). Why reference counts and not a periodic rebuild of the pool: a rebuild must find every
// handle (objects of the world, snapshots, the informer's queued deltas, reflector threads in
// the middle of a decode) or give up pointer equality; a count is exact, local and needs no
// stop-the-world. Its cost is on copies and destruction only: an atomic increment per copy, an
// atomic decrement per destruction, and the pool's mutex when a count may reach zero. Moves, reads,
// comparisons and hashing are what they were (the snapshot's hot paths compare by pointer or read
// string_views and never copy handles). The empty string is a static entry outside the pool and
// outside the counting.
//
// Lifetime: a view (std::string_view, const std::string&, c_str()) into an InternedString is
// valid while any handle to the same text lives: the text does not move while pooled. A view
// taken from a temporary handle that nobody else holds dies with it (as with std::string).
//
// Thread safety: interning, copying and dropping handles may happen on any threads at once (the
// informer's reflectors decode concurrently while the scheduler's thread drops objects). The
// count goes from 1 to 0 only under the pool's mutex, and interning (which may take a count from
// 0 to 1 only by finding the entry) holds it too, so an entry is erased only when no handle to it
// exists and none can be made.
#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

// The empty string's entry is constant-initialised, so that InternedStrings of other
// translation units' static objects can point at it before dynamic initialisation. clang 14 (the
// fuzz build) cannot constant-initialise a libstdc++ 12 std::string; there it is initialised
// dynamically, which only its address matters for before main (its text is read later).
#if defined(__clang__) && __clang_major__ < 15
#define KAI_EMPTY_ENTRY_CONSTINIT
#else
#define KAI_EMPTY_ENTRY_CONSTINIT constinit
#endif

namespace kai {

class InternedString {
 public:
  // One pooled text and the number of handles to it.
  struct Entry {
    explicit Entry(std::string_view s) : text(s) {}
    constexpr Entry() = default;
    std::string text;
    mutable std::atomic<uint32_t> refs{0};
  };

  InternedString() noexcept : e_(EmptyEntry()) {}
  InternedString(std::string_view s) : e_(Intern(s)) {}  // NOLINT: implicit by design
  InternedString(const std::string& s) : e_(Intern(s)) {}
  InternedString(const char* s) : e_(Intern(s)) {}
  InternedString(const InternedString& o) noexcept : e_(o.e_) { Retain(e_); }
  InternedString(InternedString&& o) noexcept : e_(std::exchange(o.e_, EmptyEntry())) {}
  InternedString& operator=(const InternedString& o) noexcept {
    if (e_ != o.e_) {
      Retain(o.e_);
      Drop(std::exchange(e_, o.e_));
    }
    return *this;
  }
  InternedString& operator=(InternedString&& o) noexcept {
    if (this != &o) Drop(std::exchange(e_, std::exchange(o.e_, EmptyEntry())));
    return *this;
  }
  ~InternedString() { Drop(e_); }

  const std::string& str() const { return e_->text; }
  std::string_view view() const { return e_->text; }
  operator const std::string&() const { return e_->text; }  // NOLINT: implicit by design
  operator std::string_view() const { return e_->text; }    // NOLINT: implicit by design

  bool empty() const { return e_->text.empty(); }
  void clear() { Drop(std::exchange(e_, EmptyEntry())); }
  size_t size() const { return e_->text.size(); }
  const char* c_str() const { return e_->text.c_str(); }
  const char* data() const { return e_->text.data(); }
  std::string::const_iterator begin() const { return e_->text.begin(); }
  std::string::const_iterator end() const { return e_->text.end(); }
  size_t find(std::string_view p, size_t pos = 0) const { return view().find(p, pos); }
  size_t rfind(std::string_view p, size_t pos = std::string::npos) const {
    return view().rfind(p, pos);
  }
  bool starts_with(std::string_view p) const { return view().starts_with(p); }
  bool ends_with(std::string_view p) const { return view().ends_with(p); }

  // Equal strings share one pooled copy, so equality is identity.
  friend bool operator==(const InternedString& a, const InternedString& b) { return a.e_ == b.e_; }
  friend bool operator==(const InternedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const InternedString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const InternedString& a, const char* b) { return a.str() == b; }
  // Ordering is by content (as std::string), never by address.
  friend std::strong_ordering operator<=>(const InternedString& a, const InternedString& b) {
    return a.e_ == b.e_ ? std::strong_ordering::equal : a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const InternedString& a, const std::string& b) {
    return a.view() <=> std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const InternedString& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::strong_ordering operator<=>(const InternedString& a, const char* b) {
    return a.view() <=> std::string_view(b);
  }

  friend std::string operator+(const InternedString& a, std::string_view b);
  friend std::string operator+(const InternedString& a, const std::string& b);
  friend std::string operator+(const InternedString& a, const char* b);
  friend std::string operator+(std::string a, const InternedString& b);
  friend std::string operator+(const char* a, const InternedString& b);

  // Number of distinct strings pooled now, i.e. with at least one live handle (for tests and
  // memory accounting).
  static size_t PoolSize();
  // Handles to this text (0 for the empty string, which is not counted); for tests.
  uint32_t UseCount() const { return e_->refs.load(std::memory_order_relaxed); }

 private:
  static const Entry* EmptyEntry() { return &kEmpty; }
  static const Entry* Intern(std::string_view s);
  static void Retain(const Entry* e) {
    if (e != EmptyEntry()) e->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // Drops one handle: without the lock while others remain, else under it (Release).
  static void Drop(const Entry* e) {
    if (e == EmptyEntry()) return;
    uint32_t n = e->refs.load(std::memory_order_relaxed);
    while (n > 1) {
      if (e->refs.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
        return;
      }
    }
    Release(e);
  }
  static void Release(const Entry* e);

  static KAI_EMPTY_ENTRY_CONSTINIT const Entry kEmpty;
  const Entry* e_;
};

std::ostream& operator<<(std::ostream& os, const InternedString& s);

}  // namespace kai

template <>
struct std::hash<kai::InternedString> {
  size_t operator()(const kai::InternedString& s) const noexcept {
    return std::hash<std::string_view>()(s.view());
  }
};
