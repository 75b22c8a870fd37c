#include "infer/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "infer/token_constraint.h"

namespace difftx::infer {

namespace {
// Most likely first; equal logits by ascending id, so the order is total and deterministic.
struct MoreLikely {
  const float* logits;
  bool operator()(int32_t a, int32_t b) const { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); }
};
}  // namespace

// A draw's working memory, used only within one call: one per thread serves every sampler.
struct Sampler::Scratch {
  std::vector<int32_t> order;   // candidate ids, most likely first once sorted
  std::vector<double> weights;  // unnormalised probabilities of order
  std::vector<float> adjusted;  // the logits after the bias and penalties
  std::vector<double> q;        // a draft distribution spread over the ids; zeros between calls

  static Scratch& of_thread(int64_t vocab) {
    thread_local Scratch s;
    if (static_cast<int64_t>(s.order.size()) < vocab) {
      s.order.resize(vocab);
      s.weights.resize(vocab);
      s.adjusted.resize(vocab);
      s.q.resize(vocab, 0.0);
    }
    return s;
  }
};

std::string logit_bias_problem(const std::vector<std::pair<int32_t, float>>& bias, int64_t vocab) {
  std::vector<std::pair<int32_t, float>> sorted = bias;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto [id, b] = sorted[i];
    if (id < 0 || id >= vocab) return concat("token ", id, " is outside the vocabulary [0, ", vocab, ")");
    if (i > 0 && sorted[i - 1].first == id) return concat("token ", id, " is given twice");
    if (!(std::isfinite(b) && b >= -100 && b <= 100))
      return concat("the bias of token ", id, " is ", b, ", not in [-100, 100]");
  }
  return {};
}

void check_sampling_options(const SamplingOptions& o, OptionSpelling spelling) {
  const auto name = [&](std::string_view field) { return option_name(field, spelling); };
  DIFFTX_CHECK(std::isfinite(o.temperature) && o.temperature >= 0, name("temperature"), " ", o.temperature,
               " must be >= 0 (0 is greedy)");
  DIFFTX_CHECK(o.top_k >= 0, name("top_k"), " ", o.top_k, " must be >= 0 (0 keeps every token)");
  DIFFTX_CHECK(o.top_p > 0 && o.top_p <= 1, name("top_p"), " ", o.top_p, " must be in (0, 1] (1 keeps every token)");
  DIFFTX_CHECK(o.min_p >= 0 && o.min_p <= 1, name("min_p"), " ", o.min_p, " must be in [0, 1] (0 keeps every token)");
  DIFFTX_CHECK(o.presence_penalty >= -2 && o.presence_penalty <= 2, name("presence_penalty"), " ", o.presence_penalty,
               " must be in [-2, 2]");
  DIFFTX_CHECK(o.frequency_penalty >= -2 && o.frequency_penalty <= 2, name("frequency_penalty"), " ",
               o.frequency_penalty, " must be in [-2, 2]");
  DIFFTX_CHECK(o.repetition_penalty > 0 && o.repetition_penalty <= 10, name("repetition_penalty"), " ",
               o.repetition_penalty, " must be in (0, 10] (1 is off)");
}

Sampler::Sampler(const SamplingOptions& o, int64_t vocab) : options_(o), vocab_(vocab), rng_(o.seed) {
  DIFFTX_CHECK(vocab >= 1, "sampler: vocabulary size ", vocab, " must be positive");
  check_sampling_options(o, OptionSpelling::field);
  const std::string problem = logit_bias_problem(o.logit_bias, vocab);
  DIFFTX_CHECK(problem.empty(), "logit_bias: ", problem);
  if (o.penalised()) counts_.assign(vocab, 0);
  if (o.repetition_penalty != 1) in_prompt_.assign(vocab, 0);
}

double DraftDistribution::prob(int32_t id) const {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id) return probs[i];
  return 0;
}

bool Sampler::all_finite(const float* logits, int64_t n) {
  int bad = 0;  // an int, not a bool: GCC vectorises this form
  for (int64_t i = 0; i < n; ++i) bad |= !std::isfinite(logits[i]);
  return !bad;
}

void Sampler::check_finite(const float* logits) const {
  if (all_finite(logits, vocab_)) return;
  const int64_t i = std::find_if(logits, logits + vocab_, [](float v) { return !std::isfinite(v); }) - logits;
  fail("sampler: the logit of token ", i, " is ", logits[i], ", not finite");
}

const float* Sampler::adjusted(Scratch& s, const float* logits) const {
  if (counts_.empty() && options_.logit_bias.empty()) return logits;
  std::copy(logits, logits + vocab_, s.adjusted.begin());
  for (const auto& [id, bias] : options_.logit_bias) s.adjusted[id] += bias;  // before the penalties, as vLLM
  // The penalties move only the ids seen (drawn, or in the prompt for the repetition penalty).
  const double repetition = options_.repetition_penalty;
  for (const int32_t i : seen_) {
    double l = s.adjusted[i];
    if (repetition != 1) l = l > 0 ? l / repetition : l * repetition;
    s.adjusted[i] = static_cast<float>(l - options_.frequency_penalty * counts_[i] -
                                       (counts_[i] > 0 ? options_.presence_penalty : 0.0));
  }
  return s.adjusted.data();
}

