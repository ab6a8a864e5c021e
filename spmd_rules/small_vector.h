// A vector with inline storage and a fixed capacity: rule inference builds many tiny
// lists (dims of a tensor, mesh dims of a split) and must not touch the heap for them.
#pragma once
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <new>
#include <string>
#include <type_traits>

namespace spmd {

// Storage is left uninitialised until used (a rule call builds several of these and most stay
// nearly empty), so T must be trivially destructible.
template <typename T, std::size_t N>
class SmallVec {
  static_assert(std::is_trivially_destructible<T>::value, "SmallVec holds plain data only");

 public:
  SmallVec() {}
  SmallVec(const SmallVec& o) : size_(o.size_) { std::uninitialized_copy(o.begin(), o.end(), begin()); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      size_ = o.size_;
      std::uninitialized_copy(o.begin(), o.end(), begin());
    }
    return *this;
  }
  SmallVec(std::initializer_list<T> init) {
    for (const T& v : init) push_back(v);
  }
  template <typename It>
  SmallVec(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  void push_back(const T& v) {
    if (size_ >= N) throw std::length_error("spmdkit: more than " + std::to_string(N) + " entries");
    new (&data()[size_++]) T(v);
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(std::size_t n, const T& fill = T()) {
    if (n > N) throw std::length_error("spmdkit: more than " + std::to_string(N) + " entries");
    for (std::size_t i = size_; i < n; ++i) new (&data()[i]) T(fill);
    size_ = n;
  }
  void insert(std::size_t pos, const T& v) {
    push_back(v);
    std::rotate(begin() + pos, end() - 1, end());
  }
  void erase(std::size_t pos) {
    std::rotate(begin() + pos, begin() + pos + 1, end());
    --size_;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  static constexpr std::size_t capacity() { return N; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  bool contains(const T& v) const { return std::find(begin(), end(), v) != end(); }
  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVec& a, const SmallVec& b) { return !(a == b); }

 private:
  T* data() { return std::launder(reinterpret_cast<T*>(storage_)); }
  const T* data() const { return std::launder(reinterpret_cast<const T*>(storage_)); }

  std::size_t size_ = 0;
  alignas(T) unsigned char storage_[N * sizeof(T)];
};

}  // namespace spmd
