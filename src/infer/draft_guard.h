// What a request lets its drafter propose (speculative decoding, infer/drafter.h): tokens its own
// draw could give, up to one that would end it. A copy of the request's constraint
// (token_constraint.h) goes through the drafted tokens, so each proposal is drawn under the mask
// the request would have there (a draft model masks its logits with it) or cut at the first token
// the constraint refuses (prompt lookup); and a draft ends after a stop token, where the
// constraint's document is complete and where its text completes a stop string (a copy of the
// request's StopText takes the drafted tokens' bytes), as the request would, and not before its
// min_tokens; the end of a bad word is not drafted where the request could not draw it. A drafted
// token past one of those could never be verified, only cost its row. The request's own state is
// not touched.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "infer/stop_text.h"
#include "infer/token_constraint.h"

namespace difftx::infer {

// A request's text, for a draft's stop strings: its StopText after the sequence's last token (null,
// or one without stop strings: nothing to watch) and what a token writes (token_bytes: the
// tokenizer and the request's silent ids, which outlive the guard).
struct DraftText {
  const StopText* text = nullptr;
  const data::Tokenizer* tokenizer = nullptr;
  std::span<const int32_t> silent = {};
};

// A request's bad words (RequestOptions::bad_words, outliving the guard) and its generated tokens
// so far, which the drafted ones continue.
struct DraftBadWords {
  std::span<const std::vector<int32_t>> words = {};
  std::span<const int32_t> generated = {};
};

class DraftGuard {
 public:
  // `constraint`: the request's, as it stands after the sequence's last token (null: none);
  // `stop_tokens`: the request's; `vocab`: the ids the request may draw, [0, vocab).
  // `min_left`: the tokens the request must still write before it may stop (its min_tokens less
  // those out): the first min_left drafted ones are drawn without the stop tokens (draw_allowed),
  // and stop strings are looked for from the min_left-th on, as the request has them.
  DraftGuard(const TokenConstraint* constraint, std::span<const int32_t> stop_tokens, int64_t vocab,
             const DraftText& text = {}, int64_t min_left = 0, const DraftBadWords& bad = {});

  // The ids the next drafted token may be, those the request's draw would allow there: a bitset
  // over [0, vocab) (bit i of word i / 64), valid until take(); null allows every id.
  const uint64_t* allowed();
  // Whether the request may take one id alone next: a drafted token there is one its target takes.
  bool forced();
  // The next drafted token: false where the request could not take it (outside [0, vocab),
  // refused by the constraint, or after the end), and the draft ends before it.
  bool take(int32_t id);
  // Whether the request would end with the tokens taken (or ends before any): nothing more to draft.
  bool ended() const { return ended_; }
  // How many of `tokens`, taken in turn, the draft keeps: those before the first refused one, up
  // to and including the first that ends the request.
  size_t keep(std::span<const int32_t> tokens);

 private:
  std::unique_ptr<TokenConstraint> constraint_;
  std::vector<int32_t> stops_;
  std::optional<StopText> text_;  // a copy of the request's, where it has stop strings
  const data::Tokenizer* tokenizer_;
  std::span<const int32_t> silent_;
  int64_t vocab_;
  int64_t min_left_;    // as given, less the tokens taken
  std::span<const std::vector<int32_t>> bad_words_;
  std::vector<int32_t> tail_;    // the generated tokens a bad word may reach back to, then those taken
  std::vector<int32_t> banned_;  // allowed()'s: the ids left out besides the constraint's
  std::vector<uint64_t> mask_;   // and its mask
  bool ended_;
};

}  // namespace difftx::infer
