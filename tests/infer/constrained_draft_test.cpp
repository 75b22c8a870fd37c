// Speculative decoding of constrained requests (infer/draft_guard.h): a draft follows a copy of
// the request's constraint, drawn under its mask (a draft model) or cut at the first token it
// refuses (prompt lookup), and ends after a stop token or where the document is complete. Greedy
// output with a draft stays bit-identical to the output without one; the model drafting for
// itself then has every draft accepted; sampled drafts drawn under the mask keep the target's
// distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "grammar/json_grammar.h"
#include "infer/model_drafter.h"
#include "infer/ngram_drafter.h"
#include "io/json_file.h"
#include "support/json_vocabulary.h"
#include "support/random_model.h"
#include "support/schema_check.h"

namespace difftx::infer {
namespace {

using nlohmann::json;
using testing::json_vocabulary;
using testing::kJsonEos;
using testing::kJsonVocab;
using testing::schema_constraint;
using testing::Stream;

const char* kDraftSchemas[] = {
    R"({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
        "b": {"enum": ["x", "yy", null]}, "c": {"type": "boolean"}}, "required": ["a", "b"],
        "additionalProperties": false})",
    R"({"type": "array", "items": {"type": "string", "maxLength": 3}, "minItems": 1, "maxItems": 3})",
};

int32_t id_of(const grammar::TokenVocabulary& v, std::string_view bytes) {
  for (int32_t i = 0; i < v.size(); ++i)
    if (v.bytes(i) == bytes && !v.control(i)) return i;
  ADD_FAILURE() << "no token writes " << bytes;
  return -1;
}

bool bit(const uint64_t* mask, int32_t id) { return mask[id >> 6] >> (id & 63) & 1; }

std::shared_ptr<const grammar::GrammarConstraintSource> enum_constraint(const char* values) {
  return schema_constraint(nlohmann::ordered_json::parse(std::string(R"({"enum": )") + values + "}"), json_vocabulary());
}

TEST(DraftGuard, TakesWhatTheRequestCouldTakeUpToItsEnd) {
  const auto source = enum_constraint("[1, 12]");
  const grammar::TokenVocabulary& v = *source->spec().vocabulary;
  const int32_t one = id_of(v, "1"), twelve = id_of(v, "12");
  for (bool with_stops : {true, false}) {
    SCOPED_TRACE(with_stops ? "with a stop token" : "without");
    const std::vector<int32_t> stops = with_stops ? std::vector<int32_t>{kJsonEos} : std::vector<int32_t>{};
    const auto request = source->start(stops);
    DraftGuard guard(request.get(), stops, kJsonVocab);
    EXPECT_FALSE(guard.ended());
    EXPECT_FALSE(bit(guard.allowed(), id_of(v, "a")));
    EXPECT_FALSE(guard.take(id_of(v, "a")));  // refused: the draft ends before it
    EXPECT_FALSE(guard.take(-1));
    EXPECT_FALSE(guard.take(static_cast<int32_t>(kJsonVocab)));
    ASSERT_TRUE(bit(guard.allowed(), one));
    EXPECT_TRUE(guard.take(one));
    // "1" is a whole document that "2" may continue: without stop tokens the request ends there;
    // with them it ends at one.
    EXPECT_EQ(guard.ended(), !with_stops);
    if (with_stops) {
      EXPECT_TRUE(bit(guard.allowed(), kJsonEos));
      EXPECT_FALSE(guard.take(id_of(v, "\"")));
      EXPECT_TRUE(guard.take(kJsonEos));
      EXPECT_TRUE(guard.ended());
    }
    EXPECT_FALSE(guard.take(id_of(v, "2")));  // nothing after the end
    // The request's own constraint has not moved.
    EXPECT_FALSE(request->done());
    EXPECT_TRUE(bit(request->allowed(), twelve));
    EXPECT_FALSE(bit(request->allowed(), kJsonEos));
    // A guard over a constraint that is done has ended before any token.
    request->accept(twelve);
    EXPECT_TRUE(DraftGuard(request.get(), stops, kJsonVocab).ended());
  }
  // Without a constraint: any id in the vocabulary, up to the first stop token.
  DraftGuard free(nullptr, std::vector<int32_t>{7}, 10);
  EXPECT_EQ(free.allowed(), nullptr);
  EXPECT_EQ(free.keep(std::vector<int32_t>{1, 2, 7, 3}), 3u);
  EXPECT_TRUE(free.ended());
  EXPECT_EQ(DraftGuard(nullptr, {}, 10).keep(std::vector<int32_t>{1, 12, 3}), 1u);
}

