// Speculative decoding (infer/drafter.h): the n-gram drafter's proposals; greedy output with a
// draft (n-gram, a draft model that agrees, one that does not) bit-identical to the output
// without one, for every variant and weight type, alone and beside other requests; stop tokens,
// max_new_tokens and constraints in the middle of an accepted run; the sampled path keeping the
// target's distribution (chi-square, one token in the sampler and three tokens through the
// engine); a hybrid (Mamba) target, whose rejected drafts restore the recurrent state; and the
// errors for bad draft options and for a hybrid draft model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>

#include "core/rng.h"
#include "infer/ngram_drafter.h"
#include "infer/sampler.h"
#include "model/storage_plan.h"
#include "support/engine_runs.h"
#include "support/random_model.h"
#include "support/testing.h"

namespace difftx::infer {

using kernels::AttentionKind;
using kernels::WeightType;
using model::Model;

namespace {

using testing::expect_error;
using testing::Stream;

std::vector<int32_t> ngram(std::vector<int32_t> tokens, int64_t max) {
  Draft out;
  DraftGuard any(nullptr, {}, 100);
  NgramDrafter().propose(0, tokens, max, nullptr, any, out);
  return out.tokens;
}

TEST(NgramDrafter, ProposesWhatFollowedTheLongestLatestMatch) {
  // The tail [3 4] occurs twice; the latest occurrence (followed by 8 9) wins.
  EXPECT_EQ(ngram({3, 4, 5, 6, 3, 4, 8, 9, 1, 3, 4}, 3), (std::vector<int32_t>{8, 9, 1}));
  // [7 3 4] occurs once: the longer match beats the later short one.
  EXPECT_EQ(ngram({7, 3, 4, 5, 6, 3, 4, 8, 9, 7, 3, 4}, 2), (std::vector<int32_t>{5, 6}));
  // A loop goes on at its period past the sequence's end.
  EXPECT_EQ(ngram({1, 2, 3, 1, 2, 3}, 7), (std::vector<int32_t>{1, 2, 3, 1, 2, 3, 1}));
  EXPECT_EQ(ngram({5, 5, 5}, 4), (std::vector<int32_t>{5, 5, 5, 5}));
  // No earlier occurrence of a two-token tail: nothing.
  EXPECT_TRUE(ngram({1, 2, 3, 4, 5, 6}, 4).empty());
  EXPECT_TRUE(ngram({1}, 4).empty());
}

TEST(NgramDrafter, ProposalLengthFollowsTheLastVerification) {
  NgramDrafter drafter;
  std::vector<int32_t> tokens{4, 7, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2};
  Draft out;
  const auto propose = [&](int64_t max) {
    DraftGuard any(nullptr, {}, 100);
    drafter.propose(7, tokens, max, nullptr, any, out);
    return out.tokens;
  };
  EXPECT_EQ(propose(6), (std::vector<int32_t>{3, 4, 5, 6, 7, 8}));  // the first: all it may
  // The target took 3 and 4, then drew 7 where 5 was proposed: three tokens next.
  tokens.insert(tokens.end(), {3, 4, 7});
  EXPECT_EQ(propose(6), (std::vector<int32_t>{0, 0, 0}));
  // All three taken (and one more drawn): two more than last time.
  tokens.insert(tokens.end(), {0, 0, 0, 0});
  EXPECT_EQ(propose(6), (std::vector<int32_t>{0, 0, 0, 0, 0}));
  // A miss on the first token: one token.
  tokens.push_back(1);
  EXPECT_EQ(propose(6), (std::vector<int32_t>{2}));
  // It was taken: three.
  tokens.insert(tokens.end(), {2, 3});
  EXPECT_EQ(propose(6), (std::vector<int32_t>{4, 5, 6}));
  // Another sequence has a window of its own; a released one starts again at `max`.
  DraftGuard any(nullptr, {}, 100);
  drafter.propose(8, tokens, 4, nullptr, any, out);
  EXPECT_EQ(out.tokens.size(), 4u);
  drafter.release(7);
  EXPECT_EQ(propose(6).size(), 6u);
}

model::ModelConfig tiny_config(AttentionKind kind, int64_t hidden, int64_t vocab = 96) {
  return testing::engine_config(kind, hidden, vocab, 256);
}

Model typed_model(AttentionKind kind, WeightType w, uint64_t seed) {
  // Hidden 256 so that every block type's rows are whole blocks (Q4_K: 256 weights).
  const model::ModelConfig config = tiny_config(kind, w == WeightType::f32 ? 64 : 256);
  if (w == WeightType::f32) return testing::random_model(config, seed);
  return model::convert_matrices(testing::random_model(config, seed), model::storage_plan(config, w));
}

// A prompt with repeats, so that prompt lookup finds matches from the start.
std::vector<int32_t> repeating_prompt(int64_t vocab) {
  Rng rng(5);
  std::vector<int32_t> part(12);
  for (auto& id : part) id = static_cast<int32_t>(rng.below(vocab));
  std::vector<int32_t> p;
  for (int i = 0; i < 3; ++i) p.insert(p.end(), part.begin(), part.end());
  return p;
}

Request greedy_request(std::vector<int32_t> prompt, int64_t new_tokens) {
  Request r{std::move(prompt), {}, {}, {}};
  r.options.max_new_tokens = new_tokens;
  r.options.sampling.temperature = 0;
  r.options.logprobs = true;
  r.options.top_logprobs = 3;
  return r;
}

// The request on a fresh engine with these options, beside `others` other requests.
Stream run(const Model& model, const Request& r, const EngineOptions& o, EngineStats* stats = nullptr,
           int others = 0) {
  Engine engine(model, nullptr, o);
  Stream out;
  std::vector<Stream> other(others);
  Rng rng(17);
  for (int i = 0; i < others; ++i) {
    Request q = greedy_request(repeating_prompt(model.config.vocab_size), 10 + 3 * i);
    q.prompt.push_back(static_cast<int32_t>(rng.below(model.config.vocab_size)));
    q.options.sampling.temperature = 0.8;
    q.options.sampling.seed = 30 + i;
    testing::submit_recorded(engine, q, other[i]);
  }
  testing::submit_recorded(engine, r, out);
  engine.run_until_idle();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  if (stats) *stats = engine.stats();
  return out;
}

struct GreedyCase {
  AttentionKind kind;
  WeightType weights;
};
std::string describe(const GreedyCase& c) {
  return std::string(kernels::attention_kind_name(c.kind)) + "_" + kernels::weight_type_name(c.weights);
}
void PrintTo(const GreedyCase& c, std::ostream* out) { *out << describe(c); }

class GreedyWithDraft : public ::testing::TestWithParam<GreedyCase> {};

// Greedy tokens, logprobs and top logprobs with a draft equal those without, bit for bit: prompt
// lookup; the target drafting for itself (every draft accepted); another model drafting (most
// rejected); and prompt lookup beside three sampled requests that draft too.
TEST_P(GreedyWithDraft, IsBitIdenticalToNoDraft) {
  const GreedyCase c = GetParam();
  const Model model = typed_model(c.kind, c.weights, 7);
  const Model other = typed_model(AttentionKind::baseline, WeightType::f32, 8);
  const Request r = greedy_request(repeating_prompt(model.config.vocab_size), 32);
  EngineOptions plain;
  plain.kv_block_tokens = 16;
  const Stream want = run(model, r, plain);
  ASSERT_EQ(want.ids().size(), 32u);

  EngineOptions ngram = plain;
  ngram.draft = DraftMode::ngram;
  ngram.draft_tokens = 5;
  EngineStats st;
  expect_same_stream(run(model, r, ngram, &st), want, describe(c) + ", ngram");
  EXPECT_GT(st.draft_accepted, 0) << describe(c);
  EXPECT_LT(st.steps, 32) << describe(c) << ": drafts accepted but no step saved";
  expect_same_stream(run(model, r, ngram, nullptr, 3), want, describe(c) + ", ngram beside others");

  EngineOptions self = plain;
  self.draft = DraftMode::model;
  self.draft_model = &model;
  self.draft_tokens = 7;
  expect_same_stream(run(model, r, self, &st), want, describe(c) + ", itself as the draft");
  EXPECT_EQ(st.draft_accepted, st.draft_tokens) << describe(c);
  EXPECT_GT(st.draft_tokens, 20) << describe(c);

  EngineOptions mismatched = self;
  mismatched.draft_model = &other;
  expect_same_stream(run(model, r, mismatched, &st), want, describe(c) + ", another model as the draft");
  EXPECT_LT(st.draft_accepted, st.draft_tokens) << describe(c);
}

std::vector<GreedyCase> greedy_cases() {
  std::vector<GreedyCase> out;
  for (AttentionKind kind :
       {AttentionKind::baseline, AttentionKind::diff, AttentionKind::diff2, AttentionKind::diff_grouped})
    for (WeightType w : {WeightType::f32, WeightType::bf16, WeightType::f16, WeightType::q8_0, WeightType::q4_0,
                         WeightType::q4_k})
      out.push_back({kind, w});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Speculative, GreedyWithDraft, ::testing::ValuesIn(greedy_cases()),
                         [](const auto& info) { return describe(info.param); });

// A greedy request whose options change its choice (`change` sets them, given the first token
// without them): with the target drafting for itself, its tokens equal those without a draft, and
// every draft is taken, as the draft model proposes under the same options.
void expect_every_self_draft_taken(const std::function<void(SamplingOptions&, int32_t)>& change,
                                   const std::string& what) {
  const Model model = typed_model(AttentionKind::diff, WeightType::f32, 7);
  Request r = greedy_request(repeating_prompt(model.config.vocab_size), 24);
  EngineOptions plain;
  plain.kv_block_tokens = 16;
  const Stream unchanged = run(model, r, plain);
  change(r.options.sampling, unchanged.ids()[0]);
  const Stream want = run(model, r, plain);
  ASSERT_NE(want.ids(), unchanged.ids()) << what;
  EngineOptions self = plain;
  self.draft = DraftMode::model;
  self.draft_model = &model;
  self.draft_tokens = 6;
  EngineStats st;
  expect_same_stream(run(model, r, self, &st), want, what + ", itself as the draft");
  EXPECT_GT(st.draft_tokens, 10) << what;
  EXPECT_EQ(st.draft_accepted, st.draft_tokens) << what;
}

TEST(Speculative, BiasedGreedyDraftsUnderTheBias) {
  expect_every_self_draft_taken(
      [](SamplingOptions& o, int32_t first) { o.logit_bias = {{first, -100.0f}, {3, 4.0f}, {5, 2.5f}}; }, "biased");
}

// The penalties count the tokens drawn so far and, in a proposal, those drafted before (and the
// repetition penalty the prompt's).
TEST(Speculative, PenalisedGreedyDraftsUnderThePenalties) {
  expect_every_self_draft_taken(
      [](SamplingOptions& o, int32_t) {
        o.frequency_penalty = 0.9;
        o.presence_penalty = 0.4;
      },
      "penalised");
  // The repetition penalty counts the prompt's tokens too.
  expect_every_self_draft_taken([](SamplingOptions& o, int32_t) { o.repetition_penalty = 3; }, "repetition");
}

// A hybrid stack (Mamba state slots, sliding-window and cross layers) as the target: its drafted
// rows advance a chain of state slots and the commit keeps the accepted one, so greedy output with
// n-gram drafts and with another model's (mostly rejected) equals the output without a draft.
TEST(Speculative, HybridTargetGreedyIsBitIdenticalToNoDraft) {
  const Model other = typed_model(AttentionKind::baseline, WeightType::f32, 8);
  for (WeightType w : {WeightType::f32, WeightType::bf16, WeightType::q8_0, WeightType::q4_0}) {
    const std::string what = std::string("hybrid ") + kernels::weight_type_name(w);
    const model::ModelConfig config = testing::small_hybrid_config();
    ASSERT_EQ(config.vocab_size, other.config.vocab_size);
    const Model model = w == WeightType::f32
                            ? testing::random_model(config, 7)
                            : model::convert_matrices(testing::random_model(config, 7), model::storage_plan(config, w));
    const Request r = greedy_request(repeating_prompt(config.vocab_size), 32);
    EngineOptions plain;
    plain.kv_block_tokens = 16;
    const Stream want = run(model, r, plain);
    ASSERT_EQ(want.ids().size(), 32u) << what;

    EngineOptions ngram = plain;
    ngram.draft = DraftMode::ngram;
    ngram.draft_tokens = 5;
    EngineStats st;
    expect_same_stream(run(model, r, ngram, &st), want, what + ", ngram");
    EXPECT_GT(st.draft_accepted, 0) << what;
    EXPECT_LT(st.steps, 32) << what << ": drafts accepted but no step saved";
    expect_same_stream(run(model, r, ngram, nullptr, 3), want, what + ", ngram beside others");

    EngineOptions mismatched = plain;
    mismatched.draft = DraftMode::model;
    mismatched.draft_model = &other;
    mismatched.draft_tokens = 4;
    expect_same_stream(run(model, r, mismatched, &st), want, what + ", another model as the draft");
    EXPECT_LT(st.draft_accepted, st.draft_tokens) << what;
    EXPECT_GT(st.draft_tokens, 0) << what;
  }
}

// A constraint that allows the even ids only.
class EvenIds : public TokenConstraintSource {
 public:
  explicit EvenIds(int64_t vocab) : vocab_(vocab), mask_((vocab + 63) / 64) {
    for (int64_t i = 0; i < vocab; i += 2) mask_[i / 64] |= uint64_t{1} << (i % 64);
  }
  int64_t vocab_size() const override { return vocab_; }
  std::unique_ptr<TokenConstraint> start(std::span<const int32_t>) const override {
    struct Even : TokenConstraint {
      const uint64_t* mask;
      const uint64_t* allowed() override { return mask; }
      void accept(int32_t id) override { EXPECT_EQ(id % 2, 0); }
      bool done() const override { return false; }
      std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<Even>(*this); }
    };
    auto e = std::make_unique<Even>();
    e->mask = mask_.data();
    return e;
  }

