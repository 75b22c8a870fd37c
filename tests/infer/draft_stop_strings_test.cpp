// A draft ends where the request's text would stop (DraftGuard's copy of the request's StopText):
// a drafted token whose bytes complete a stop string is the draft's last, across the sequence's
// last token and the drafted ones, not inside a reasoning block nor before the request's
// min_tokens, and a silent token writes nothing.
#include <gtest/gtest.h>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "infer/ngram_drafter.h"
#include "infer/scheduler.h"
#include "support/engine_runs.h"
#include "support/random_model.h"

namespace difftx::infer {
namespace {

// A byte-level tokenizer whose id i writes the character '0' + i ('a' is 49, 'b' 50).
data::Tokenizer printable_tokenizer() {
  data::TokenTable bytes;
  for (int i = 0; i < 256; ++i) bytes.insert(std::string(1, static_cast<char>((i + '0') % 256)), i);
  return data::Tokenizer("printable", std::move(bytes), data::gpt2_pattern(), {{"<|endoftext|>", 256}});
}

// The ids that write `text`, a character each.
std::vector<int32_t> ids_of(std::string_view text) {
  std::vector<int32_t> ids;
  for (const char c : text) ids.push_back((static_cast<unsigned char>(c) + 256 - '0') % 256);
  return ids;
}

// How many of the tokens that write `drafted` a guard keeps after the request's text `so_far`.
size_t kept(const data::Tokenizer& tokenizer, StopText text, std::string_view so_far, std::string_view drafted,
            std::vector<int32_t> silent = {}) {
  text.push(so_far);
  DraftGuard guard(nullptr, {}, 256, {&text, &tokenizer, silent});
  const size_t n = guard.keep(ids_of(drafted));
  EXPECT_EQ(guard.ended(), n < drafted.size()) << drafted;  // a token past a stop string is refused
  return n;
}

TEST(DraftStopStrings, TheTokenThatCompletesOneIsTheDraftsLast) {
  const data::Tokenizer tokenizer = printable_tokenizer();
  const StopText ab({"ab"});
  EXPECT_EQ(kept(tokenizer, ab, "", "xabca"), 3u);  // x a b: b completes it
  EXPECT_EQ(kept(tokenizer, ab, "xa", "bc"), 1u);   // begun in the sequence's text
  EXPECT_EQ(kept(tokenizer, ab, "", "acbx"), 4u);   // never written
  EXPECT_EQ(kept(tokenizer, StopText({}), "", "abc"), 3u);  // no stop strings
  EXPECT_EQ(kept(tokenizer, ab, "xa", "bc", ids_of("b")), 2u);  // a silent b writes nothing
  // The earliest to complete ends it: "bc" at c, before "cx" would.
  EXPECT_EQ(kept(tokenizer, StopText({"cx", "bc"}), "", "abcx"), 3u);
  // Not inside a reasoning block: the thoughts may say "ab", the answer may not.
  const StopText thinking({"ab"}, ReasoningBlock{{"<t>", "</t>"}, true});
  EXPECT_EQ(kept(tokenizer, thinking, "x", "ab</t>ca"), 8u);
  EXPECT_EQ(kept(tokenizer, thinking, "x", "ab</t>cabx"), 9u);
  EXPECT_EQ(kept(tokenizer, thinking, "x</t>", "cabx"), 3u);
  // Before the request's min_tokens: no stop token, and stop strings looked for from the
  // min_tokens-th token on (here the second drafted one).
  StopText plain({"ab"});
  DraftGuard early(nullptr, std::vector<int32_t>{7}, 256, {&plain, &tokenizer, {}}, 2);
  EXPECT_FALSE(mask_allows(early.allowed(), 7));  // a draft model draws without it, as the request
  EXPECT_TRUE(mask_allows(early.allowed(), 8));
  EXPECT_EQ(early.keep(std::vector<int32_t>{7}), 0u);
  DraftGuard late(nullptr, std::vector<int32_t>{7}, 256, {&plain, &tokenizer, {}}, 2);
  EXPECT_EQ(late.keep(ids_of("ab")), 2u);  // "ab" completes at the second token: looked for
  EXPECT_TRUE(late.ended());
  DraftGuard later(nullptr, std::vector<int32_t>{7}, 256, {&plain, &tokenizer, {}}, 3);
  EXPECT_EQ(later.keep(ids_of("abx")), 3u);  // ... not before the third
  EXPECT_FALSE(later.ended());
  // The guard's copy moves, the request's text does not.
  StopText text({"ab"});
  EXPECT_EQ(text.push("a"), "");
  DraftGuard guard(nullptr, {}, 256, {&text, &tokenizer, {}});
  EXPECT_TRUE(guard.take(ids_of("b")[0]));
  EXPECT_TRUE(guard.ended());
  EXPECT_FALSE(text.stopped());
  EXPECT_EQ(text.push("c"), "ac");
}

// Through the engine: a forward whose every row favours the token after its own in the cycle
// 1 2 3, and a prompt whose prompt lookup proposes that cycle. With the stop string "12" the
// draft of the second step is 1 2 (its rows: the last token's and two), not 1 2 3.
TEST(DraftStopStrings, TheEngineDraftsUpToTheStopString) {
  const data::Tokenizer tokenizer = printable_tokenizer();
  const model::Model model =
      testing::random_model(testing::engine_config(kernels::AttentionKind::baseline, 64, 4, 256), 1);
  std::vector<float> logits;
  std::vector<int64_t> rows;
  const StepForward cycle = [&](const StepPlan& plan) {
    logits.clear();
    int64_t n = 0;
    for (const BatchRow& r : plan.rows)
      if (r.logits) {
        std::vector<float> row(4, 0.0f);
        row[r.token % 3 + 1] = 5.0f;
        logits.insert(logits.end(), row.begin(), row.end());
        ++n;
      }
    rows.push_back(n);
    return logits.data();
  };
  for (const bool stops : {false, true}) {
    EngineOptions o;
    o.draft = DraftMode::ngram;
    o.draft_tokens = 3;
    Engine engine(model, &tokenizer, o, cycle);
    Request r{{1, 2, 3, 1, 2}, {}, {}, {}};
    r.options.max_new_tokens = 10;
    r.options.sampling.temperature = 0;
    if (stops) r.options.stop_strings = {"12"};
    testing::Stream out;
    testing::submit_recorded(engine, r, out);
    rows.clear();
    ASSERT_TRUE(engine.step());  // the prompt, and the first token: 3
    engine.step();               // the draft 1 2 (3) from the prompt's cycle
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1], stops ? 3 : 4) << (stops ? "with" : "without") << " the stop string";
    if (stops) {
      EXPECT_EQ(out.ids(), (std::vector<int32_t>{3, 1, 2}));
      EXPECT_EQ(out.finish(), FinishReason::stop);
      EXPECT_EQ(out.text(), "3");
    }
  }
  // With min_tokens 4 the first "12" (tokens 2 and 3) is text and the second ends it, with the
  // draft as without.
  for (const DraftMode mode : {DraftMode::none, DraftMode::ngram}) {
    EngineOptions o;
    o.draft = mode;
    o.draft_tokens = 3;
    Engine engine(model, &tokenizer, o, cycle);
    Request r{{1, 2, 3, 1, 2}, {}, {}, {}};
    r.options.max_new_tokens = 10;
    r.options.min_tokens = 4;
    r.options.sampling.temperature = 0;
    r.options.stop_strings = {"12"};
    testing::Stream out;
    testing::submit_recorded(engine, r, out);
    rows.clear();
    engine.run_until_idle();
    EXPECT_EQ(out.ids(), (std::vector<int32_t>{3, 1, 2, 3, 1, 2})) << draft_mode_name(mode);
    EXPECT_EQ(out.text(), "3123") << draft_mode_name(mode);
    // The second step's draft is 1 2 3 whole: the "12" it writes comes before the fourth token.
    if (mode == DraftMode::ngram) {
      EXPECT_EQ(rows.at(1), 4);
    }
  }
}

}  // namespace
}  // namespace difftx::infer
