// tokenizer.json on small files made here: Hugging Face's merge rule (only listed pairs merge,
// ignore_merges), Split behaviours, added-token flags, the template and tokenizer_config.json,
// generation defaults, and hostile or unsupported files, which must fail with an error naming
// the key.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "data/bpe.h"
#include "data/bpe_trainer.h"
#include "data/byte_level.h"
#include "data/generation_defaults.h"
#include "data/hf_tokenizer.h"
#include "data_fixtures.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using json = nlohmann::json;
using testing::TempDir;

// The 256 bytes, then he (256), ll (257), hell (258), hello (259) by four merges, and lo (262)
// with no merge making it; added tokens <|endoftext|> (260, special) and <sep> (261, not
// special, stripping white space on both sides).
json toy() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_encode(std::string(1, static_cast<char>(b)))] = b;
  vocab["he"] = 256, vocab["ll"] = 257, vocab["hell"] = 258, vocab["hello"] = 259, vocab["lo"] = 262;
  const json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
  return {{"version", "1.0"},
          {"added_tokens",
           {{{"id", 260}, {"content", "<|endoftext|>"}, {"special", true}},
            {{"id", 261}, {"content", "<sep>"}, {"special", false}, {"lstrip", true}, {"rstrip", true}}}},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", R"(\s+|[^\s]+)"}}}, {"behavior", "Isolated"}, {"invert", false}},
              byte_level}}}},
          {"post_processor", nullptr},
          {"decoder", byte_level},
          {"model",
           {{"type", "BPE"},
            {"vocab", vocab},
            {"merges", json::parse(R"([["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"]])")},
            {"ignore_merges", false}}}};
}

Tokenizer load(const TempDir& dir, const json& j, const json& config = nullptr) {
  if (!config.is_null()) dir.write(kHfTokenizerConfigFile, config.dump());
  return read_hf_tokenizer(dir.write(kHfTokenizerFile, j.dump()));
}

