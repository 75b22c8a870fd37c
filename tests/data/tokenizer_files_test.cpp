// Tokenizer files: hostile or broken .tiktoken files and sidecars get errors naming the file
// and line; saving and loading gives back the same tokenizer.
#include <gtest/gtest.h>

#include "data/base64.h"
#include "data/bpe_trainer.h"
#include "data/encodings.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "support/testing.h"

namespace difftx::data {
namespace {

using difftx::testing::error_of;

// A valid rank file: the 256 bytes, then "ab" and "abc".
std::string byte_ranks() {
  std::string text;
  for (int b = 0; b < 256; ++b)
    text += base64_encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  return text;
}

const char* const kSidecar = R"({"format": "difftx-tokenizer", "version": 1, "name": "toy",
  "pattern": "\\S+|\\s+", "special_tokens": {"<|endoftext|>": 258}})";

TEST(TokenizerFiles, LoadsAFileWithItsSidecar) {
  testing::TempDir dir;
  const auto file = dir.write("toy.tiktoken", byte_ranks() + "YWI= 256\nYWJj 257\n");
  dir.write("toy.tiktoken.json", kSidecar);
  const Tokenizer tok = load_tokenizer(file.string());
  EXPECT_EQ(tok.name(), "toy");
  EXPECT_EQ(tok.vocab_size(), 259);
  EXPECT_EQ(tok.encode("abc ab"), (std::vector<int32_t>{257, ' ', 256}));
}

struct BadFile {
  std::string name;
  std::string extra_lines;  // appended after the 256 byte lines (which end on line 256)
  std::string expected;
};

class BadRankFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadRankFile, IsAnErrorNamingFileAndLine) {
  testing::TempDir dir;
  const auto file = dir.write("bad.tiktoken", byte_ranks() + GetParam().extra_lines);
  dir.write("bad.tiktoken.json", kSidecar);
  const std::string msg = error_of([&] { load_tokenizer(file.string()); });
  EXPECT_NE(msg.find(file.string() + ":" + GetParam().expected), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    TokenizerFiles, BadRankFile,
    ::testing::Values(
        BadFile{"BadBase64Alphabet", "YW*= 256\n", "257: bad base64 'YW*='"},
        BadFile{"BadBase64Length", "YWJ 256\n", "257: bad base64 'YWJ'"},
        BadFile{"BadBase64Padding", "YWI=YWI= 256\n", "257: bad base64"},
        BadFile{"DuplicateRank", "YWI= 256\nYWJj 256\n", "258: duplicate rank 256 (first on line 257)"},
        BadFile{"DuplicateRankOfAByte", "YWI= 65\n", "257: duplicate rank 65 (first on line 66)"},
        BadFile{"DuplicateToken", "YWI= 256\nYWI= 257\n", "258: duplicate token 'YWI=' (first on line 257 with rank 256)"},
        BadFile{"NegativeRank", "YWI= -3\n", "257: bad rank '-3'"},
        BadFile{"HugeRank", "YWI= 99999999999\n", "257: bad rank '99999999999'"},
        BadFile{"NoRank", "YWI=\n", "257: expected \"BASE64 RANK\""},
        BadFile{"TextRank", "YWI= ten\n", "257: bad rank 'ten'"}),
    [](const auto& info) { return info.param.name; });

TEST(TokenizerFiles, MissingByteIsAnError) {
  testing::TempDir dir;
  std::string text;
  for (int b = 0; b < 256; ++b)
    if (b != 'q')
      text += base64_encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  const auto file = dir.write("gap.tiktoken", text);
  dir.write("gap.tiktoken.json", kSidecar);
  const std::string msg = error_of([&] { load_tokenizer(file.string()); });
  EXPECT_NE(msg.find("tokenizer toy: no token for the byte 0x71"), std::string::npos) << msg;
}

TEST(TokenizerFiles, BadSidecarsAreErrorsNamingTheSidecar) {
  const std::pair<std::string, std::string> cases[] = {
      {"{not json", "invalid JSON"},
      {R"({"format": "difftx-tokenizer", "version": 1, "special_tokens": {}})", "missing string \"pattern\""},
      {R"({"format": "other", "version": 1})", "expected \"format\": \"difftx-tokenizer\""},
      {R"({"format": "difftx-tokenizer", "version": 1, "pattern": "(", "special_tokens": {"<|endoftext|>": 300}})",
       "split pattern: missing closing parenthesis"},
      {R"({"format": "difftx-tokenizer", "version": 1, "pattern": "\\S+|\\s+", "special_tokens": {"<|endoftext|>": 65}})",
       "has id 65, which is already the rank of an ordinary token"},
      {R"({"format": "difftx-tokenizer", "version": 1, "pattern": "\\S+|\\s+", "special_tokens": {"<|x|>": 300}})",
       "no special token <|endoftext|>"},
      {R"({"format": "difftx-tokenizer", "version": 1, "pattern": "\\S+|\\s+", "special_tokens": {"<|endoftext|>": "x"}})",
       "needs an integer id"},
      {R"({"format": "difftx-tokenizer", "version": 1, "pattern": "\\S+|\\s+", "special_tokens": {"<|endoftext|>": 256}, "vocab_size": 9})",
       "says vocab_size 9 but its tokens give 257"},
  };
  for (const auto& [sidecar, expected] : cases) {
    testing::TempDir dir;
    const auto file = dir.write("t.tiktoken", byte_ranks());
    dir.write("t.tiktoken.json", sidecar);
    const std::string msg = error_of([&] { load_tokenizer(file.string()); });
    EXPECT_NE(msg.find(expected), std::string::npos) << sidecar << "\n -> " << msg;
  }
}

TEST(TokenizerFiles, FileWithoutSidecarNeedsABuiltinName) {
  testing::TempDir dir;
  const auto file = dir.write("mystery.tiktoken", byte_ranks());
  const std::string msg = error_of([&] { load_tokenizer(file.string()); });
  EXPECT_NE(msg.find("no sidecar " + file.string() + ".json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'mystery' is not a built-in encoding"), std::string::npos) << msg;
}

TEST(TokenizerFiles, SplitPatternThatSkipsTextIsAnError) {
  testing::TempDir dir;
  const auto file = dir.write("t.tiktoken", byte_ranks());
  dir.write("t.tiktoken.json", R"({"format": "difftx-tokenizer", "version": 1, "pattern": "\\p{L}+",
    "special_tokens": {"<|endoftext|>": 256}})");
  const Tokenizer tok = load_tokenizer(file.string());
  const std::string msg = error_of([&] { tok.encode("abc def"); });
  EXPECT_NE(msg.find("matches nothing at byte offset 3"), std::string::npos) << msg;
}

TEST(TokenizerFiles, SavedTokenizerLoadsBackIdenticalByDirOrFile) {
  Rng rng(4);
  std::vector<std::string> docs;
  for (int i = 0; i < 10; ++i) docs.push_back(testing::random_text(rng, 2000));
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const Tokenizer trained = train_bpe(views, {.vocab_size = 400, .name = "saved"});
  testing::TempDir dir;
  save_tokenizer(trained, dir.path() / "tok");
  for (const std::string& path : {(dir / "tok").string(), (dir / "tok" / kTokenizerRanksFile).string()}) {
    const Tokenizer loaded = load_tokenizer(path);
    EXPECT_EQ(loaded.name(), "saved");
    EXPECT_EQ(loaded.vocab_size(), trained.vocab_size());
    EXPECT_EQ(loaded.end_of_text(), trained.end_of_text());
    EXPECT_EQ(loaded.pattern(), trained.pattern());
    EXPECT_EQ(tiktoken_file_text(loaded.ranks()), tiktoken_file_text(trained.ranks()));
    EXPECT_EQ(loaded.encode(docs[3]), trained.encode(docs[3]));
  }
}

TEST(TokenizerFiles, DirectoryWithoutTokenizerIsAnError) {
  testing::TempDir dir;
  const std::string msg = error_of([&] { load_tokenizer(dir.path().string()); });
  EXPECT_NE(msg.find("no tokenizer in this directory (tokenizer.tiktoken with"), std::string::npos) << msg;
}

}  // namespace
}  // namespace difftx::data
