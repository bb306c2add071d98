#pragma once
// CompactVector<T>: a vector for fields that are usually empty (a pod's affinity terms,
// tolerations, GPU groups). It is one pointer wide and allocates nothing while empty; once an
// element is added it holds a std::vector<T> on the heap. It reads like a std::vector (iteration,
// size, empty, indexing) and converts implicitly to const std::vector<T>&.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace kai {

template <class T>
class CompactVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  CompactVector() = default;
  CompactVector(std::vector<T> v) { Assign(std::move(v)); }  // NOLINT: implicit by design
  CompactVector(std::initializer_list<T> v) { Assign(std::vector<T>(v)); }
  CompactVector(const CompactVector& o) { Assign(o.vec()); }
  CompactVector(CompactVector&&) noexcept = default;
  CompactVector& operator=(const CompactVector& o) {
    if (this != &o) Assign(o.vec());
    return *this;
  }
  CompactVector& operator=(CompactVector&&) noexcept = default;

  // The elements as a std::vector (a shared empty one while there are none).
  const std::vector<T>& vec() const { return v_ ? *v_ : EmptyVector(); }
  operator const std::vector<T>&() const { return vec(); }  // NOLINT: implicit by design
  // The vector to modify, allocated on first use.
  std::vector<T>& Mutable() {
    if (!v_) v_ = std::make_unique<std::vector<T>>();
    return *v_;
  }

  bool empty() const { return !v_ || v_->empty(); }
  size_t size() const { return v_ ? v_->size() : 0; }
  T* data() { return v_ ? v_->data() : nullptr; }
  const T* data() const { return v_ ? v_->data() : nullptr; }
  iterator begin() { return data(); }
  iterator end() { return data() + size(); }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  T& operator[](size_t i) { return (*v_)[i]; }
  const T& operator[](size_t i) const { return (*v_)[i]; }
  T& front() { return v_->front(); }
  const T& front() const { return v_->front(); }
  T& back() { return v_->back(); }
  const T& back() const { return v_->back(); }

  void push_back(const T& x) { Mutable().push_back(x); }
  void push_back(T&& x) { Mutable().push_back(std::move(x)); }
  template <class... A>
  T& emplace_back(A&&... a) {
    return Mutable().emplace_back(std::forward<A>(a)...);
  }
  void clear() { v_.reset(); }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return a.vec() == b.vec();
  }
  friend bool operator==(const CompactVector& a, const std::vector<T>& b) { return a.vec() == b; }

 private:
  static const std::vector<T>& EmptyVector() {
    static const std::vector<T> empty;
    return empty;
  }
  void Assign(std::vector<T> v) {
    if (v.empty()) {
      v_.reset();
    } else {
      v_ = std::make_unique<std::vector<T>>(std::move(v));
    }
  }

  std::unique_ptr<std::vector<T>> v_;
};

}  // namespace kai
