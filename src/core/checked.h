// Checked size arithmetic: sizes that come from a file or a flag are multiplied here before
// anything is allocated or indexed with them, so an absurd value becomes an Error, not an
// overflow.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace difftx {

// The ranges that counts and sizes from flags, files, requests and API calls share: far below
// int64, so that products of a few of them cannot overflow; what is allocated from them is
// checked again where it is sized.
inline constexpr int64_t kMaxCount = int64_t{1} << 40;      // steps, samples, batches, tokens
inline constexpr int64_t kMaxDimension = int64_t{1} << 24;  // sequence lengths, contexts

// The product of the factors (each >= 0), or nullopt when it exceeds `limit` (or int64).
inline std::optional<int64_t> product_at_most(std::initializer_list<int64_t> factors, int64_t limit) {
  int64_t product = 1;
  for (const int64_t f : factors) {
    if (f < 0 || __builtin_mul_overflow(product, f, &product) || product > limit) return std::nullopt;
  }
  return product;
}

}  // namespace difftx
