// Carves named parts out of one block of floats: reserve() returns each part's offset, every
// part rounded up to whole 16-float (64-byte) lines so that every part starts cache-line and
// AVX-512 aligned in an aligned block (Buffer, buffer.h).
#pragma once
#include <cstdint>

namespace difftx {

constexpr int64_t kArenaAlignFloats = 16;

// floats rounded up to whole 64-byte lines.
constexpr int64_t arena_rounded(int64_t floats) {
  return (floats + kArenaAlignFloats - 1) / kArenaAlignFloats * kArenaAlignFloats;
}

class ArenaPlan {
 public:
  int64_t reserve(int64_t floats) {
    const int64_t at = size_;
    size_ += arena_rounded(floats);
    return at;
  }
  int64_t size() const { return size_; }

 private:
  int64_t size_ = 0;
};

}  // namespace difftx
