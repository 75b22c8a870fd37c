// Seeded draws the task generators share.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/rng.h"

namespace difftx::retrieval {

// A random permutation of [0, n) (Fisher-Yates).
inline std::vector<int64_t> shuffled(Rng& rng, int64_t n) {
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(all[i], all[static_cast<int64_t>(rng.below(i + 1))]);
  return all;
}

// k distinct draws from [0, n), for k small against n (by rejection; k <= n).
inline std::vector<int64_t> draw_distinct(Rng& rng, int64_t n, int64_t k) {
  std::vector<int64_t> out;
  while (static_cast<int64_t>(out.size()) < k) {
    const int64_t v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

}  // namespace difftx::retrieval