// Prompt lookup's proposal is cut at the first token the request refuses and after a stop token.
TEST(DraftGuard, CutsAPromptLookupProposal) {
  const std::vector<int32_t> tokens = {3, 4, 5, 6, 7, 3, 4};  // proposes 5 6 7 3 4 5 ...
  const auto propose = [&](std::vector<int32_t> stops, int64_t vocab) {
    DraftGuard guard(nullptr, stops, vocab);
    Draft out;
    NgramDrafter().propose(0, tokens, 6, nullptr, guard, out);
    return out.tokens;
  };
  EXPECT_EQ(propose({}, 10), (std::vector<int32_t>{5, 6, 7, 3, 4, 5}));
  EXPECT_EQ(propose({6}, 10), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(propose({}, 7), (std::vector<int32_t>{5, 6}));  // 7 is outside the ids the request draws
  // A constraint: the JSON string "a" refuses the prompt's digits.
  const auto source = enum_constraint(R"(["a"])");
  const grammar::TokenVocabulary& v = *source->spec().vocabulary;
  const int32_t quote = id_of(v, "\""), a = id_of(v, "a"), one = id_of(v, "1");
  const std::vector<int32_t> text = {quote, a, one, quote, a};  // proposes `1 " a 1 ...` after `" a`
  const auto request = source->start({});
  request->accept(quote);
  request->accept(a);
  DraftGuard guard(request.get(), {}, kJsonVocab);
  Draft out;
  NgramDrafter().propose(0, text, 6, nullptr, guard, out);
  EXPECT_TRUE(out.tokens.empty());  // `1` is refused inside the string
}

// A draft model drafts under the mask: whatever its weights, its greedy proposal writes a document
// (the request's constraint advanced through it), and ends where the document does.
TEST(DraftGuard, ADraftModelDraftsTheDocumentAndStops) {
  testing::SmallShape shape;
  shape.vocab_size = kJsonVocab;
  const model::Model draft = testing::random_model(testing::small_config(kernels::AttentionKind::diff, shape), 3, 4.0f);
  ModelDrafter drafter(draft, kJsonVocab, kernels::KvStorage::f32, 512, 512, 64, OptionSpelling::field);
  const auto source = enum_constraint(R"(["xyz", 12, true])");
  const grammar::TokenVocabulary& v = *source->spec().vocabulary;
  const auto request = source->start({});
  DraftGuard guard(request.get(), {}, kJsonVocab);
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  Draft out;
  drafter.propose(0, tokens, 30, nullptr, guard, out);
  std::string text;
  for (int32_t id : out.tokens) text += v.bytes(id);
  const json value = io::parse_json_text(text, "draft");  // insignificant whitespace allowed
  EXPECT_TRUE(value == "xyz" || value == 12 || value == true) << text;
  EXPECT_TRUE(guard.ended());
}

Request greedy_request(std::shared_ptr<const TokenConstraintSource> c, int32_t first) {
  Request r{{first, 2, 3, 4, 5}, {}, {}, {}};
  r.options.sampling.temperature = 0;
  r.options.max_new_tokens = 120;
  r.options.stop_tokens = {kJsonEos};
  r.options.logprobs = true;
  r.options.top_logprobs = 2;
  r.options.constraint = std::move(c);
  return r;
}

Stream run(const model::Model& model, const Request& r, const EngineOptions& o, EngineStats& st) {
  Engine engine(model, nullptr, o);
  Stream out;
  testing::submit_recorded(engine, r, out);
  engine.run_until_idle();
  st = engine.stats();
  return out;
}

// Greedy constrained requests give the same stream with prompt lookup, with the model drafting
// for itself (which, drafting under the same mask, has every draft accepted: unmasked, its
// drafts left the grammar and were rejected) and with another model drafting 6 and 64 tokens.
TEST(ConstrainedDraft, GreedyIsBitIdenticalToNoDraft) {
  const auto v = json_vocabulary();
  testing::SmallShape shape;
  shape.vocab_size = kJsonVocab;
  const model::Model other =
      testing::random_model(testing::small_config(kernels::AttentionKind::baseline, shape), 11, 4.0f);
  for (kernels::AttentionKind kind : {kernels::AttentionKind::baseline, kernels::AttentionKind::diff}) {
    const model::Model model = testing::random_model(testing::small_config(kind, shape), 5, 4.0f);
    for (const char* schema : kDraftSchemas) {
      const auto c = schema_constraint(nlohmann::ordered_json::parse(schema), v);
      for (int32_t first : {1, 7}) {
        const std::string what = std::string(kernels::attention_kind_name(kind)) + " " + schema;
        const Request r = greedy_request(c, first);
        EngineStats st;
        const Stream want = run(model, r, {}, st);
        ASSERT_EQ(want.finish(), FinishReason::stop) << what;
        EXPECT_EQ(testing::schema_violation(json::parse(schema),
                                            io::parse_json_text(testing::text_of(want, *v), "output")),
                  "")
            << what;
        EngineOptions o;
        o.draft = DraftMode::ngram;
        o.draft_tokens = 5;
        testing::expect_same_stream(run(model, r, o, st), want, what + ", ngram");
        o.draft = DraftMode::model;
        o.draft_model = &model;
        testing::expect_same_stream(run(model, r, o, st), want, what + ", itself");
        EXPECT_GT(st.draft_tokens, 0) << what;
        EXPECT_EQ(st.draft_accepted, st.draft_tokens) << what << ": the model drafting for itself had drafts rejected";
        o.draft_model = &other;
        for (int64_t k : {6, 64}) {
          o.draft_tokens = k;
          testing::expect_same_stream(run(model, r, o, st), want, what + ", another model, K " + std::to_string(k));
        }
      }
    }
  }
}

// Sampled constrained requests with a draft model write valid documents; the distribution is the
// sampler's to keep (Speculative.DraftsFromADistributionKeepTheTargetDistribution's masked case).
TEST(ConstrainedDraft, SampledOutputValidates) {
  const auto v = json_vocabulary();
  testing::SmallShape shape;
  shape.vocab_size = kJsonVocab;
  const model::Model model = testing::random_model(testing::small_config(kernels::AttentionKind::diff2, shape), 2, 4.0f);
  const model::Model draft =
      testing::random_model(testing::small_config(kernels::AttentionKind::baseline, shape), 12, 4.0f);
  EngineOptions o;
  o.draft = DraftMode::model;
  o.draft_model = &draft;
  o.draft_tokens = 8;
  for (const char* schema : kDraftSchemas) {
    const auto c = schema_constraint(nlohmann::ordered_json::parse(schema), v);
    Engine engine(model, nullptr, o);
    std::vector<Stream> streams(6);
    for (int i = 0; i < 6; ++i) {
      Request r = greedy_request(c, i);
      r.options.sampling.temperature = 0.5 + 0.2 * i;
      r.options.sampling.seed = 40 + i;
      testing::submit_recorded(engine, r, streams[i]);
    }
    engine.run_until_idle();
    EXPECT_GT(engine.stats().draft_accepted, 0) << schema;
    for (const Stream& s : streams) {
      const std::string text = testing::text_of(s, *v);
      ASSERT_EQ(s.finish(), FinishReason::stop) << schema << "\n" << text;
      EXPECT_EQ(testing::schema_violation(json::parse(schema), io::parse_json_text(text, "output")), "") << text;
    }
  }
}

// A constraint whose copies fail (as one whose automaton a draft fills past its limits would):
// the request's own draws go through it.
class FailingCopies : public TokenConstraintSource {
 public:
  explicit FailingCopies(std::shared_ptr<const TokenConstraintSource> inner) : inner_(std::move(inner)) {}
  int64_t vocab_size() const override { return inner_->vocab_size(); }
  std::unique_ptr<TokenConstraint> start(std::span<const int32_t> stops) const override {
    return std::make_unique<Original>(inner_->start(stops));
  }

 private:
  struct Failing : TokenConstraint {
    const uint64_t* allowed() override { fail("the copy's automaton is full"); }
    void accept(int32_t) override { fail("the copy's automaton is full"); }
    bool done() const override { return false; }
    std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<Failing>(); }
  };
  struct Original : TokenConstraint {
    explicit Original(std::unique_ptr<TokenConstraint> c) : c(std::move(c)) {}
    const uint64_t* allowed() override { return c->allowed(); }
    void accept(int32_t id) override { c->accept(id); }
    bool done() const override { return c->done(); }
    std::unique_ptr<TokenConstraint> clone() const override { return std::make_unique<Failing>(); }
    std::unique_ptr<TokenConstraint> c;
  };
  std::shared_ptr<const TokenConstraintSource> inner_;
};

