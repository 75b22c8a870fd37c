// A slow tokenizer's vocab.json and merges.txt (hf_tokenizer.h, read_hf_slow_tokenizer). Qwen 3's
// tokenizer.json is what transformers' Qwen2Converter makes of those files, so its vocabulary and
// merges written out as them, with its tokenizer_config.json, must encode as transformers.js
// encodes the tokenizer.json (the oracle cases of hf_tokenizer_oracle_test.cpp). GPT2Tokenizer's
// conversion against the tokenizer.json GPT2Converter writes (GPT-2's split pattern, BOS with
// add_bos_token, special tokens from the config); and the errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/byte_level.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "io/input_file.h"
#include "source_dir.h"

namespace difftx::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

// vocab.json and merges.txt ("#version" first, "LEFT RIGHT" lines) from a tokenizer.json's model.
void write_slow_files(const TempDir& dir, const json& tokenizer_json) {
  dir.write(kHfVocabFile, tokenizer_json.at("model").at("vocab").dump());
  std::string merges = "#version: 0.2\n";
  for (const json& m : tokenizer_json.at("model").at("merges")) {
    merges += m.is_array() ? m[0].get<std::string>() + " " + m[1].get<std::string>() : m.get<std::string>();
    merges += "\n";
  }
  dir.write(kHfMergesFile, merges);
}

TEST(HfSlowTokenizer, QwensVocabAndMergesEncodeAsTransformersJsDoes) {
  DIFFTX_REQUIRE_DATA("hf/qwen3/tokenizer.json");
  const fs::path qwen = data_root() / "hf" / "qwen3";
  TempDir dir;
  write_slow_files(dir, json::parse(io::read_whole_file(qwen / kHfTokenizerFile)));
  fs::copy_file(qwen / kHfTokenizerConfigFile, dir / kHfTokenizerConfigFile);  // Qwen2Tokenizer
  ASSERT_TRUE(has_tokenizer_files(dir.path()));
  const Tokenizer tok = load_tokenizer(dir.path().string());
  const Tokenizer fast = load_tokenizer(qwen.string());
  EXPECT_EQ(tok.vocab_size(), fast.vocab_size());
  EXPECT_EQ(tok.end_of_text(), fast.end_of_text());
  const fs::path cases = fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/tokenizer/qwen3.json";
  const json oracle = json::parse(io::read_whole_file(cases));
  ASSERT_GE(oracle.at("cases").size(), 40u);
  for (const json& c : oracle.at("cases")) {
    const std::string text = c.at("text");
    const std::vector<int32_t> ids = tok.encode(text, Specials::allowed);
    EXPECT_EQ(ids, c.at("ids").get<std::vector<int32_t>>()) << text.substr(0, 80);
    EXPECT_EQ(tok.add_template(ids), c.at("ids_with_template").get<std::vector<int32_t>>()) << text.substr(0, 80);
    EXPECT_EQ(tok.decode(ids), c.at("decoded").get<std::string>());
  }
  // Without the class, config.json's model_type decides.
  json config = json::parse(io::read_whole_file(dir / kHfTokenizerConfigFile));
  config.erase("tokenizer_class");
  dir.write(kHfTokenizerConfigFile, config.dump());
  dir.write("config.json", R"({"model_type": "qwen3"})");
  EXPECT_EQ(load_tokenizer(dir.path().string()).encode("Hello,  world!\n\n"), fast.encode("Hello,  world!\n\n"));
}

// A byte-level vocabulary small enough to write out: the 256 bytes (id = byte) and a few merges;
// the first, "! h", is one that GPT-2's pattern keeps from happening ("!" and "hello" are pieces).
json small_vocab() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_encode(std::string(1, static_cast<char>(b)))] = b;
  int id = 256;
  for (const char* t : {"he", "ll", "hell", "hello", "\xc4\xa0w", "or", "\xc4\xa0wor", "12", "<|endoftext|>", "!h"})
    vocab[t] = id++;
  return vocab;
}
const char* const kSmallMerges = "#version: 0.2\n! h\nh e\nl l\nhe ll\nhell o\n\xc4\xa0 w\no r\n\xc4\xa0w or\n1 2\n";

