// A constraint on which tokens a request may draw (structured output, tool calls, a reasoning
// budget): the engine asks it for the allowed ids before each draw, tells it each token taken,
// and ends the request when it says nothing more may follow. Each request gets its own from a
// shared source. What the constraint allows depends on the request's own tokens only, so a
// constrained request keeps the engine's batch invariance. The grammar room implements it
// (grammar/constraint.h); the engine knows only this interface.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace difftx::infer {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // The ids that may be drawn next: a bitset over the sampler's vocabulary (bit i of word
  // i / 64), valid until the next call; nullptr allows every id. Stop tokens are set only where
  // they may end the request.
  virtual const uint64_t* allowed() = 0;
  // The token drawn (or forced) next.
  virtual void accept(int32_t id) = 0;
  // Whether the request ends here: nothing may follow what was accepted.
  virtual bool done() const = 0;
  // A copy in this state that goes on on its own (a drafter's lookahead, infer/draft_guard.h).
  virtual std::unique_ptr<TokenConstraint> clone() const = 0;
};

// Whether `mask` (as allowed() gives it; null allows every id) lets `id` be drawn.
inline bool mask_allows(const uint64_t* mask, int32_t id) { return !mask || (mask[id >> 6] >> (id & 63) & 1); }

// `mask` (as allowed() gives it, over [0, vocab)) less `ids`, into `out`: its data, or `mask`
// itself where that would leave no id (a constraint's complete document allows only its stop
// tokens) or `ids` is empty.
const uint64_t* mask_without(const uint64_t* mask, std::span<const int32_t> ids, int64_t vocab,
                             std::vector<uint64_t>& out);

// What a request's draw leaves out besides its constraint's mask: its stop tokens while its
// min_tokens are not out (RequestOptions::min_tokens; empty after), and the last token of each
// bad word whose other tokens end its generated ones (infer/bad_words.h).
struct DrawBans {
  std::span<const int32_t> stop_tokens;
  std::span<const std::vector<int32_t>> bad_words;
  std::span<const int32_t> generated;
};
// The mask the draw takes: `mask` less the bans (mask_without). The sampling stage's draw and
// its drafts' guard both take it, so a draft is drawn as the request would be. `banned` and `out`
// are scratch.
const uint64_t* draw_allowed(const uint64_t* mask, const DrawBans& bans, int64_t vocab, std::vector<int32_t>& banned,
                             std::vector<uint64_t>& out);

class TokenConstraintSource {
 public:
  virtual ~TokenConstraintSource() = default;
  // The ids its masks cover: the sampler's vocabulary (EngineOptions::sample_vocab).
  virtual int64_t vocab_size() const = 0;
  // A fresh constraint for one request that ends at `stop_tokens`.
  virtual std::unique_ptr<TokenConstraint> start(std::span<const int32_t> stop_tokens) const = 0;
};

}  // namespace difftx::infer
