#include "infer/model_drafter.h"

#include <algorithm>

#include "core/error.h"

namespace difftx::infer {
namespace {
constexpr int64_t kBlockTokens = 32;

const model::Model& decoder_only(const model::Model& model) {
  model.config.require_decoder("a draft model");
  return model;
}
}  // namespace

ModelDrafter::ModelDrafter(const model::Model& model, int64_t vocab, kernels::KvStorage kv, int64_t kv_tokens,
                           int64_t context, int64_t max_rows, OptionSpelling spelling)
    : context_(std::min(context, model.config.max_position_embeddings)),
      max_rows_(max_rows),
      greedy_(SamplingOptions{.temperature = 0}, vocab),
      pool_(*decoder_only(model).backend, model.config, kv, kBlockTokens,
            std::max<int64_t>(1, (kv_tokens + kBlockTokens - 1) / kBlockTokens), spelling),
      kv_(kv_cache_groups(model.config), pool_, 0, false),
      forward_(model, pool_, max_rows, context_) {
  DIFFTX_CHECK(vocab >= 1 && vocab <= model.config.vocab_size, "the draft model's vocab_size ",
               model.config.vocab_size, " is smaller than the ", vocab, " ids the target draws");
}

const float* ModelDrafter::run(uint64_t seq, std::span<const BatchRow> rows) {
  const std::span<const int32_t> table = kv_.table(seq, 0);
  const auto n = static_cast<int64_t>(rows.size());
  return forward_.run(rows, n < 8 ? n : 0, {&table, 1});  // any order: drafts are guesses
}

void ModelDrafter::drop_rows(uint64_t seq) {
  pending_.erase(seq);
  kv_.free(seq);
}

void ModelDrafter::release(uint64_t seq) {
  drop_rows(seq);
  lengths_.erase(seq);
}

void ModelDrafter::settle(uint64_t seq, std::span<const int32_t> tokens) {
  const auto it = pending_.find(seq);
  if (it == pending_.end()) return;
  const Pending p = std::move(it->second);
  pending_.erase(it);
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < p.n) return drop_rows(seq);  // not the sequence the rows were computed for: rebuilt
  // How far the sequence went on with the drafted tokens (row p.n + i was fed drafted[i]).
  const auto drafted = static_cast<int64_t>(p.drafted.size());
  int64_t matched = 0;
  while (matched < drafted && p.n + matched < n && tokens[p.n + matched] == p.drafted[matched]) ++matched;
  // The target's verdict: the drafted tokens it took (those it had a choice at), then a miss
  // where it drew past them.
  if (drafted > 0)
    lengths_[seq].observe(std::count(p.forced.begin(), p.forced.begin() + matched, false),
                          matched < drafted && p.n + matched < n);
  // The matched tokens' rows stand but the last drafted token's, which was never computed; the
  // last token's is left out below.
  const int64_t stored = p.n + std::min(matched, std::max<int64_t>(drafted - 1, 0));
  kv_.commit(seq, {}, std::min(stored, n - 1) - kv_.computed(seq));  // computed: the open step's start
}

bool ModelDrafter::room_for(uint64_t seq, int64_t positions) const {
  const int64_t more = positions - kv_.computed(seq);
  return kv_.fit(seq, more) >= more;
}

void ModelDrafter::catch_up(uint64_t seq, std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  while (kv_.computed(seq) < n) {
    const int64_t done = kv_.computed(seq), rows = std::min(n - done, max_rows_);
    DIFFTX_CHECK(kv_.allocate_slots(seq, rows, 0), "draft model: no slots for ", rows, " rows after room_for");
    rows_.clear();
    for (int64_t p = done; p < done + rows; ++p) rows_.push_back({tokens[p], p, 0, false});
    run(seq, rows_);
    kv_.commit(seq, {}, rows);
  }
}

void ModelDrafter::prefill(uint64_t seq, std::span<const int32_t> prompt) {
  settle(seq, prompt);
  const auto n = static_cast<int64_t>(prompt.size());
  if (n < context_ && room_for(seq, n)) catch_up(seq, prompt);
}

void ModelDrafter::propose(uint64_t seq, std::span<const int32_t> tokens, int64_t max, Sampler* sampler,
                           DraftGuard& guard, Draft& out) {
  out.clear();
  settle(seq, tokens);
  const auto n = static_cast<int64_t>(tokens.size());
  max = std::min(max, context_ - n + 1);  // drafted rows sit at positions [n, n + max - 1)
  if (max < 1) return;
  // Where the cache cannot hold the sequence and its draft, nothing is run or drafted; its rows
  // stay for a step that has the room.
  if (!room_for(seq, n - 1 + max)) return;
  // Catch up on the sequence's tokens but the last step's rows, which are lookahead ones: the
  // last token's (not kept, so that a later call always has a row that gives logits) and the
  // drafted tokens'.
  catch_up(seq, tokens.first(std::max(kv_.computed(seq), n - max_rows_)));
  const int64_t done = kv_.computed(seq);
  DIFFTX_CHECK(kv_.allocate_slots(seq, n - done - 1, max), "draft model: no slots for a proposal after room_for");
  rows_.clear();
  for (int64_t p = done; p < n; ++p) rows_.push_back({tokens[p], p, 0, p + 1 == n});
  // Its continuation, one row per drafted token; settle() keeps the accepted ones' rows. Logits
  // that are not all finite, or a mask that allows nothing, end the proposal there: a draft is a
  // guess, never the request's error.
  // The tokens the constraint leaves a choice at number at most the sequence's window.
  Pending& p = pending_[seq] = {n, {}, {}};
  int64_t choices = lengths_[seq].window(max);
  DraftDistribution q;
  const auto next = [&](const float* logits) -> int32_t {
    const bool forced = guard.forced();
    const int32_t token = (sampler ? sampler : &greedy_)->propose(logits, q, guard.allowed());
    if (token < 0 || !guard.take(token)) return -1;
    if (sampler) out.q.push_back(q);
    p.forced.push_back(forced);
    choices -= !forced;
    return token;
  };
  for (int32_t token = next(run(seq, rows_)); token >= 0;) {
    out.tokens.push_back(token);
    if (static_cast<int64_t>(out.tokens.size()) == max || choices == 0 || guard.ended()) break;
    const BatchRow row{token, n + static_cast<int64_t>(out.tokens.size()) - 1, 0, true};
    token = next(run(seq, {&row, 1}));
  }
  p.drafted = out.tokens;
}

}  // namespace difftx::infer