// What GPT2Converter writes for the files below: BPE, a ByteLevel pre-tokenizer with GPT-2's
// pattern, the special tokens as added tokens, BOS first (add_bos_token).
json gpt2_converted_json() {
  json t;
  t["model"] = {{"type", "BPE"}, {"vocab", small_vocab()}, {"merges", json::array()}};
  for (const char* m : {"! h", "h e", "l l", "he ll", "hell o", "\xc4\xa0 w", "o r", "\xc4\xa0w or", "1 2"})
    t["model"]["merges"].push_back(m);
  t["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  t["decoder"] = {{"type", "ByteLevel"}};
  t["added_tokens"] = {{{"id", 264}, {"content", "<|endoftext|>"}, {"special", true}},
                       {{"id", 266}, {"content", "<|pad|>"}, {"special", true}}};
  t["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", {{{"SpecialToken", {{"id", "<|endoftext|>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                         {"special_tokens", {{"<|endoftext|>", {{"ids", {264}}}}}}};
  return t;
}

TEST(HfSlowTokenizer, Gpt2TokenizerConvertsAsGpt2ConverterDoes) {
  TempDir slow, fast;
  slow.write(kHfVocabFile, small_vocab().dump());
  slow.write(kHfMergesFile, kSmallMerges);
  const std::string config = R"({"tokenizer_class": "GPT2Tokenizer", "add_bos_token": true,
    "bos_token": "<|endoftext|>", "eos_token": {"content": "<|endoftext|>"}, "pad_token": "<|pad|>"})";
  slow.write(kHfTokenizerConfigFile, config);
  fast.write(kHfTokenizerFile, gpt2_converted_json().dump());
  const Tokenizer got = load_tokenizer(slow.path().string()), want = load_tokenizer(fast.path().string());
  EXPECT_EQ(got.vocab_size(), 267);  // <|pad|> past the vocabulary, as transformers adds it
  Rng rng(4);
  for (int i = 0; i < 200; ++i) {
    std::string text;
    static const char* const kPieces[] = {"h", "e",  "l",  "o",  " ",        "w",   "r",     "1",      "2",
                                          "!", "\n", "\t", "'s", "\xc3\xa9", "  ", "hello", " world", "<|endoftext|>"};
    for (uint64_t n = rng.below(30); n > 0; --n) text += kPieces[rng.below(std::size(kPieces))];
    const auto ids = got.encode(text, Specials::allowed);
    ASSERT_EQ(ids, want.encode(text, Specials::allowed)) << text;
    ASSERT_EQ(got.add_template(ids), want.add_template(ids)) << text;
    ASSERT_EQ(got.add_template(ids).front(), 264);
  }
  EXPECT_EQ(got.encode(" hello world"), (std::vector<int32_t>{32, 259, 262, 108, 100}));
  EXPECT_EQ(got.encode("!hello 12"), (std::vector<int32_t>{33, 259, 32, 263}));
}

// What transformers takes beyond the two files: the class's default special tokens (GPT-2's
// model repository has a tokenizer_config.json with none), the legacy added_tokens.json and
// special_tokens_map.json (read only without added_tokens_decoder), and GPT2Tokenizer's reading
// of merges.txt (the first line and an unterminated last line are not merges).
TEST(HfSlowTokenizer, FollowsTransformersDefaultsLegacyFilesAndGpt2sMergeLines) {
  TempDir dir;
  dir.write(kHfVocabFile, small_vocab().dump());
  dir.write(kHfMergesFile, kSmallMerges);
  dir.write(kHfTokenizerConfigFile, R"({"model_max_length": 1024})");
  dir.write("config.json", R"({"model_type": "gpt2"})");
  const Tokenizer plain = load_tokenizer(dir.path().string());
  EXPECT_EQ(plain.vocab_size(), 266);
  EXPECT_EQ(plain.end_of_text(), 264);  // eos (and bos, unk) default to <|endoftext|>
  EXPECT_EQ(plain.encode("a<|endoftext|>", Specials::allowed), (std::vector<int32_t>{97, 264}));
  EXPECT_EQ(plain.encode("hello 12"), (std::vector<int32_t>{259, 32, 263}));

  dir.write("added_tokens.json", R"({"<|pad|>": 266, "<tool>": 267})");
  dir.write("special_tokens_map.json", R"({"pad_token": "<|pad|>"})");
  const Tokenizer legacy = load_tokenizer(dir.path().string());
  EXPECT_EQ(legacy.vocab_size(), 268);
  EXPECT_EQ(legacy.encode("<tool><|pad|>", Specials::as_text)[0], 267);  // not special: always matched
  EXPECT_GT(legacy.encode("<|pad|>", Specials::as_text).size(), 1u);     // special
  EXPECT_EQ(legacy.encode("<|pad|>", Specials::allowed), (std::vector<int32_t>{266}));

  // With added_tokens_decoder the legacy files are not read.
  dir.write(kHfTokenizerConfigFile,
            R"({"added_tokens_decoder": {"264": {"content": "<|endoftext|>", "special": true}}})");
  const Tokenizer current = load_tokenizer(dir.path().string());
  EXPECT_EQ(current.vocab_size(), 266);
  EXPECT_GT(current.encode("<tool>", Specials::allowed).size(), 1u);

  // GPT2Tokenizer drops merges.txt's first line and an unterminated last one.
  std::string merges = std::string(kSmallMerges).substr(std::string(kSmallMerges).find('\n') + 1);  // no #version
  merges.pop_back();                                                                             // no last '\n'
  dir.write(kHfMergesFile, merges);
  const Tokenizer cut = load_tokenizer(dir.path().string());
  EXPECT_EQ(cut.encode("!hello 12"), (std::vector<int32_t>{33, 259, 32, 49, 50}));
  dir.write(kHfTokenizerConfigFile, R"({"tokenizer_class": "Qwen2Tokenizer"})");  // Qwen's reader keeps both
  EXPECT_EQ(load_tokenizer(dir.path().string()).encode("!hello 12"),
            (std::vector<int32_t>{265, 101, 257, 111, 32, 49, 50}));  // "! h" merged: one piece in Qwen's pattern
}

TEST(HfSlowTokenizer, ErrorsNameTheFileAndWhatIsWrong) {
  TempDir dir;
  dir.write(kHfVocabFile, small_vocab().dump());
  dir.write(kHfMergesFile, "#version: 0.2\nh e\nl l x\n");
  dir.write(kHfTokenizerConfigFile, R"({"tokenizer_class": "GPT2TokenizerFast"})");
  const auto message = [&] {
    try {
      load_tokenizer(dir.path().string());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message().find("merges.txt:3: expected two tokens"), std::string::npos) << message();
  dir.write(kHfMergesFile, "h e\nz q\n");
  EXPECT_NE(message().find("the merged token 'zq' is not in the vocabulary"), std::string::npos) << message();
  dir.write(kHfMergesFile, kSmallMerges);
  dir.write(kHfTokenizerConfigFile, R"({"tokenizer_class": "LlamaTokenizer"})");
  EXPECT_NE(message().find("tokenizer_class 'LlamaTokenizer'"), std::string::npos) << message();
  dir.write(kHfTokenizerConfigFile, R"({"tokenizer_class": "GPT2Tokenizer", "add_prefix_space": true})");
  EXPECT_NE(message().find("add_prefix_space true is not supported"), std::string::npos) << message();
  dir.write(kHfTokenizerConfigFile, R"({"eos_token": "<|endoftext|>"})");
  EXPECT_NE(message().find("names no tokenizer_class"), std::string::npos) << message();
  dir.write(kHfTokenizerConfigFile, R"({"tokenizer_class": "GPT2Tokenizer", "added_tokens_decoder": {"x": {}}})");
  EXPECT_NE(message().find("key 'x' is not a token id"), std::string::npos) << message();
  fs::remove(dir / kHfMergesFile);
  EXPECT_FALSE(has_tokenizer_files(dir.path()));
  EXPECT_NE(message().find("no tokenizer in this directory"), std::string::npos) << message();
}

}  // namespace
}  // namespace difftx::data
