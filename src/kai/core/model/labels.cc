#include "kai/core/model/labels.h"

#include <algorithm>
#include <memory>
#include <new>  // placement new
#include <stdexcept>

namespace kai {

Labels::Labels(std::initializer_list<value_type> entries) {
  reserve(entries.size());
  for (const value_type& e : entries) emplace(e.first, e.second);
}

Labels::Labels(const Labels& o) {
  if (o.empty()) return;
  Reallocate(o.size());
  for (const value_type& e : o) {
    new (data() + block_->size) value_type(e);
    ++block_->size;
  }
}

Labels& Labels::operator=(const Labels& o) {
  if (this != &o) {
    Labels copy(o);
    *this = std::move(copy);
  }
  return *this;
}

Labels& Labels::operator=(Labels&& o) noexcept {
  if (this != &o) {
    Release();
    block_ = std::exchange(o.block_, nullptr);
  }
  return *this;
}

Labels::value_type* Labels::data() const {
  return block_ ? reinterpret_cast<value_type*>(block_ + 1) : nullptr;
}

size_t Labels::LowerBound(std::string_view key) const {
  const value_type* it = std::lower_bound(
      begin(), end(), key, [](const value_type& e, std::string_view k) { return e.first < k; });
  return static_cast<size_t>(it - begin());
}

const std::string& Labels::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) throw std::out_of_range("Labels::at: no key " + std::string(key));
  return it->second;
}

std::string& Labels::operator[](std::string_view key) {
  const size_t i = LowerBound(key);
  if (i < size() && data()[i].first == key) return data()[i].second;
  return InsertAt(i, key, std::string())->second;
}

size_t Labels::erase(std::string_view key) {
  const size_t i = LowerBound(key);
  if (i >= size() || data()[i].first != key) return 0;
  value_type* d = data();
  std::move(d + i + 1, d + size(), d + i);
  std::destroy_at(d + size() - 1);
  --block_->size;
  return 1;
}

Labels::value_type* Labels::InsertAt(size_t i, InternedString key, std::string value) {
  if (size() == capacity()) Reallocate(std::max<size_t>(1, 2 * capacity()));
  value_type* d = data();
  const size_t n = size();
  if (i == n) {
    new (d + n) value_type(std::move(key), std::move(value));
  } else {
    // Open a slot at i: the last entry moves into the raw slot, the rest shift right by one.
    new (d + n) value_type(std::move(d[n - 1]));
    std::move_backward(d + i, d + n - 1, d + n);
    d[i] = value_type(std::move(key), std::move(value));
  }
  ++block_->size;
  return d + i;
}

void Labels::Reallocate(size_t capacity) {
  void* raw = ::operator new(sizeof(Header) + capacity * sizeof(value_type));
  Header* fresh = new (raw) Header{0, static_cast<uint32_t>(capacity)};
  value_type* to = reinterpret_cast<value_type*>(fresh + 1);
  const size_t n = size();
  value_type* from = data();
  for (size_t i = 0; i < n; ++i) new (to + i) value_type(std::move(from[i]));
  fresh->size = static_cast<uint32_t>(n);
  Release();
  block_ = fresh;
}

void Labels::Release() {
  if (!block_) return;
  std::destroy_n(data(), size());
  ::operator delete(block_);
  block_ = nullptr;
}

bool operator==(const Labels& a, const Labels& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace kai
