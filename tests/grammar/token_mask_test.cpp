// Token masks (grammar/token_masks.h) against brute force - every token's bytes run through the
// automaton one by one - on a synthetic vocabulary with duplicates, prefixes, empty and control
// tokens and on Llama 3's 128K vocabulary; and the per-request constraint (grammar/constraint.h):
// stop tokens only where the document is complete, the end when nothing may follow, a reasoning
// block before the document, the reasoning budget forcing the closing marker.
#include <gtest/gtest.h>

#include "data/data_fixtures.h"
#include "data/tokenizer_files.h"
#include "grammar/constraint.h"
#include "grammar/gbnf.h"
#include "grammar/json_grammar.h"
#include "support/schema_check.h"

namespace difftx::grammar {
namespace {

using nlohmann::json;

bool bit(const uint64_t* mask, int32_t id) { return (mask[id >> 6] >> (id & 63)) & 1; }

// Whether the bytes take the automaton from s to a live state.
bool continues(Automaton& a, Automaton::State s, std::string_view bytes) {
  return !bytes.empty() && a.next(s, bytes) >= 0;
}

// controls[i] is written as the control byte kFirstControlByte + i; text tokens that hold such a
// byte are never written.
void expect_mask_is_brute_force(TokenMasks& masks, Automaton::State s, const std::vector<int32_t>& controls) {
  const auto mask = masks.allowed(s);
  const TokenVocabulary& v = masks.vocabulary();
  int64_t allowed = 0;
  for (int32_t id = 0; id < v.size(); ++id) {
    const auto control = std::find(controls.begin(), controls.end(), id);
    const std::string control_byte(1, static_cast<char>(kFirstControlByte + (control - controls.begin())));
    const bool holds_control_byte = std::any_of(v.bytes(id).begin(), v.bytes(id).end(),
                                                [](char c) { return static_cast<uint8_t>(c) >= kFirstControlByte; });
    const bool want = control != controls.end() ? continues(masks.automaton(), s, control_byte)
                                                : !v.control(id) && !holds_control_byte &&
                                                      continues(masks.automaton(), s, v.bytes(id));
    ASSERT_EQ(bit(mask->data(), id), want) << "token " << id << " '" << v.bytes(id) << "' in state " << s;
    allowed += want;
  }
  for (int64_t id = v.size(); id < static_cast<int64_t>(mask->size()) * 64; ++id) ASSERT_FALSE(bit(mask->data(), id));
}

std::shared_ptr<const TokenVocabulary> synthetic_vocabulary(Rng& rng) {
  std::vector<std::string> bytes = {"{", "}", "\"", "\":", "{\"", "\"}", ",", ", \"", "a", "ab", "abc", "b", "1", "12",
                                    "true", "tr", "ue", "null", "[", "]", " ", "\n", "\n  ", "é", "\xc3", "\xa9", "",
                                    "<tool_call>", "</think>", "<|eot|>", "ab", "<think>"};
  std::vector<bool> control(bytes.size(), false);
  control[29] = true;  // <|eot|>
  control[27] = true;  // <tool_call> as a control token
  const std::string alphabet = "{}[]\":,ab1 \nxé";
  for (int i = 0; i < 300; ++i) {
    std::string t;
    for (uint64_t n = 1 + rng.below(5); n > 0; --n) t += alphabet[rng.below(alphabet.size())];
    bytes.push_back(t);
    control.push_back(rng.below(20) == 0);
  }
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(control));
}

TEST(TokenMasks, EqualBruteForceOnASyntheticVocabulary) {
  Rng rng(3);
  const auto vocab = synthetic_vocabulary(rng);
  const auto grammar =
      json_schema_grammar(nlohmann::ordered_json::parse(R"({"type": "object", "properties": {"ab": {"type": "array",
      "items": {"anyOf": [{"type": "integer"}, {"type": "boolean"}, {"type": "string", "maxLength": 3}]}}},
      "additionalProperties": {"type": "null"}})"));
  TokenMasks masks(grammar, vocab, {27});
  Automaton& a = masks.automaton();
  for (int i = 0; i < 40; ++i) {
    const auto doc = testing::random_document(a, rng, 0.2, 300);
    if (!doc) continue;
    Automaton::State s = a.start();
    expect_mask_is_brute_force(masks, s, {27});
    for (char c : *doc) {
      s = a.next(s, static_cast<uint8_t>(c));
      expect_mask_is_brute_force(masks, s, {27});
    }
  }
  // A control token is allowed where the grammar has its marker (written as a control), and not
  // where its text would only be text: inside a string, or without write_as_controls.
  GrammarBuilder b;
  b.write_as_controls({"<tool_call>"});
  const auto tool = b.build(parse_gbnf_into(b, R"(root ::= "<tool_call>" "ab" | "\"" [^"]* "\"")"));
  TokenMasks tool_masks(tool, vocab, {27});
  Automaton& t = tool_masks.automaton();
  EXPECT_TRUE(bit(tool_masks.allowed(t.start())->data(), 27));
  const Automaton::State in_string = t.next(t.start(), "\"x");
  EXPECT_FALSE(bit(tool_masks.allowed(in_string)->data(), 27));
  EXPECT_GE(t.next(in_string, "<tool_call>\""), 0);  // its text is text there
  expect_mask_is_brute_force(tool_masks, t.start(), {27});
  expect_mask_is_brute_force(tool_masks, in_string, {27});
  const auto plain = parse_gbnf(R"(root ::= "<tool_call>" "ab")");
  TokenMasks without(plain, vocab, {27});
  EXPECT_FALSE(bit(without.allowed(without.automaton().start())->data(), 27));
}

TEST(TokenMasks, EqualBruteForceOnLlama3sVocabulary) {
  DIFFTX_REQUIRE_DATA("hf/llama3/tokenizer.json");
  const data::Tokenizer tok = data::load_tokenizer((data::data_root() / "hf" / "llama3").string());
  const auto vocab = TokenVocabulary::of(tok, tok.vocab_size());
  const auto grammar =
      json_schema_grammar(nlohmann::ordered_json::parse(R"({"type": "object", "properties": {"name": {"type": "string"},
      "n": {"type": "integer", "minimum": -5, "maximum": 50}}, "required": ["name", "n"]})"));
  TokenMasks masks(grammar, vocab);
  Automaton& a = masks.automaton();
  for (const char* prefix :
       {"", "{", "{\"name\": \"ab", "{\"name\": \"ab\\", "{\"name\": \"\", \"n\": 4", "{\"name\":\"\xc3"}) {
    const Automaton::State s = a.next(a.start(), prefix);
    ASSERT_GE(s, 0) << prefix;
    expect_mask_is_brute_force(masks, s, {});
  }
}