 private:
  int64_t vocab_;
  std::vector<uint64_t> mask_;
};

// With the target drafting for itself every draft is accepted, so a step takes up to 8 tokens:
// max_new_tokens, a stop token and a constraint still act at the exact token, as without a draft
// (and the draft, drawn under the constraint, is still accepted whole).
TEST(Speculative, LimitsActInsideAnAcceptedRun) {
  const Model model = typed_model(AttentionKind::diff, WeightType::f32, 7);
  EngineOptions plain, self;
  self.draft = DraftMode::model;
  self.draft_model = &model;
  self.draft_tokens = 8;
  Rng rng(2);
  std::vector<int32_t> prompt(20);
  for (auto& id : prompt) id = static_cast<int32_t>(rng.below(model.config.vocab_size));
  const Request base = greedy_request(prompt, 30);
  const std::vector<int32_t> ids = run(model, base, plain).ids();
  ASSERT_EQ(ids.size(), 30u);

  for (int64_t limit : {1, 2, 5, 9, 13}) {
    Request r = base;
    r.options.max_new_tokens = limit;
    const Stream got = run(model, r, self);
    EXPECT_EQ(got.ids(), std::vector<int32_t>(ids.begin(), ids.begin() + limit)) << limit;
    EXPECT_EQ(got.finish(), FinishReason::length);
  }
  // A stop token at the first token after the third that was not drawn before it: the output
  // ends just before it.
  size_t at = 3;
  while (at < ids.size() && std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(at), ids[at]) !=
                                ids.begin() + static_cast<std::ptrdiff_t>(at))
    ++at;
  ASSERT_LT(at, ids.size()) << "the greedy output repeats its first tokens: pick another prompt";
  Request stop = base;
  stop.options.stop_tokens = {ids[at]};
  EngineStats st;
  const Stream got = run(model, stop, self, &st);
  EXPECT_EQ(got.ids(), std::vector<int32_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(at)));
  EXPECT_EQ(got.finish(), FinishReason::stop);

  Request even = base;
  even.options.constraint = std::make_shared<EvenIds>(model.config.vocab_size);
  const Stream want_even = run(model, even, plain);
  expect_same_stream(run(model, even, self, &st), want_even, "even ids");
  EXPECT_GT(st.draft_tokens, 0);
  EXPECT_EQ(st.draft_accepted, st.draft_tokens) << "the draft is drawn under the request's constraint";
  for (int32_t id : want_even.ids()) EXPECT_EQ(id % 2, 0);
}

