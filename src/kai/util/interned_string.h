#pragma once
// InternedString: an immutable string held once per process in a pool that is never freed, for
// the highly repetitive strings of the object model (kinds, namespaces, phases, scheduler and
// priority class names, queue names, label and annotation keys). It is one pointer wide (a
// std::string is 32 bytes, plus a heap block past 15 characters); copies are pointer copies and
// equality is pointer equality. It converts implicitly to const std::string& and
// std::string_view, so readers use it as a string; views into it stay valid for the life of the
// process. Insertion into the pool is thread-safe.
//
// Only strings of bounded variety belong here (the pool only grows): names of things that are
// repeated across many objects, never per-object names or uids.
#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kai {

class InternedString {
 public:
  InternedString() : s_(&Empty()) {}
  InternedString(std::string_view s) : s_(Intern(s)) {}  // NOLINT: implicit by design
  InternedString(const std::string& s) : s_(Intern(s)) {}
  InternedString(const char* s) : s_(Intern(s)) {}

  const std::string& str() const { return *s_; }
  std::string_view view() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT: implicit by design
  operator std::string_view() const { return *s_; }    // NOLINT: implicit by design

  bool empty() const { return s_->empty(); }
  void clear() { s_ = &Empty(); }
  size_t size() const { return s_->size(); }
  const char* c_str() const { return s_->c_str(); }
  const char* data() const { return s_->data(); }
  std::string::const_iterator begin() const { return s_->begin(); }
  std::string::const_iterator end() const { return s_->end(); }
  size_t find(std::string_view p, size_t pos = 0) const { return view().find(p, pos); }
  size_t rfind(std::string_view p, size_t pos = std::string::npos) const {
    return view().rfind(p, pos);
  }
  bool starts_with(std::string_view p) const { return view().starts_with(p); }
  bool ends_with(std::string_view p) const { return view().ends_with(p); }

  // Equal strings share one pooled copy, so equality is identity.
  friend bool operator==(const InternedString& a, const InternedString& b) { return a.s_ == b.s_; }
  friend bool operator==(const InternedString& a, const std::string& b) { return *a.s_ == b; }
  friend bool operator==(const InternedString& a, std::string_view b) { return *a.s_ == b; }
  friend bool operator==(const InternedString& a, const char* b) { return *a.s_ == b; }
  // Ordering is by content (as std::string), never by address.
  friend std::strong_ordering operator<=>(const InternedString& a, const InternedString& b) {
    return a.s_ == b.s_ ? std::strong_ordering::equal : a.view() <=> b.view();
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

  // Number of distinct strings pooled so far (for tests and memory accounting).
  static size_t PoolSize();

 private:
  static const std::string& Empty();
  static const std::string* Intern(std::string_view s);
  const std::string* s_;
};

std::ostream& operator<<(std::ostream& os, const InternedString& s);

}  // namespace kai

template <>
struct std::hash<kai::InternedString> {
  size_t operator()(const kai::InternedString& s) const noexcept {
    return std::hash<std::string_view>()(s.view());
  }
};