std::vector<int32_t> bytes_of(const std::string& s) {
  std::vector<int32_t> ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

TEST(HfTokenizer, MergesOnlyListedPairs) {
  TempDir dir;
  const Tokenizer tok = load(dir, toy());
  EXPECT_EQ(tok.encode("hello"), std::vector<int32_t>{259});
  EXPECT_EQ(tok.encode("hel"), (std::vector<int32_t>{256, 'l'}));
  EXPECT_EQ(tok.encode("lo"), bytes_of("lo"));  // a token, but no merge makes it
  EXPECT_EQ(tok.vocab_size(), 263);
  EXPECT_EQ(tok.end_of_text(), 260);
  json j = toy();
  j["model"]["ignore_merges"] = true;  // a piece that is a token is that token
  EXPECT_EQ(load(dir, j).encode("lo hello"), (std::vector<int32_t>{262, ' ', 259}));
  j["model"]["merges"] = {"h e", "l l", "he ll", "hell o"};  // the older encoding of merges
  EXPECT_EQ(load(dir, j).encode("hello"), std::vector<int32_t>{259});
}

TEST(HfTokenizer, AddedTokensStripAndSpecialsFollowTheCaller) {
  TempDir dir;
  const Tokenizer tok = load(dir, toy());
  // <sep> is not special: matched either way, taking the spaces around it.
  EXPECT_EQ(tok.encode("a  <sep>\n b"), (std::vector<int32_t>{'a', 261, 'b'}));
  EXPECT_EQ(tok.encode("x<|endoftext|>", Specials::allowed), (std::vector<int32_t>{'x', 260}));
  EXPECT_EQ(tok.encode("x<|endoftext|>", Specials::as_text).size(), 14u);
  EXPECT_EQ(tok.decode(std::vector<int32_t>{'a', 261, 260, 259}), "a<sep><|endoftext|>hello");
}

TEST(HfTokenizer, BpePathsAgreeUnderTheMergeListRule) {
  Rng rng(21);
  std::vector<std::string> docs;
  for (int i = 0; i < 30; ++i) docs.push_back(testing::random_text(rng, 2000));
  std::vector<std::string_view> views(docs.begin(), docs.end());
  TempDir dir;
  write_hf_tokenizer(train_bpe(views, {.vocab_size = 800}), dir.path());
  const Tokenizer tok = read_hf_tokenizer(dir / kHfTokenizerFile);
  ASSERT_TRUE(tok.parts().merges.has_value());
  const MergeRule rule{tok.ranks(), &*tok.parts().merges};
  for (int i = 0; i < 300; ++i) {
    const std::string piece = testing::random_text(rng, 1 + rng.below(i < 290 ? 40 : 3000));
    std::vector<int32_t> want, scan, heap;
    bpe_encode_reference(rule, piece, want);
    bpe_encode_scan(rule, piece, scan);
    bpe_encode_heap(rule, piece, heap);
    ASSERT_EQ(scan, want) << "piece of " << piece.size() << " bytes";
    ASSERT_EQ(heap, want) << "piece of " << piece.size() << " bytes";
  }
}

// Hugging Face's documented example of each behaviour, splitting on "-".
TEST(HfTokenizer, SplitBehaviours) {
  const std::vector<std::pair<SplitBehavior, std::vector<std::string>>> cases = {
      {SplitBehavior::removed, {"the", "final", "countdown"}},
      {SplitBehavior::isolated, {"the", "-", "final", "-", "-", "countdown"}},
      {SplitBehavior::merged_with_previous, {"the-", "final-", "-", "countdown"}},
      {SplitBehavior::merged_with_next, {"the", "-final", "-", "-countdown"}},
      {SplitBehavior::contiguous, {"the", "-", "final", "--", "countdown"}},
  };
  for (const auto& [behavior, want] : cases) {
    const PreTokenizer pre({SplitStep{SplitPattern("-", SplitPattern::Mode::searching), behavior}});
    std::vector<std::string> got;
    pre.split("the-final--countdown", [&](std::string_view p) { got.emplace_back(p); });
    EXPECT_EQ(got, want) << "behavior " << static_cast<int>(behavior);
  }
  // invert: the words are the delimiters; removing them leaves the dashes.
  const PreTokenizer inverted({SplitStep{SplitPattern("[a-z]+", SplitPattern::Mode::searching), SplitBehavior::removed, true}});
  std::vector<std::string> got;
  inverted.split("the-final--countdown", [&](std::string_view p) { got.emplace_back(p); });
  EXPECT_EQ(got, (std::vector<std::string>{"the", "final", "countdown"}));
}

TEST(HfTokenizer, TemplateAndTokenizerConfig) {
  TempDir dir;
  json j = toy();
  j["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel"},
      {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<sep>"}}, {"Sequence": {"id": "A"}}],
       "special_tokens": {"<sep>": {"id": "<sep>", "ids": [261]}}}]})");
  const std::vector<int32_t> hello = {259};
  EXPECT_EQ(load(dir, j).add_template(hello), (std::vector<int32_t>{261, 259}));
  EXPECT_EQ(load(dir, j, {{"add_bos_token", false}, {"bos_token", "<sep>"}}).add_template(hello), hello);
  EXPECT_EQ(load(dir, toy(), {{"add_bos_token", true}, {"bos_token", {{"content", "<|endoftext|>"}}},
                              {"add_eos_token", true}, {"eos_token", "<sep>"}})
                .add_template(hello),
            (std::vector<int32_t>{260, 259, 261}));
  // Written and read back, the template survives.
  TempDir fresh;
  write_hf_tokenizer(load(fresh, j), dir / "out");
  EXPECT_EQ(read_hf_tokenizer(dir / "out" / kHfTokenizerFile).add_template(hello), (std::vector<int32_t>{261, 259}));
}