// The chi-square statistic of counts against probabilities.
double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p, int64_t n) {
  double chi = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = p[i] * static_cast<double>(n);
    const double off = static_cast<double>(counts[i]) - expected;
    if (expected > 0) chi += off * off / expected;
    else EXPECT_EQ(counts[i], 0) << "id " << i << " has probability 0";
  }
  return chi;
}

// The sampler's distribution, written out: softmax of logits / temperature over the allowed ids
// (empty: all), kept to the top_k likeliest, then those at least min_p as likely as the likeliest,
// then the shortest likeliest prefix holding top_p of the mass.
std::vector<double> filtered(const std::vector<float>& logits, const SamplingOptions& o,
                             const std::vector<int32_t>& allowed = {}) {
  std::vector<int32_t> ids = allowed;
  if (ids.empty())
    for (int32_t i = 0; i < static_cast<int32_t>(logits.size()); ++i) ids.push_back(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  if (o.top_k > 0 && o.top_k < static_cast<int64_t>(ids.size())) ids.resize(o.top_k);
  std::vector<double> w;
  for (int32_t id : ids) w.push_back(std::exp((static_cast<double>(logits[id]) - logits[ids[0]]) / o.temperature));
  size_t n = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    if (w[i] >= o.min_p) ids[n] = ids[i], w[n++] = w[i];
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += w[i];
  double mass = 0;
  size_t m = 0;
  while (m < n && mass < o.top_p * total) mass += w[m++];
  std::vector<double> p(logits.size(), 0.0);
  for (size_t i = 0; i < m; ++i) p[ids[i]] = w[i] / mass;
  return p;
}

// One draw with a draft follows p whatever the draft: the likeliest id, an unlikely one, one
// outside the top-k. 200k draws over 6 ids; the 0.1% critical value of chi-square with 5 degrees
// of freedom is 20.5. A residual that kept the draft (p instead of p without it) is off by
// chi-square in the thousands.
TEST(Speculative, SampledDrawWithADraftKeepsTheTargetDistribution) {
  const std::vector<float> logits = {1.0f, 2.5f, 0.2f, 1.7f, -0.5f, 0.9f};
  constexpr int64_t kDraws = 200000;
  for (int32_t draft : {1, 4, 2}) {
    SamplingOptions o;
    o.temperature = 0.9;
    o.top_k = 5;  // id 4 is outside: never drawn, never accepted
    o.seed = 3 + draft;
    Sampler sampler(o, 6);
    std::vector<int64_t> counts(6, 0);
    int64_t accepted = 0;
    for (int64_t i = 0; i < kDraws; ++i) {
      const int32_t id = sampler.sample(logits.data(), nullptr, draft);
      ++counts[id];
      accepted += id == draft;
    }
    const std::vector<double> p = filtered(logits, o);
    EXPECT_LT(chi_square(counts, p, kDraws), 20.5) << "draft " << draft;
    // Accepted as often as p(draft): within 5 standard deviations.
    const double sd = std::sqrt(p[draft] * (1 - p[draft]) / kDraws);
    EXPECT_NEAR(static_cast<double>(accepted) / kDraws, p[draft], 5 * sd + 1e-12) << "draft " << draft;
  }
}

// Drafts drawn from a draft model's own distribution (Sampler::propose) and verified against it
// keep the target's distribution: q unlike p (other logits and temperature, mass on ids outside
// the target's top-k); q cut by its own top-k, min-p and top-p while the target draws among
// the ids a constraint allows, the draft drawn without the constraint and under it (as a
// request's draft is, infer/draft_guard.h: q then holds allowed ids only, and more of the drafts
// are accepted); 100 ids, q within its kDraftCandidates likeliest. 200k draws
// each; chi-square below the 0.1% critical value for the ids p allows, drafts
// accepted as often as sum_i min(p_i, q_i), speculative sampling's rate, and each proposal's q
// as written out. Verifying the drafts as point masses (accepting with probability p(draft))
// fails the acceptance check; a residual of p, not max(0, p - q), the chi-square.
TEST(Speculative, DraftsFromADistributionKeepTheTargetDistribution) {
  struct Case {
    std::vector<float> logits, draft_logits;
    SamplingOptions target, draft;
    std::vector<int32_t> allowed;  // empty: every id
    bool draft_allowed = false;    // the draft drawn among the allowed ids too
  };
  const std::vector<float> six = {1.0f, 2.5f, 0.2f, 1.7f, -0.5f, 0.9f};
  const std::vector<float> six_draft = {2.0f, 0.5f, 1.0f, 0.3f, 1.5f, -1.0f};
  std::vector<Case> cases(4);
  cases[0] = {six, six_draft, {}, {}, {}};
  cases[0].target.temperature = 0.9, cases[0].target.top_k = 5;
  cases[0].draft.temperature = 1.3;
  cases[1] = {six, six_draft, {}, {}, {0, 1, 3, 5}};
  cases[1].target.temperature = 1.1;
  cases[1].draft.temperature = 0.8, cases[1].draft.top_k = 4, cases[1].draft.min_p = 0.1, cases[1].draft.top_p = 0.95;
  Rng rng(11);
  for (int i = 0; i < 100; ++i) {
    cases[2].logits.push_back(static_cast<float>(3 * rng.uniform()));
    cases[2].draft_logits.push_back(cases[2].logits.back() + static_cast<float>(rng.uniform() - 0.5));
  }
  cases[2].target.temperature = 1.0;
  cases[2].draft.temperature = 1.2, cases[2].draft.top_p = 0.9;
  cases[3] = cases[1];
  cases[3].draft_allowed = true;
  constexpr int64_t kDraws = 200000;
  for (size_t c = 0; c < cases.size(); ++c) {
    Case& k = cases[c];
    const auto V = static_cast<int64_t>(k.logits.size());
    k.target.seed = 5 + c;
    k.draft.seed = 9 + c;
    std::vector<uint64_t> allowed((V + 63) / 64, k.allowed.empty() ? ~uint64_t{0} : 0);
    for (int32_t id : k.allowed) allowed[id / 64] |= uint64_t{1} << (id % 64);
    Sampler sampler(k.target, V), drafter(k.draft, V);
    const std::vector<double> p = filtered(k.logits, k.target, k.allowed);
    // q: the draft's options within its kDraftCandidates likeliest ids (no ties among these logits).
    std::vector<int32_t> likeliest = k.draft_allowed ? k.allowed : std::vector<int32_t>(V);
    if (!k.draft_allowed) std::iota(likeliest.begin(), likeliest.end(), 0);
    std::sort(likeliest.begin(), likeliest.end(), [&](int32_t a, int32_t b) { return k.draft_logits[a] > k.draft_logits[b]; });
    likeliest.resize(std::min<size_t>(likeliest.size(), Sampler::kDraftCandidates));
    const std::vector<double> q = filtered(k.draft_logits, k.draft, likeliest);
    std::vector<int64_t> counts(V, 0);
    int64_t accepted = 0;
    DraftDistribution dq;
    for (int64_t i = 0; i < kDraws; ++i) {
      const int32_t draft = drafter.propose(k.draft_logits.data(), dq, k.draft_allowed ? allowed.data() : nullptr);
      const int32_t id = sampler.sample(k.logits.data(), allowed.data(), draft, &dq);
      ++counts[id];
      accepted += id == draft;
    }
    ASSERT_EQ(dq.ids.size(), static_cast<size_t>(std::count_if(q.begin(), q.end(), [](double v) { return v > 0; })))
        << "case " << c;
    for (size_t j = 0; j < dq.ids.size(); ++j)
      EXPECT_NEAR(dq.probs[j], q[dq.ids[j]], 1e-12) << "case " << c << ", candidate " << dq.ids[j];
    // The 0.1% critical values of chi-square by degrees of freedom (the ids p allows, less one).
    const std::map<int64_t, double> critical = {{3, 16.27}, {4, 18.47}, {99, 148.23}};
    const auto dof = std::count_if(p.begin(), p.end(), [](double v) { return v > 0; }) - 1;
    ASSERT_TRUE(critical.count(dof)) << dof;
    EXPECT_LT(chi_square(counts, p, kDraws), critical.at(dof)) << "case " << c;
    double overlap = 0;
    for (int64_t i = 0; i < V; ++i) overlap += std::min(p[i], q[i]);
    const double sd = std::sqrt(overlap * (1 - overlap) / kDraws);
    EXPECT_NEAR(static_cast<double>(accepted) / kDraws, overlap, 5 * sd) << "case " << c;
  }
}

// A greedy draft sampler proposes the largest logit with no distribution (the point mass); logits
// that are not all finite give no draft.
TEST(Speculative, GreedyProposalIsTheArgmaxAndNonFiniteLogitsNone) {
  SamplingOptions o;
  o.temperature = 0;
  Sampler sampler(o, 4);
  DraftDistribution q;
  q.ids = {1};
  q.probs = {1};
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f};
  EXPECT_EQ(sampler.propose(logits.data(), q), 1);
  EXPECT_TRUE(q.ids.empty() && q.probs.empty());
  // Logits that are not all finite give no draft, greedy or sampled.
  const std::vector<float> broken = {0.5f, NAN, 2.0f, -1.0f};
  EXPECT_EQ(sampler.propose(broken.data(), q), -1);
  o.temperature = 0.8;
  EXPECT_EQ(Sampler(o, 4).propose(broken.data(), q), -1);
  EXPECT_TRUE(q.ids.empty());
}

