#pragma once
// Labels: a string-to-string map for labels, annotations and selectors, stored as one heap block
// of entries sorted by key (keys interned: they repeat across objects). Objects carry a handful
// of labels, so a flat block is smaller than a tree (40 bytes an entry against a 112-byte node
// plus strings) and as fast to search; the map itself is one pointer (null while empty). It
// offers the subset of the std::map API the code uses; iteration is in key order, as a
// std::map's, which outputs and tie-breakers depend on.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "kai/core/util/interned_string.h"

namespace kai {

class Labels {
 public:
  using key_type = InternedString;
  using mapped_type = std::string;
  using value_type = std::pair<InternedString, std::string>;
  // Keys are immutable through iterators; values change through operator[] / insert_or_assign.
  using const_iterator = const value_type*;
  using iterator = const_iterator;

  Labels() = default;
  // Like std::map: of equal keys, the first one listed is kept.
  Labels(std::initializer_list<value_type> entries);
  Labels(const Labels& o);
  Labels(Labels&& o) noexcept : block_(std::exchange(o.block_, nullptr)) {}
  Labels& operator=(const Labels& o);
  Labels& operator=(Labels&& o) noexcept;
  ~Labels() { Release(); }

  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  size_t size() const { return block_ ? block_->size : 0; }
  bool empty() const { return size() == 0; }
  size_t capacity() const { return block_ ? block_->capacity : 0; }
  void reserve(size_t n) {
    if (n > capacity()) Reallocate(n);
  }
  void clear() { Release(); }
  // Bytes of the one heap block (header and entries; 0 while none), for memory accounting.
  size_t BlockBytes() const {
    return block_ ? sizeof(Header) + capacity() * sizeof(value_type) : 0;
  }

  const_iterator find(std::string_view key) const {
    const size_t i = LowerBound(key);
    return i < size() && data()[i].first == key ? data() + i : end();
  }
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`; throws std::out_of_range when absent (as std::map::at).
  const std::string& at(std::string_view key) const;

  // Inserts when `key` is absent; returns the entry of `key` and whether it was inserted.
  template <class V>
  std::pair<const_iterator, bool> emplace(InternedString key, V&& value) {
    const size_t i = LowerBound(key.view());
    if (i < size() && data()[i].first == key) return {data() + i, false};
    return {InsertAt(i, std::move(key), std::string(std::forward<V>(value))), true};
  }
  template <class V>
  std::pair<const_iterator, bool> insert_or_assign(InternedString key, V&& value) {
    const size_t i = LowerBound(key.view());
    if (i < size() && data()[i].first == key) {
      data()[i].second = std::forward<V>(value);
      return {data() + i, false};
    }
    return {InsertAt(i, std::move(key), std::string(std::forward<V>(value))), true};
  }
  // The value of `key`, inserted empty when absent.
  std::string& operator[](std::string_view key);
  size_t erase(std::string_view key);

  friend bool operator==(const Labels& a, const Labels& b);

 private:
  // The block: this header, then `capacity` entries of which the first `size` are constructed.
  struct Header {
    uint32_t size = 0;
    uint32_t capacity = 0;
  };
  static_assert(sizeof(Header) % alignof(value_type) == 0);

  value_type* data() const;
  size_t LowerBound(std::string_view key) const;
  value_type* InsertAt(size_t i, InternedString key, std::string value);
  void Reallocate(size_t capacity);
  void Release();

  Header* block_ = nullptr;
};

}  // namespace kai