// tokenizer_config.json's special tokens, as the tokenizer and the chat template both read them:
// a string or an AddedToken object; anything else is no token (the tokenizer's bos_token and
// eos_token then refuse it by name; the template skips it).
TEST(HfTokenizer, SpecialTokenTextIsAStringOrAnAddedTokensContent) {
  EXPECT_EQ(special_token_text(json("<s>")), "<s>");
  EXPECT_EQ(special_token_text(json{{"content", "</s>"}, {"lstrip", false}, {"special", true}}), "</s>");
  EXPECT_EQ(special_token_text(json("")), "");
  for (const json& other : {json(nullptr), json(5), json{{"content", 5}}, json{{"text", "<s>"}}, json::array({"<s>"})})
    EXPECT_EQ(special_token_text(other), std::nullopt) << other.dump();
  TempDir dir;
  const std::string error = [&] {
    try {
      load(dir, toy(), {{"eos_token", {{"content", 7}}}});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  }();
  EXPECT_NE(error.find(".eos_token: expected a string or {\"content\": STRING}"), std::string::npos) << error;
}

TEST(HfTokenizer, RefusesWhatItDoesNotSupportByName) {
  using Edit = std::function<void(json&)>;
  const std::vector<std::pair<Edit, std::string>> cases = {
      {[](json& j) { j["model"]["type"] = "Unigram"; }, "model type \"Unigram\" is not supported"},
      {[](json& j) { j["model"]["type"] = "WordPiece"; }, "model type \"WordPiece\" is not supported"},
      {[](json& j) { j["model"]["byte_fallback"] = true; }, "byte_fallback: true"},
      {[](json& j) { j["model"]["dropout"] = 0.1; }, "dropout"},
      {[](json& j) { j["model"]["continuing_subword_prefix"] = "##"; }, "continuing_subword_prefix"},
      {[](json& j) { j["pre_tokenizer"] = {{"type", "Metaspace"}}; }, "pre-tokenizer type \"Metaspace\""},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }, "no ByteLevel step"},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true; }, "add_prefix_space"},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"; }, "unknown behavior \"Sideways\""},
      {[](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "(unclosed"}}; }, "pre_tokenizer.pretokenizers[0].pattern"},
      {[](json& j) { j["normalizer"] = {{"type", "Lowercase"}}; }, "normalizer type \"Lowercase\""},
      {[](json& j) { j["decoder"] = {{"type", "Metaspace"}}; }, "decoder type \"Metaspace\""},
      {[](json& j) { j["post_processor"] = {{"type", "RobertaProcessing"}}; }, "post-processor type \"RobertaProcessing\""},
      {[](json& j) { j["model"]["vocab"]["he"] = -1; }, "expected an integer id in [0, 16777215]"},
      {[](json& j) { j["model"]["vocab"]["he"] = 1 << 30; }, "expected an integer id in [0, 16777215]"},
      {[](json& j) { j["model"]["vocab"]["he"] = 0; }, "id 0 is given to two tokens"},
      {[](json& j) { j["model"]["vocab"]["a b"] = 300; }, "is not a string of the byte-level alphabet"},
      {[](json& j) { j["model"]["vocab"].erase(byte_level_encode("q")); }, "no token for the byte 0x71"},
      {[](json& j) { j["model"]["merges"].push_back(json::array({"x", "zz"})); }, "merges[4]: 'zz' is not in the vocabulary"},
      {[](json& j) { j["model"]["merges"].push_back(json::array({"x", "y"})); }, "the merged token 'xy' is not in the vocabulary"},
      {[](json& j) { j["model"]["merges"].push_back("x y z"); }, "separated by one space"},
      {[](json& j) { j["model"]["merges"] = 5; }, "merges: expected an array"},
      {[](json& j) { j["model"].erase("vocab"); }, "missing key \"vocab\""},
      {[](json& j) { j["added_tokens"][0]["id"] = 65; }, "already the rank of an ordinary token"},
      {[](json& j) { j["added_tokens"][1]["id"] = 260; }, "two added tokens have id 260"},
      {[](json& j) { j["added_tokens"][1]["single_word"] = true; }, "single_word: true is not supported"},
      {[](json& j) { j["added_tokens"][0]["content"] = "x"; }, "no end-of-text token"},
      {[](json& j) {
         for (int i = 0; i < 100; ++i) j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {j["pre_tokenizer"]}}};
       },
       "JSON nested deeper than 64 levels"},
  };
  for (const auto& [edit, message] : cases) {
    json j = toy();
    edit(j);
    TempDir dir;
    try {
      load(dir, j);
      ADD_FAILURE() << "no error; expected: " << message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what() << "\nexpected: " << message;
    }
  }
  TempDir dir;
  EXPECT_THROW(read_hf_tokenizer(dir.write(kHfTokenizerFile, toy().dump().substr(0, 500))), Error);
  try {
    load(dir, toy(), {{"add_bos_token", true}, {"bos_token", "<nope>"}});
    ADD_FAILURE() << "no error for an unknown bos_token";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'<nope>' is not an added token"), std::string::npos) << e.what();
  }
}