// A sampled proposal's candidates are the kDraftCandidates likeliest ids, likeliest first (the
// larger logit, then the lower id), whatever order the logits come in: rising with the id (each
// id likelier than every kept one), falling, all equal, in runs of ties, and random.
TEST(Speculative, ProposalCandidatesAreTheLikeliestInAnyOrder) {
  constexpr int32_t V = 1000;
  Rng rng(3);
  std::vector<std::vector<float>> arrangements(5, std::vector<float>(V));
  for (int32_t i = 0; i < V; ++i) {
    arrangements[0][i] = 0.01f * i;
    arrangements[1][i] = -0.01f * i;
    arrangements[2][i] = 1.0f;
    arrangements[3][i] = static_cast<float>(i % 7);
    arrangements[4][i] = static_cast<float>(4 * rng.uniform());
  }
  SamplingOptions o;
  o.temperature = 1000;  // q keeps every candidate
  Sampler sampler(o, V);
  for (size_t a = 0; a < arrangements.size(); ++a) {
    const std::vector<float>& logits = arrangements[a];
    std::vector<int32_t> expected(V);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](int32_t x, int32_t y) { return logits[x] > logits[y]; });
    expected.resize(Sampler::kDraftCandidates);
    DraftDistribution q;
    ASSERT_GE(sampler.propose(logits.data(), q), 0);
    EXPECT_EQ(q.ids, expected) << "arrangement " << a;
  }
}

