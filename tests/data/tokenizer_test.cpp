// Tokenizer behaviour beyond the published vectors: round trips on random UTF-8, special
// tokens, invalid input, long inputs, and name resolution.
#include <gtest/gtest.h>

#include <cstdlib>

#include "data/bpe_trainer.h"
#include "data/encodings.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using testing::random_text;

using difftx::testing::error_of;

class EveryEncoding : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryEncoding, DecodeInvertsEncodeOnRandomUtf8) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  const Tokenizer tok = load_tokenizer(GetParam());
  Rng rng(17);
  for (int i = 0; i < 60; ++i) {
    const std::string text = random_text(rng, 1 + rng.below(2000));
    const auto ids = tok.encode(text);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.vocab_size());
    ASSERT_EQ(tok.decode(ids), text);
    ASSERT_EQ(tok.decode(tok.encode(text, Specials::allowed)), text);
  }
}

TEST_P(EveryEncoding, SpecialTokensAreTextUnlessAllowed) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  const Tokenizer tok = load_tokenizer(GetParam());
  const std::string text = "a<|endoftext|>b";
  const auto plain = tok.encode(text);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tok.end_of_text()), 0);
  const auto allowed = tok.encode(text, Specials::allowed);
  std::vector<int32_t> want = tok.encode("a");
  want.push_back(tok.end_of_text());
  for (int32_t id : tok.encode("b")) want.push_back(id);
  EXPECT_EQ(allowed, want);
  EXPECT_EQ(tok.decode(allowed), text);
  EXPECT_EQ(tok.encode("<|endoftext|>", Specials::allowed), std::vector<int32_t>{tok.end_of_text()});
}

TEST_P(EveryEncoding, LongRunsEncodeExactly) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  const Tokenizer tok = load_tokenizer(GetParam());
  // One giant piece each: letters, digits are cut in threes, whitespace, punctuation.
  for (const std::string& text : {std::string(300000, 'a'), std::string(100000, ' ') + "x",
                                  std::string(100000, '\n'), std::string(50000, '!'),
                                  std::string(30000, '7')})
    ASSERT_EQ(tok.decode(tok.encode(text)), text) << text.size() << " bytes of '" << text[0] << "'";
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, EveryEncoding,
                         ::testing::Values("r50k_base", "p50k_base", "cl100k_base", "o200k_base"),
                         [](const auto& info) { return info.param; });

TEST(Tokenizer, KnownFactsOfTheEncodings) {
  DIFFTX_REQUIRE_DATA("tokenizers/cl100k_base.tiktoken");
  const Tokenizer cl = load_tokenizer("cl100k_base");
  EXPECT_EQ(cl.vocab_size(), 100277);
  EXPECT_EQ(cl.end_of_text(), 100257);
  EXPECT_EQ(cl.encode("hello world"), (std::vector<int32_t>{15339, 1917}));
  const Tokenizer gpt2 = load_tokenizer("r50k_base");
  EXPECT_EQ(gpt2.vocab_size(), 50257);
  EXPECT_EQ(gpt2.end_of_text(), 50256);
  EXPECT_EQ(gpt2.encode("hello world"), (std::vector<int32_t>{31373, 995}));
  EXPECT_EQ(load_tokenizer("o200k_base").vocab_size(), 200019);
  EXPECT_EQ(load_tokenizer("p50k_edit").vocab_size(), 50284);
}

TEST(Tokenizer, InvalidUtf8IsAnErrorNamingTheOffset) {
  DIFFTX_REQUIRE_DATA("tokenizers/cl100k_base.tiktoken");
  const Tokenizer tok = load_tokenizer("cl100k_base");
  for (const std::string& bad : {std::string("hello \xff world"), std::string("hello \xed\xa0\x80"),
                                 std::string("hello \xc3")}) {
    const std::string msg = error_of([&] { tok.encode(bad); });
    EXPECT_NE(msg.find("tokenizer cl100k_base: encode: invalid UTF-8 at byte offset 6"),
              std::string::npos)
        << msg;
  }
}

TEST(Tokenizer, DecodeRejectsIdsThatAreNoToken) {
  DIFFTX_REQUIRE_DATA("tokenizers/cl100k_base.tiktoken");
  const Tokenizer tok = load_tokenizer("cl100k_base");
  // 100256 is a gap between the ranks and the special tokens.
  for (int32_t id : {-1, 100256, 100277, 1 << 30}) {
    const std::string msg = error_of([&] { tok.decode(std::vector<int32_t>{1, id}); });
    EXPECT_NE(msg.find("id " + std::to_string(id) + " at position 1 is not a token"),
              std::string::npos)
        << msg;
  }
}

TEST(Tokenizer, DecodingSplitCharactersGivesTheirBytes) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  const Tokenizer tok = load_tokenizer("r50k_base");
  const auto ids = tok.encode("🌍");  // several byte-level tokens
  ASSERT_GT(ids.size(), 1u);
  std::string joined;
  for (int32_t id : ids) joined += tok.decode(std::vector<int32_t>{id});
  EXPECT_EQ(joined, "🌍");
}

// Points DIFFTX_DATA somewhere for the lifetime of the object.
class ScopedDataRoot {
 public:
  explicit ScopedDataRoot(const std::filesystem::path& root) {
    setenv("DIFFTX_DATA", root.c_str(), 1);
  }
  ~ScopedDataRoot() { unsetenv("DIFFTX_DATA"); }
};

TEST(TokenizerFiles, MissingBuiltinFileSaysToRunSetup) {
  testing::TempDir empty;
  ScopedDataRoot root(empty.path());
  const std::string msg = error_of([] { load_tokenizer("cl100k_base"); });
  EXPECT_NE(msg.find("tokenizer 'cl100k_base': " + (empty / "tokenizers").string() +
                     "/cl100k_base.tiktoken not found (run scripts/setup"),
            std::string::npos)
      << msg;
}

TEST(TokenizerFiles, UnknownNameListsTheBuiltins) {
  testing::TempDir empty;
  ScopedDataRoot root(empty.path());
  const std::string msg = error_of([] { load_tokenizer("no_such_tokenizer"); });
  EXPECT_NE(msg.find("tokenizer 'no_such_tokenizer': not a file, a directory, or a tokenizer in"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("cl100k_base"), std::string::npos) << msg;
}

TEST(TokenizerFiles, NameIsFoundUnderDifftxData) {
  DIFFTX_REQUIRE_DATA("tokenizers/r50k_base.tiktoken");
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "tokenizers");
  std::filesystem::copy_file(data_root() / "tokenizers" / "r50k_base.tiktoken",
                             dir / "tokenizers" / "r50k_base.tiktoken");
  // A trained tokenizer saved as a folder under the tokenizers directory resolves by name.
  const std::vector<std::string_view> docs = {"the whale the whale the sea the sea"};
  save_tokenizer(train_bpe(docs, {.vocab_size = 260, .name = "tiny"}), dir / "tokenizers" / "tiny");
  ScopedDataRoot root(dir.path());
  const Tokenizer gpt2 = load_tokenizer("r50k_base");
  const Tokenizer tiny = load_tokenizer("tiny");
  EXPECT_EQ(gpt2.encode("hello world"), (std::vector<int32_t>{31373, 995}));
  EXPECT_EQ(tiny.name(), "tiny");
  EXPECT_EQ(tiny.vocab_size(), 260);
}

}  // namespace
}  // namespace difftx::data
