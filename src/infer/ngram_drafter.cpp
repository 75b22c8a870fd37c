#include "infer/ngram_drafter.h"

#include <algorithm>

namespace difftx::infer {

void NgramDrafter::propose(uint64_t, std::span<const int32_t> tokens, int64_t max, std::vector<int32_t>& out) {
  out.clear();
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t g = std::min(kMaxNgram, n - 1); g >= kMinNgram; --g) {
    const std::span<const int32_t> tail = tokens.subspan(n - g);
    // The latest start s < n - g whose g tokens equal the tail; what follows them is proposed.
    for (int64_t s = n - g - 1; s >= 0; --s)
      if (std::equal(tail.begin(), tail.end(), tokens.begin() + s)) {
        for (int64_t i = s + g; i < s + g + max; ++i) out.push_back(i < n ? tokens[i] : out[i - n]);
        return;
      }
  }
}

}  // namespace difftx::infer