// The i-th seed none of whose bits are set in splitmix64's increment (core/rng.h): for these,
// seed ^ increment = seed + increment, so a draft stream seeded that way would replay the
// target's draws one behind (its acceptance test using the draw that picked the draft).
uint64_t seed_avoiding_the_increment(uint64_t i) {
  constexpr uint64_t kIncrement = 0x9E3779B97F4A7C15ull;
  uint64_t seed = 0;
  for (int bit = 0; bit < 64 && i; ++bit)
    if (!(kIncrement >> bit & 1)) seed |= (i & 1) << bit, i >>= 1;
  return seed;
}

// Through the engine: a Markov chain over 4 ids as the forward (each row's logits depend on its
// token), drafting up to 3 tokens as `o` says, 3 tokens per request (seeded as above, with the
// frequency penalty `frequency`), more than `min_accepted` of the drafted tokens accepted. The
// joint distribution of the 3 tokens over 12000 requests matches the chain's (each step's logits
// less the penalty times the count of each id drawn before it): chi-square over 64 cells below
// the 0.1% critical value with 63 degrees of freedom (103.4). It CAN fail: accepting a draft
// whenever it is the likeliest id, or drawing the residual with the draft kept, skews it far
// beyond that.
void expect_the_chains_distribution(EngineOptions o, double min_accepted, const std::string& what,
                                    double frequency = 0) {
  constexpr int64_t V = 4, kRequests = 12000;
  const float table[V][V] = {{2.0f, 0.5f, 1.0f, 0.0f}, {0.3f, 1.5f, 0.0f, 1.0f}, {1.0f, 1.0f, 2.2f, 0.1f},
                             {0.0f, 2.0f, 0.4f, 1.2f}};
  model::ModelConfig config = tiny_config(AttentionKind::baseline, 64, V);
  const Model model = testing::random_model(config, 1);
  const StepForward chain =
      testing::forward_by_token([&](int32_t token) { return std::vector<float>(table[token], table[token] + V); });
  o.draft_tokens = 3;
  o.max_running = 512;
  o.max_batch_tokens = 4096;
  o.max_queue = kRequests;
  Engine engine(model, nullptr, o, chain);
  std::vector<Stream> streams(kRequests);
  for (int64_t i = 0; i < kRequests; ++i) {
    // Prompts whose n-gram continuation is a likely path and an unlikely one in turn.
    Request r{i % 2 ? std::vector<int32_t>{0, 0, 2, 2, 0, 0} : std::vector<int32_t>{0, 3, 3, 1, 0, 3}, {}, {}, {}};
    r.options.max_new_tokens = 3;
    r.options.sampling.temperature = 1;
    r.options.sampling.frequency_penalty = frequency;
    r.options.sampling.seed = seed_avoiding_the_increment(static_cast<uint64_t>(i));
    testing::submit_recorded(engine, r, streams[i]);
  }
  engine.run_until_idle();
  const EngineStats st = engine.stats();
  EXPECT_GT(st.draft_accepted, min_accepted * st.draft_tokens) << what;
  EXPECT_LT(st.draft_accepted, st.draft_tokens) << what;
  for (int last : {0, 3}) {  // the prompts' last tokens: 0 (odd requests) and 3 (even ones)
    std::vector<int64_t> counts(V * V * V, 0);
    int64_t n = 0;
    for (int64_t i = last == 0 ? 1 : 0; i < kRequests; i += 2) {
      const std::vector<int32_t> ids = streams[i].ids();
      ASSERT_EQ(ids.size(), 3u) << what;
      ++counts[(ids[0] * V + ids[1]) * V + ids[2]];
      ++n;
    }
    std::vector<double> p(V * V * V);
    SamplingOptions at_one;
    at_one.temperature = 1;
    const auto prob = [&](int from, int to, std::vector<int> drawn) {
      std::vector<float> logits(table[from], table[from] + V);
      for (int id : drawn) logits[id] -= static_cast<float>(frequency);
      return filtered(logits, at_one)[to];
    };
    for (int a = 0; a < V; ++a)
      for (int b = 0; b < V; ++b)
        for (int c = 0; c < V; ++c)
          p[(a * V + b) * V + c] = prob(last, a, {}) * prob(a, b, {a}) * prob(b, c, {a, b});
    EXPECT_LT(chi_square(counts, p, n), 103.4) << what << ", prompt ending in " << last;
  }
}