TEST(GenerationDefaults, ReadsEosIdsAndSamplingDefaults) {
  TempDir dir;
  dir.write("config.json", R"({"eos_token_id": 260})");
  dir.write("generation_config.json", R"({"eos_token_id": [261, 260], "temperature": 0.6, "top_p": 0.9,
                                          "top_k": 20, "max_new_tokens": 7, "min_p": 0.05,
                                          "repetition_penalty": 1.05})");
  GenerationDefaults d = read_generation_defaults(dir.path());
  EXPECT_EQ(d.eos_ids, (std::vector<int32_t>{260, 261}));
  EXPECT_EQ(d.temperature, 0.6);
  EXPECT_EQ(d.top_p, 0.9);
  EXPECT_EQ(d.top_k, 20);
  EXPECT_EQ(d.max_new_tokens, 7);
  EXPECT_EQ(d.min_p, 0.05);
  EXPECT_EQ(d.repetition_penalty, 1.05);
  const Tokenizer tok = load(dir, toy(), {{"add_bos_token", true}, {"bos_token", "<sep>"}});
  const PromptFrame frame = prompt_frame(tok, d);
  EXPECT_EQ(frame.prefix, std::vector<int32_t>{261});
  EXPECT_EQ(frame.stop, (std::vector<int32_t>{260, 261}));
  EXPECT_EQ(prompt_frame(tok, {}).stop, std::vector<int32_t>{260});  // no eos ids: the tokenizer's

  dir.write("generation_config.json", R"({"do_sample": false, "temperature": 0.6})");
  EXPECT_EQ(read_generation_defaults(dir.path()).temperature, 0.0);
  for (const char* bad : {R"({"eos_token_id": -3})", R"({"eos_token_id": ["x"]})", R"({"top_p": 2})", "{",
                          R"({"min_p": -0.1})", R"({"repetition_penalty": 0})", R"({"repetition_penalty": 11})"}) {
    dir.write("generation_config.json", bad);
    EXPECT_THROW(read_generation_defaults(dir.path()), Error) << bad;
  }
}

TEST(GenerationDefaults, ErrorsSayWhetherAnIntegerIsExpected) {
  TempDir dir;
  dir.write("generation_config.json", R"({"max_new_tokens": 1e9})");
  std::string e = difftx::testing::error_of([&] { read_generation_defaults(dir.path()); });
  EXPECT_NE(e.find("max_new_tokens: expected an integer in [0, 1000000000], got 1000000000.0"), std::string::npos) << e;
  dir.write("generation_config.json", R"({"top_p": 2})");
  e = difftx::testing::error_of([&] { read_generation_defaults(dir.path()); });
  EXPECT_NE(e.find("top_p: expected a number in [0, 1], got 2"), std::string::npos) << e;
}

}  // namespace
}  // namespace difftx::data