void Sampler::count(int32_t id) {
  if (counts_.empty()) return;
  if (counts_[id]++ == 0 && (in_prompt_.empty() || !in_prompt_[id])) seen_.push_back(id);
}

int32_t Sampler::sample(const float* logits, const uint64_t* allowed, int32_t draft, const DraftDistribution* q) {
  check_finite(logits);
  Scratch& s = Scratch::of_thread(vocab_);
  const int32_t id = draw(s, adjusted(s, logits), allowed, draft, q);
  count(id);
  return id;
}

int32_t Sampler::take(const float* logits, int32_t id) {
  check_finite(logits);
  DIFFTX_CHECK(id >= 0 && id < vocab_, "token ", id, " is outside the vocabulary [0, ", vocab_, ")");
  count(id);
  return id;
}

int32_t Sampler::propose(const float* logits, DraftDistribution& q, const uint64_t* allowed) {
  q.ids.clear();
  q.probs.clear();
  if (!all_finite(logits, vocab_)) return -1;
  Scratch& s = Scratch::of_thread(vocab_);
  logits = adjusted(s, logits);
  // The options act within the likeliest few: no exp over the whole vocabulary per drafted token.
  const bool greedy = options_.temperature == 0;
  const int64_t few = likeliest(
      s, logits, greedy ? 1 : std::min({vocab_, kDraftCandidates, options_.top_k > 0 ? options_.top_k : vocab_}),
      allowed);
  if (few == 0) return -1;  // the mask allows nothing
  int32_t id = s.order[0];
  if (!greedy) {
    double total = 0;
    const int64_t kept = candidates(s, logits, few, total);
    id = pick(s, kept, total);
    for (int64_t i = 0; i < kept; ++i) {
      q.ids.push_back(s.order[i]);
      q.probs.push_back(s.weights[i] / total);
    }
  }
  count(id);
  return id;
}

void Sampler::note_prompt(std::span<const int32_t> ids) {
  if (in_prompt_.empty()) return;
  for (const int32_t id : ids)
    if (id >= 0 && id < vocab_ && !in_prompt_[id]) {
      in_prompt_[id] = 1;
      if (counts_[id] == 0) seen_.push_back(id);
    }
}

void Sampler::count_as(const Sampler& other) {
  if (counts_.empty()) return;
  DIFFTX_CHECK(other.counts_.size() == counts_.size() && other.in_prompt_.size() == in_prompt_.size(),
               "sampler: the counts of a sampler over ", other.vocab_, " ids cannot be those of one over ", vocab_,
               " with other penalties");
  // Only the seen ids hold anything: cleared, then the other's copied.
  for (const int32_t id : seen_) {
    counts_[id] = 0;
    if (!in_prompt_.empty()) in_prompt_[id] = 0;
  }
  seen_ = other.seen_;
  for (const int32_t id : seen_) {
    counts_[id] = other.counts_[id];
    if (!in_prompt_.empty()) in_prompt_[id] = other.in_prompt_[id];
  }
}

int32_t Sampler::draw(Scratch& s, const float* logits, const uint64_t* allowed, int32_t draft,
                      const DraftDistribution* q) {
  const MoreLikely more_likely{logits};
  // The candidates: every id, or the allowed ones in ascending order.
  int64_t count = vocab_;
  if (allowed) {
    count = 0;
    for (int64_t w = 0; w * 64 < vocab_; ++w)
      for (uint64_t bits = allowed[w]; bits; bits &= bits - 1) {
        const int64_t id = w * 64 + __builtin_ctzll(bits);
        if (id < vocab_) s.order[count++] = static_cast<int32_t>(id);
      }
    DIFFTX_CHECK(count > 0, "sampler: the request's constraint allows no token here");
  }
  if (options_.temperature == 0) {
    if (allowed) return *std::min_element(s.order.begin(), s.order.begin() + count, more_likely);
    int32_t best = 0;
    for (int32_t i = 1; i < vocab_; ++i)
      if (more_likely(i, best)) best = i;
    return best;
  }
  if (!allowed) std::iota(s.order.begin(), s.order.begin() + vocab_, 0);
  double total = 0;
  const int64_t kept = candidates(s, logits, count, total);
  if (draft >= 0) {  // speculative sampling's verification of the draft against q
    const double q_draft = q ? q->prob(draft) : 1.0;
    DIFFTX_CHECK(q_draft > 0, "sampler: draft token ", draft, " has no probability in the distribution it was drawn from");
    const int64_t at = std::find(s.order.begin(), s.order.begin() + kept, draft) - s.order.begin();
    const double p = at < kept ? s.weights[at] : 0.0;
    if (p > 0 && (p >= q_draft * total || rng_.uniform() * q_draft * total < p)) return draft;
    total = residual(s, kept, total, at, q);
  }
  return pick(s, kept, total);
}

