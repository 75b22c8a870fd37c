// An owning, 64-byte aligned, zero-initialised array: the arenas that own parameters,
// gradients, optimizer state and activations. Views elsewhere borrow raw pointers into it.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace difftx {

template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t n) { resize(n); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~Buffer() { std::free(data_); }

  // Reallocates to n zeroed elements (contents are not kept).
  void resize(int64_t n) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (n <= 0) return;
    const size_t bytes = (static_cast<size_t>(n) * sizeof(T) + 63) / 64 * 64;
    data_ = static_cast<T*>(std::aligned_alloc(64, bytes));
    if (!data_) throw std::bad_alloc();
    std::memset(data_, 0, bytes);
    size_ = n;
  }
  void zero() { if (data_) std::memset(data_, 0, static_cast<size_t>(size_) * sizeof(T)); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace difftx
