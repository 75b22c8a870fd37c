#include "infer/draft_guard.h"

#include <algorithm>
#include <bit>

#include "core/error.h"

namespace difftx::infer {

DraftGuard::DraftGuard(const TokenConstraint* constraint, std::span<const int32_t> stop_tokens, int64_t vocab,
                       const DraftText& text, int64_t min_left, const DraftBadWords& bad)
    : constraint_(constraint ? constraint->clone() : nullptr),
      stops_(stop_tokens.begin(), stop_tokens.end()),
      tokenizer_(text.tokenizer),
      silent_(text.silent),
      vocab_(vocab),
      min_left_(min_left),
      bad_words_(bad.words),
      ended_((constraint && constraint->done()) || (text.text && text.text->stopped())) {
  DIFFTX_CHECK(vocab >= 1, "a draft guard over ", vocab, " ids: the vocabulary must not be empty");
  if (text.text && text.text->has_stops()) text_.emplace(*text.text);
  size_t reach = 0;
  for (const std::vector<int32_t>& word : bad_words_) reach = std::max(reach, word.size() - 1);
  const std::span<const int32_t> tail = bad.generated.last(std::min(reach, bad.generated.size()));
  tail_.assign(tail.begin(), tail.end());
}

// As the request's draw there (SamplingStage::allowed).
const uint64_t* DraftGuard::allowed() {
  const uint64_t* mask = constraint_ ? constraint_->allowed() : nullptr;
  const std::span<const int32_t> stops = min_left_ > 0 ? std::span<const int32_t>(stops_) : std::span<const int32_t>{};
  return draw_allowed(mask, {stops, bad_words_, tail_}, vocab_, banned_, mask_);
}

bool DraftGuard::forced() {
  const uint64_t* mask = allowed();
  if (!mask || ended_) return false;
  int64_t ids = 0;
  for (int64_t w = 0; w < (vocab_ + 63) / 64 && ids < 2; ++w) {
    const uint64_t bits = w == vocab_ / 64 ? mask[w] & ((uint64_t{1} << (vocab_ & 63)) - 1) : mask[w];
    ids += std::popcount(bits);
  }
  return ids == 1;
}

bool DraftGuard::take(int32_t id) {
  if (ended_ || id < 0 || id >= vocab_) return false;
  if (!mask_allows(allowed(), id)) return false;
  if (std::find(stops_.begin(), stops_.end(), id) != stops_.end()) return ended_ = true;  // the request stops here
  --min_left_;
  if (!bad_words_.empty()) tail_.push_back(id);
  if (constraint_) {
    constraint_->accept(id);
    ended_ = constraint_->done();
  }
  if (std::string bytes; text_ && token_bytes(tokenizer_, silent_, id, bytes)) {
    text_->push(bytes, min_left_ <= 0);
    ended_ = ended_ || text_->stopped();
  }
  return true;
}

size_t DraftGuard::keep(std::span<const int32_t> tokens) {
  size_t n = 0;
  while (n < tokens.size() && take(tokens[n])) ++n;
  return n;
}

}  // namespace difftx::infer