// One pass: ids likelier than the floor (and allowed, with a mask) gather in a buffer; when it is
// full, the `count` likeliest stay and the floor rises to the least of them. An id at or below the
// floor is not likelier than any kept one (ids ascend), so most ids stop at one comparison, and
// logits in any order (rising with the id at worst) cost one partition of the buffer per
// (room - count) ids.
int64_t Sampler::likeliest(Scratch& s, const float* logits, int64_t count, const uint64_t* allowed) const {
  const MoreLikely more_likely{logits};
  const auto order = s.order.begin();
  const int64_t room = std::min(vocab_, 16 * count);
  const auto keep = [&](int64_t n) { std::nth_element(order, order + count - 1, order + n, more_likely); };
  int64_t n = 0;
  float floor = -std::numeric_limits<float>::infinity();  // logits are finite here
  for (int32_t id = 0; id < vocab_; ++id) {
    if (logits[id] <= floor || !mask_allows(allowed, id)) continue;
    order[n++] = id;
    if (n == room) {
      keep(n);
      n = count;
      floor = logits[order[count - 1]];
    }
  }
  if (n > count) keep(n);
  count = std::min(count, n);  // fewer ids allowed than asked for
  std::sort(order, order + count, more_likely);  // likeliest first
  return count;
}

int64_t Sampler::candidates(Scratch& s, const float* logits, int64_t count, double& total) const {
  const MoreLikely more_likely{logits};
  std::vector<int32_t>& order = s.order;
  std::vector<double>& weights = s.weights;
  int64_t kept = count;
  if (options_.top_k > 0 && options_.top_k < count) {
    kept = options_.top_k;
    std::nth_element(order.begin(), order.begin() + kept - 1, order.begin() + count, more_likely);
  }
  if (options_.top_p < 1) std::sort(order.begin(), order.begin() + kept, more_likely);

  // p_i proportional to exp((l_i - l_max) / temperature), in double.
  float max_logit = logits[order[0]];
  for (int64_t i = 1; i < kept; ++i) max_logit = std::max(max_logit, logits[order[i]]);
  total = 0;
  for (int64_t i = 0; i < kept; ++i)
    total += (weights[i] = std::exp((static_cast<double>(logits[order[i]]) - max_logit) / options_.temperature));
  if (options_.min_p > 0) {  // weights are relative to the most likely token's (whose weight is 1)
    int64_t n = 0;
    for (int64_t i = 0; i < kept; ++i)
      if (weights[i] >= options_.min_p) order[n] = order[i], weights[n++] = weights[i];
    kept = n;
    total = 0;
    for (int64_t i = 0; i < kept; ++i) total += weights[i];
  }
  if (options_.top_p < 1) {  // the shortest most-likely prefix holding top_p of the mass
    double mass = 0;
    int64_t n = 0;
    while (n < kept && mass < options_.top_p * total) mass += weights[n++];
    kept = n;
    total = mass;
  }
  return kept;
}

double Sampler::residual(Scratch& s, int64_t kept, double total, int64_t at, const DraftDistribution* q) const {
  if (!q) {  // the point mass: p without the draft
    if (at < kept) total -= s.weights[at], s.weights[at] = 0;
    return total;
  }
  DIFFTX_CHECK(q->probs.size() == q->ids.size(), "sampler: a draft distribution of ", q->ids.size(), " ids has ",
               q->probs.size(), " probabilities");
  for (int32_t id : q->ids)  // all checked before the scratch is written: it must be left zeros
    DIFFTX_CHECK(id >= 0 && id < vocab_, "sampler: draft candidate ", id, " is outside the vocabulary [0, ", vocab_,
                 ")");
  for (size_t j = 0; j < q->ids.size(); ++j) s.q[q->ids[j]] = q->probs[j] * total;  // q on the weights' scale
  double left = 0;
  for (int64_t i = 0; i < kept; ++i) left += std::max(0.0, s.weights[i] - s.q[s.order[i]]);
  if (left > 0)  // else p = q up to rounding, and a rejection only rounding's: p stands
    for (int64_t i = 0; i < kept; ++i) s.weights[i] = std::max(0.0, s.weights[i] - s.q[s.order[i]]);
  for (int32_t id : q->ids) s.q[id] = 0;
  return left > 0 ? left : total;
}

int32_t Sampler::pick(const Scratch& s, int64_t kept, double total) {
  const double u = rng_.uniform() * total;
  double cumulative = 0;
  for (int64_t i = 0; i < kept; ++i) {
    cumulative += s.weights[i];
    if (u < cumulative) return s.order[i];
  }
  for (int64_t i = kept; i-- > 0;)  // u within rounding of the total: the last id with weight
    if (s.weights[i] > 0) return s.order[i];
  return s.order[kept - 1];
}

}  // namespace difftx::infer
