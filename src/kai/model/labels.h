#pragma once
// Labels: a string-to-string map for labels, annotations and selectors, stored as a vector sorted
// by key (keys interned: they repeat across objects). Objects carry a handful of labels, so a
// flat vector is smaller than a tree (40 bytes an entry against a 112-byte node plus strings) and
// as fast to search. It offers the subset of the std::map API the code uses; iteration is in key
// order, as a std::map's, which outputs and tie-breakers depend on.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kai/util/interned_string.h"

namespace kai {

class Labels {
 public:
  using key_type = InternedString;
  using mapped_type = std::string;
  using value_type = std::pair<InternedString, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;
  using iterator = const_iterator;  // keys are immutable; values change through operator[]

  Labels() = default;
  // Like std::map: of equal keys, the first one listed is kept.
  Labels(std::initializer_list<value_type> entries) {
    entries_.reserve(entries.size());
    for (const value_type& e : entries) emplace(e.first, e.second);
  }

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void reserve(size_t n) { entries_.reserve(n); }
  void clear() { entries_.clear(); }
  // Heap bytes held by the entry array (capacity, for memory accounting).
  size_t capacity() const { return entries_.capacity(); }

  const_iterator find(std::string_view key) const {
    auto it = LowerBound(key);
    return it != entries_.end() && it->first == key ? const_iterator(it) : end();
  }
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`; throws std::out_of_range when absent (as std::map::at).
  const std::string& at(std::string_view key) const;

  // Inserts when `key` is absent; returns the entry of `key` and whether it was inserted.
  template <class V>
  std::pair<const_iterator, bool> emplace(InternedString key, V&& value) {
    auto it = LowerBound(key.view());
    if (it != entries_.end() && it->first == key) return {it, false};
    return {entries_.emplace(it, key, std::string(std::forward<V>(value))), true};
  }
  template <class V>
  std::pair<const_iterator, bool> insert_or_assign(InternedString key, V&& value) {
    auto it = LowerBound(key.view());
    if (it != entries_.end() && it->first == key) {
      it->second = std::forward<V>(value);
      return {it, false};
    }
    return {entries_.emplace(it, key, std::string(std::forward<V>(value))), true};
  }
  // The value of `key`, inserted empty when absent.
  std::string& operator[](std::string_view key) {
    auto it = LowerBound(key);
    if (it == entries_.end() || it->first != key) it = entries_.emplace(it, key, std::string());
    return it->second;
  }
  size_t erase(std::string_view key) {
    auto it = LowerBound(key);
    if (it == entries_.end() || it->first != key) return 0;
    entries_.erase(it);
    return 1;
  }

  friend bool operator==(const Labels&, const Labels&) = default;

 private:
  std::vector<value_type>::iterator LowerBound(std::string_view key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const value_type& e, std::string_view k) { return e.first < k; });
  }
  std::vector<value_type>::const_iterator LowerBound(std::string_view key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const value_type& e, std::string_view k) { return e.first < k; });
  }

  std::vector<value_type> entries_;
};

}  // namespace kai
