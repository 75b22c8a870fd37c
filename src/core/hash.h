// A fast 64-bit hash of a byte range (not cryptographic): for telling, across processes,
// whether two buffers or two batches are the same.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace difftx {

// splitmix64's finaliser: every input bit affects every output bit.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t hash64(const void* data, size_t bytes, uint64_t seed = 0) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = mix64(seed ^ bytes);
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = mix64(h ^ word) + 0x9E3779B97F4A7C15ull;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, bytes);
  return mix64(h ^ tail);
}

}  // namespace difftx