TEST(Speculative, SampledTokensThroughTheEngineKeepTheChainsDistribution) {
  EngineOptions o;
  o.draft = DraftMode::ngram;
  expect_the_chains_distribution(o, 0.35, "prompt lookup");  // 42%
}

// A draft model on sampled requests draws from its own distribution (another random model over
// the same 4 ids, its weights scaled up so that q is far from uniform and from the chain's p):
// the chain's distribution holds, and 48% of the drafts are accepted (sum min(p, q)); taking
// them as point masses would keep the distribution too, but accept 22% (sum p q). The same with a
// frequency penalty, which the draft model's proposals bear too (counting the tokens drawn and
// drafted before each): the penalised chain's distribution holds.
TEST(Speculative, SampledDraftsOfADraftModelKeepTheChainsDistribution) {
  model::ModelConfig config = tiny_config(AttentionKind::baseline, 64, 4);
  const Model draft = testing::random_model(config, 23, 4.0f);
  EngineOptions o;
  o.draft = DraftMode::model;
  o.draft_model = &draft;
  expect_the_chains_distribution(o, 0.4, "a draft model");
  expect_the_chains_distribution(o, 0.4, "a draft model, penalised", 1.5);
}

// A draft model whose logits are not finite (its weights scaled to infinity) drafts nothing: the
// request decodes on as without a draft, greedy and sampled, never failing for a guess.
TEST(Speculative, ADraftWithNonFiniteLogitsDraftsNothing) {
  const Model model = typed_model(AttentionKind::baseline, WeightType::f32, 7);
  const Model broken = testing::random_model(tiny_config(AttentionKind::baseline, 64), 8, INFINITY);
  Request r = greedy_request(repeating_prompt(model.config.vocab_size), 12);
  EngineOptions plain;
  EngineOptions o = plain;
  o.draft = DraftMode::model;
  o.draft_model = &broken;
  EngineStats st;
  expect_same_stream(run(model, r, o, &st), run(model, r, plain), "greedy");
  EXPECT_EQ(st.draft_tokens, 0);
  r.options.sampling.temperature = 0.8;
  const Stream sampled = run(model, r, o, &st);
  EXPECT_EQ(sampled.ids().size(), 12u);
  EXPECT_EQ(st.draft_tokens, 0);
}

