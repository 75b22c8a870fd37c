#include "infer/token_constraint.h"

#include <algorithm>

#include "infer/bad_words.h"

namespace difftx::infer {

const uint64_t* mask_without(const uint64_t* mask, std::span<const int32_t> ids, int64_t vocab,
                             std::vector<uint64_t>& out) {
  if (ids.empty()) return mask;
  const int64_t words = (vocab + 63) / 64;
  out.assign(words, ~uint64_t{0});
  if (vocab % 64) out.back() = (uint64_t{1} << (vocab % 64)) - 1;  // the ids past vocab: none
  for (int64_t w = 0; mask && w < words; ++w) out[w] &= mask[w];
  for (const int32_t id : ids)
    if (id >= 0 && id < vocab) out[id / 64] &= ~(uint64_t{1} << (id % 64));
  return std::any_of(out.begin(), out.end(), [](uint64_t w) { return w != 0; }) ? out.data() : mask;
}

const uint64_t* draw_allowed(const uint64_t* mask, const DrawBans& bans, int64_t vocab, std::vector<int32_t>& banned,
                             std::vector<uint64_t>& out) {
  banned.assign(bans.stop_tokens.begin(), bans.stop_tokens.end());
  bad_word_ends(bans.bad_words, bans.generated, banned);
  return mask_without(mask, banned, vocab, out);
}

}  // namespace difftx::infer
