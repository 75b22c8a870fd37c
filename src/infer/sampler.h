// Next-token sampling from logits: a bias per token, presence and frequency penalties over the
// tokens drawn so far, a repetition penalty over those and the prompt's, temperature, top-k, top-p
// (nucleus) and min-p, seeded so that the same seed and logits give the same tokens on every
// machine (core/rng.h).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/option_name.h"
#include "core/rng.h"

namespace difftx::infer {

struct SamplingOptions {
  double temperature = 0.8;  // 0: greedy (the largest logit; the lowest id among equals)
  int64_t top_k = 0;         // keep the k most likely tokens; 0 keeps all
  double top_p = 1.0;        // keep the most likely tokens whose probability sums to >= p; 1 keeps all
  uint64_t seed = 1;
  double min_p = 0.0;        // keep tokens with probability >= min_p times the largest; 0 keeps all
  // OpenAI's penalties: logit - presence * [count > 0] - frequency * count, count = how often
  // the token was drawn so far; each in [-2, 2], 0 = off.
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  // transformers' and vLLM's repetition penalty: the logit of a token of the prompt or the output
  // so far is divided by it where positive and multiplied by it where not, before the two above;
  // in (0, 10], 1 = off.
  double repetition_penalty = 1.0;
  // OpenAI's logit_bias: (id, bias) pairs, each bias added to its token's logit before the
  // penalties and everything after (-100 bans the token, +100 all but forces it); each id once,
  // biases in [-100, 100]. Drafts of a draft model see them too.
  std::vector<std::pair<int32_t, float>> logit_bias = {};

  bool penalised() const { return presence_penalty != 0 || frequency_penalty != 0 || repetition_penalty != 1; }
};

// The one check of the sampling options but the logit bias (the CLI's, and the Sampler's for
// every request): errors name each option as `spelling` writes it ("top_p" or "--top-p").
void check_sampling_options(const SamplingOptions& options, OptionSpelling spelling);

// What is wrong with a logit bias for a vocabulary of `vocab` tokens (an id outside it, an id
// given twice, a bias not in [-100, 100]); empty when nothing is. The one check of the CLI, the
// server, the C API and the Sampler, each naming its own field.
std::string logit_bias_problem(const std::vector<std::pair<int32_t, float>>& bias, int64_t vocab);

// The distribution a drafted token was drawn from (speculative decoding's sampled drafting,
// Sampler::propose): candidate ids and their probabilities, which sum to 1.
struct DraftDistribution {
  std::vector<int32_t> ids;
  std::vector<double> probs;
  double prob(int32_t id) const;  // 0 for an id not among them
};

class Sampler {
 public:
  // The candidates a drafted token's distribution keeps: the likeliest, renormalised.
  static constexpr int64_t kDraftCandidates = 64;

  // Samples ids in [0, vocab) (a model's logits may have more columns than its tokenizer has
  // tokens: those are never drawn). Bad options are errors naming the option as the library's
  // callers do (the fields: "top_p"); a caller with other names checks first (check_sampling_options).
  Sampler(const SamplingOptions& options, int64_t vocab);

  // One id from logits [>= vocab], which are not modified (the bias and penalties act on a copy).
  // A non-finite logit is an error naming the token. The drawn id counts towards the penalties.
  // `allowed`, if given, is a bitset over [0, vocab) (bit i of word i / 64): only those ids are
  // candidates, as if the others' logits were -infinity (an error when it allows none).
  // `draft` (>= 0): a token proposed by a drafter (speculative decoding), verified here, the one
  // place a draft is accepted or rejected: the draft is accepted when the returned id equals it.
  // Greedy returns the largest logit as without a draft. Sampling is rejection sampling against
  // the distribution q the draft was drawn from (`q`; null: the point mass q = 1 at the draft):
  // the draft is taken with probability min(1, p(draft) / q(draft)), else an id is drawn from
  // norm(max(0, p - q)), so the returned id follows p exactly as a draw without a draft does.
  // A draw works in its thread's scratch (vocabulary-sized, allocated by the thread's first draw
  // at that size): a sampler holds no memory of that size but its penalty counts.
  int32_t sample(const float* logits, const uint64_t* allowed = nullptr, int32_t draft = -1,
                 const DraftDistribution* q = nullptr);
  // A draft model's next token for a request: drawn from its logits' kDraftCandidates likeliest
  // ids after the bias and penalties, with the temperature, top-k, min-p and top-p applied within
  // them; the renormalised probabilities go to `q` for the verification. With temperature 0, the
  // largest adjusted logit and q empty. `allowed`, if given (a bitset as sample's: the request's
  // constraint where the draft stands, infer/draft_guard.h): only those ids are candidates, so q
  // is over them. -1 (q empty) where a logit is not finite or no id is allowed: no draft from
  // those. The proposed id counts towards the penalties of the proposals after it.
  int32_t propose(const float* logits, DraftDistribution& q, const uint64_t* allowed = nullptr);
  // The penalties' counts and the prompt's tokens become `other`'s (a request's draft sampler
  // before a proposal: the tokens its target saw and drew so far). Both samplers have the same
  // options but the seed, or this one does not penalise.
  void count_as(const Sampler& other);
  // Takes `id` as if drawn (it counts towards the penalties; the logits are checked as sample's).
  int32_t take(const float* logits, int32_t id);
  // The request's prompt, whose tokens the repetition penalty counts as seen (ids outside the
  // vocabulary are not drawn, so not penalised).
  void note_prompt(std::span<const int32_t> ids);
  static bool all_finite(const float* logits, int64_t n);  // every one of logits[0, n) finite

 private:
  struct Scratch;  // sampler.cpp: the candidates, their weights, the adjusted logits, q spread out
  // The logits with the bias and penalties applied (in the scratch), or the logits themselves
  // where there are none.
  const float* adjusted(Scratch& s, const float* logits) const;
  // Temperature, top-k, min-p, top-p and the draw (with the draft's verification).
  int32_t draw(Scratch& s, const float* logits, const uint64_t* allowed, int32_t draft, const DraftDistribution* q);
  // The candidates after temperature, top-k, min-p and top-p: s.order[0, kept) with their
  // unnormalised probabilities in s.weights (returned: kept; total: their sum). Not for greedy.
  int64_t candidates(Scratch& s, const float* logits, int64_t count, double& total) const;
  // The candidates left after a rejected draft (at: its place): the weights become max(0, p - q)
  // (q scaled to the weights' total); returns their sum, or leaves p and returns total where
  // nothing is left.
  double residual(Scratch& s, int64_t kept, double total, int64_t at, const DraftDistribution* q) const;
  int32_t pick(const Scratch& s, int64_t kept, double total);  // a draw from the weights of s.order[0, kept)
  // The `count` likeliest ids (of the allowed ones, where a mask is given) into s.order, likeliest
  // first; returns how many there are (fewer where fewer are allowed).
  int64_t likeliest(Scratch& s, const float* logits, int64_t count, const uint64_t* allowed) const;
  void check_finite(const float* logits) const;

  SamplingOptions options_;
  int64_t vocab_;
  Rng rng_;
  void count(int32_t id);  // one more draw of id, for the penalties

  std::vector<int32_t> counts_;     // times each id was drawn (penalties only)
  std::vector<uint8_t> in_prompt_;  // 1 for the prompt's ids (the repetition penalty only)
  std::vector<int32_t> seen_;       // the ids drawn or in the prompt, each once: those the penalties move
};

}  // namespace difftx::infer