TEST(Speculative, BadDraftOptionsAreErrors) {
  const Model model = testing::random_model(tiny_config(AttentionKind::baseline, 64), 1);
  const Model wider = testing::random_model(tiny_config(AttentionKind::baseline, 64, 128), 1);
  EngineOptions o;
  o.draft = DraftMode::model;
  expect_error([&] { Engine e(model, nullptr, o); }, "needs a draft model");
  o.draft_model = &wider;
  expect_error([&] { Engine e(model, nullptr, o); }, "vocab_size 128 differs from the target's 96");
  o = {};
  o.draft = DraftMode::ngram;
  o.draft_tokens = 0;
  expect_error([&] { Engine e(model, nullptr, o); }, "draft_tokens 0 must be in [1, 64]");  // the field
  o.spelling = OptionSpelling::flag;  // the CLI's options
  expect_error([&] { Engine e(model, nullptr, o); }, "--draft-tokens 0 must be in [1, 64]");
  Engine engine(model, nullptr, EngineOptions{});
  Request r = greedy_request({1, 2, 3}, 4);
  r.options.draft = DraftMode::model;
  expect_error([&] { engine.submit(r); }, "the engine has no draft model");
  r.options.draft = DraftMode::ngram;
  r.options.draft_tokens = 65;
  expect_error([&] { engine.submit(r); }, "draft_tokens 65 must be in [0, 64]");
  // A hybrid (Mamba) draft model: the drafter runs docs/SPEC.md's decoder only.
  const Model hybrid = testing::random_model(testing::small_hybrid_config(), 1);
  o = {};
  o.draft = DraftMode::model;
  o.draft_model = &hybrid;
  expect_error([&] { Engine e(model, nullptr, o); }, "a draft model (draft) is written for docs/SPEC.md's decoder");
}

}  // namespace
}  // namespace difftx::infer
