#include "infer/ngram_drafter.h"

#include <algorithm>

namespace difftx::infer {
namespace {

// What followed the latest earlier occurrence of the sequence's longest matching tail.
void look_up(std::span<const int32_t> tokens, int64_t max, std::vector<int32_t>& out) {
  const auto n = static_cast<int64_t>(tokens.size());
  for (int64_t g = std::min(NgramDrafter::kMaxNgram, n - 1); g >= NgramDrafter::kMinNgram; --g) {
    const std::span<const int32_t> tail = tokens.subspan(n - g);
    // The latest start s < n - g whose g tokens equal the tail; what follows them is proposed.
    for (int64_t s = n - g - 1; s >= 0; --s)
      if (std::equal(tail.begin(), tail.end(), tokens.begin() + s)) {
        for (int64_t i = s + g; i < s + g + max; ++i) out.push_back(i < n ? tokens[i] : out[i - n]);
        return;
      }
  }
}

}  // namespace

void NgramDrafter::propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, Sampler*, DraftGuard& guard,
                           Draft& draft) {
  draft.clear();
  std::vector<int32_t>& out = draft.tokens;
  Last& last = last_[seq];
  int64_t window = max;
  if (!last.proposed.empty() && last.n <= tokens.size()) {
    // The target took the proposal's tokens up to its first miss (then drew one of its own).
    size_t taken = 0;
    while (taken < last.proposed.size() && last.n + taken < tokens.size() &&
           tokens[last.n + taken] == last.proposed[taken])
      ++taken;
    window = taken == last.proposed.size() ? last.window + 2 : static_cast<int64_t>(taken) + 1;
  } else if (last.window > 0) {
    window = last.window;  // nothing was proposed: the window stays
  }
  window = std::min(window, max);
  look_up(tokens, window, out);
  out.resize(guard.keep(out));
  last = {tokens.size(), out, window};
}

}  // namespace difftx::infer