// A draft is a guess: one whose constraint fails is no draft. The request's stream is the one it
// has without drafting, and its neighbour's too, where the error used to end every request.
TEST(ConstrainedDraft, ADraftThatFailsIsNoDraft) {
  testing::SmallShape shape;
  shape.vocab_size = kJsonVocab;
  const model::Model model =
      testing::random_model(testing::small_config(kernels::AttentionKind::baseline, shape), 5, 4.0f);
  const Request constrained = greedy_request(
      std::make_shared<FailingCopies>(
          schema_constraint(nlohmann::ordered_json::parse(kDraftSchemas[0]), json_vocabulary())),
      1);
  Request free = greedy_request(nullptr, 7);
  free.options.max_new_tokens = 20;
  EngineStats st;
  const Stream want = run(model, constrained, {}, st), want_free = run(model, free, {}, st);
  ASSERT_EQ(want.finish(), FinishReason::stop);
  EngineOptions o;
  o.draft = DraftMode::ngram;
  o.draft_tokens = 5;
  Engine engine(model, nullptr, o);
  Stream got, got_free;
  testing::submit_recorded(engine, constrained, got);
  testing::submit_recorded(engine, free, got_free);
  engine.run_until_idle();
  testing::expect_same_stream(got, want, "the constrained request");
  testing::expect_same_stream(got_free, want_free, "its neighbour");
}

}  // namespace
}  // namespace difftx::infer