const std::vector<int32_t> kStops = {29};  // <|eot|>

// A constraint over the synthetic vocabulary.
struct Session {
  std::unique_ptr<infer::TokenConstraint> c;
  std::shared_ptr<const TokenVocabulary> vocab;
  int32_t id(const std::string& bytes) const {
    for (int32_t i = 0; i < vocab->size(); ++i)
      if (vocab->bytes(i) == bytes && !vocab->control(i)) return i;
    return -1;
  }
};

TEST(Constraint, AllowsStopTokensWhereCompleteAndEndsWhereNothingMayFollow) {
  Rng rng(3);
  const auto vocab = synthetic_vocabulary(rng);
  ConstraintSpec spec;
  spec.vocabulary = vocab;
  spec.grammar = std::make_shared<TokenMasks>(parse_gbnf(R"(root ::= "{" "ab"? "}" | "1" "2"?)"), vocab);
  GrammarConstraintSource source(spec);
  EXPECT_EQ(source.vocab_size(), vocab->size());
  const std::vector<int32_t> stops = {29};
  Session r{source.start(stops), vocab};
  EXPECT_FALSE(r.c->done());
  EXPECT_FALSE(bit(r.c->allowed(), 29));
  r.c->accept(r.id("{"));
  EXPECT_TRUE(bit(r.c->allowed(), r.id("ab")));
  EXPECT_FALSE(bit(r.c->allowed(), r.id("abc")));
  r.c->accept(r.id("ab"));
  r.c->accept(r.id("}"));
  EXPECT_TRUE(r.c->done());  // complete, and nothing may follow "}"
  // "1" is complete but "2" may follow: the stop token is allowed, the request goes on.
  Session one{source.start(stops), vocab};
  one.c->accept(one.id("1"));
  EXPECT_FALSE(one.c->done());
  EXPECT_TRUE(bit(one.c->allowed(), 29));
  EXPECT_TRUE(bit(one.c->allowed(), one.id("12")) == false);
  EXPECT_TRUE(bit(one.c->allowed(), one.id("1")) == false);
  // Without stop tokens a complete document ends the request.
  Session bare{source.start({}), vocab};
  bare.c->accept(bare.id("1"));
  EXPECT_TRUE(bare.c->done());
  Session fresh{source.start(stops), vocab};
  EXPECT_THROW(fresh.c->accept(one.id("}")), Error);
}

