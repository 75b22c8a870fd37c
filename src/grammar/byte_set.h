// A set of byte values (256 bits): the terminals of a grammar over bytes.
#pragma once
#include <array>
#include <cstdint>

namespace difftx::grammar {

struct ByteSet {
  std::array<uint64_t, 4> words{};

  static ByteSet of(uint8_t b) {
    ByteSet s;
    s.add(b);
    return s;
  }
  static ByteSet range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.add_range(lo, hi);
    return s;
  }
  bool has(uint8_t b) const { return (words[b >> 6] >> (b & 63)) & 1; }
  void add(uint8_t b) { words[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool empty() const { return (words[0] | words[1] | words[2] | words[3]) == 0; }
  int count() const {
    int n = 0;
    for (uint64_t w : words) n += __builtin_popcountll(w);
    return n;
  }
  bool operator==(const ByteSet&) const = default;
};

}  // namespace difftx::grammar