// A grammar whose match needs more states than the shared automaton holds: the request goes on in
// an automaton of its own, adopted from where it stood, and every mask is the one an automaton
// without limits gives in the same place.
TEST(Constraint, GoesOnInAnAutomatonOfItsOwnWhenTheSharedOneIsFull) {
  Rng rng(5);
  const auto vocab = synthetic_vocabulary(rng);
  const auto grammar = parse_gbnf(R"(root ::= "{" ("\"" [ab1 ]{30,50} "\"" | "[" [ab1]{20,40} "]") "}")");
  AutomatonLimits small;
  small.max_states = 24;
  ConstraintSpec spec;
  spec.vocabulary = vocab;
  spec.grammar = std::make_shared<TokenMasks>(grammar, vocab, std::vector<int32_t>{}, int64_t{1} << 20, small);
  GrammarConstraintSource source(spec);
  TokenMasks unlimited(grammar, vocab);
  for (int run = 0; run < 6; ++run) {
    Session r{source.start({}), vocab};
    Automaton::State s = unlimited.automaton().start();
    std::string text;
    while (!r.c->done()) {
      ASSERT_LT(text.size(), 200u) << "no end";
      const uint64_t* mask = r.c->allowed();
      const auto want = unlimited.allowed(s);
      std::vector<int32_t> ids;
      for (int32_t id = 0; id < vocab->size(); ++id) {
        ASSERT_EQ(bit(mask, id), bit(want->data(), id)) << "token " << id << " after '" << text << "'";
        if (bit(mask, id)) ids.push_back(id);
      }
      ASSERT_FALSE(ids.empty()) << text;
      const int32_t id = ids[rng.below(ids.size())];
      r.c->accept(id);
      s = unlimited.automaton().next(s, vocab->bytes(id));
      text += vocab->bytes(id);
    }
    EXPECT_TRUE(unlimited.automaton().complete(s)) << text;
    EXPECT_GT(text.size(), 22u);
  }
  EXPECT_EQ(spec.grammar->automaton().states(), small.max_states);  // it filled
  // A step that needs more than a whole automaton is an error.
  small.max_states = 1;
  spec.grammar = std::make_shared<TokenMasks>(grammar, vocab, std::vector<int32_t>{}, int64_t{1} << 20, small);
  GrammarConstraintSource tiny(spec);
  Session r{tiny.start({}), vocab};
  EXPECT_THROW(r.c->allowed(), AutomatonFull);
}

TEST(Constraint, ReasoningBudgetForcesTheClosingMarker) {
  Rng rng(3);
  const auto vocab = synthetic_vocabulary(rng);
  ConstraintSpec spec;
  spec.vocabulary = vocab;
  ReasoningBudget budget;
  budget.close_ids = {28};  // "</think>" as one token
  budget.block.open_at_start = true;
  budget.budget = 3;
  spec.reasoning = budget;
  GrammarConstraintSource source(spec);
  Session r{source.start(kStops), vocab};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.c->allowed(), nullptr);
    r.c->accept(r.id("ab"));
  }
  const uint64_t* forced = r.c->allowed();
  ASSERT_NE(forced, nullptr);
  for (int32_t id = 0; id < vocab->size(); ++id) EXPECT_EQ(bit(forced, id), id == 28) << id;
  r.c->accept(28);
  EXPECT_EQ(r.c->allowed(), nullptr);  // closed: free again
  // Closed early by the model: no forcing.
  Session early{source.start(kStops), vocab};
  early.c->accept(28);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(early.c->allowed(), nullptr);
    early.c->accept(early.id("ab"));
  }
  // Opened by the output (not by the prompt): counted from the marker on.
  budget.block.open_at_start = false;
  budget.budget = 1;
  spec.reasoning = budget;
  GrammarConstraintSource opened(spec);
  Session late{opened.start(kStops), vocab};
  EXPECT_EQ(late.c->allowed(), nullptr);
  late.c->accept(late.id("\n"));
  late.c->accept(late.id("<think>"));
  EXPECT_EQ(late.c->allowed(), nullptr);
  late.c->accept(late.id("ab"));
  ASSERT_NE(late.c->allowed(), nullptr);
  EXPECT_TRUE(bit(late.c->allowed(), 28));
  // A block the output does not open at its start is never counted.
  Session none{opened.start(kStops), vocab};
  none.c->accept(none.id("ab"));
  none.c->accept(none.id("<think>"));
  for (int i = 0; i < 3; ++i) none.c->accept(none.id("ab"));
  EXPECT_EQ(none.c->allowed(), nullptr);
}

}  // namespace
}  // namespace difftx::grammar
