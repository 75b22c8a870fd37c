// vLLM's bad_words as the server tokenizes them (serve/bad_words.h), on the Motif fixture's BPE
// tokenizer: each word alone (its leading whitespace dropped) and after a space where that gives as
// many tokens starting with another one; a word of no tokens is an error; the request field's
// checks; and make_requests passing the sequences on.
#include <gtest/gtest.h>

#include "source_dir.h"

#include "data/hf_tokenizer.h"
#include "serve/api_error.h"
#include "serve/bad_words.h"
#include "serve/request_parse.h"
#include "serve/served_model.h"

namespace difftx::serve {
namespace {

const std::filesystem::path kMotifTokenizer =
    std::filesystem::path(DIFFTX_SOURCE_DIR) / "tests/fixtures/hf/motif_r1_mha_tied_f32_tokenizer/tokenizer.json";

TEST(ServeBadWords, EachWordAloneAndAfterASpaceAsVllmTokenizesThem) {
  const data::Tokenizer tokenizer = data::read_hf_tokenizer(kMotifTokenizer);
  // "to" is 116 111 alone and 256 111 after a space (a word-start token): both. "he" is 257 alone
  // but 32 257 after a space (longer): alone only. "  a": the space dropped, then 97, and 260.
  ASSERT_EQ(tokenizer.encode("to"), (std::vector<int32_t>{116, 111}));
  ASSERT_EQ(tokenizer.encode(" to"), (std::vector<int32_t>{256, 111}));
  ASSERT_EQ(tokenizer.encode(" he"), (std::vector<int32_t>{32, 257}));
  EXPECT_EQ(bad_word_sequences(tokenizer, {"to", "he", "  a"}),
            (std::vector<std::vector<int32_t>>{{116, 111}, {256, 111}, {257}, {97}, {260}}));
  EXPECT_THROW(bad_word_sequences(tokenizer, {"to", "   "}), Error);
  EXPECT_THROW(bad_word_sequences(tokenizer, {std::string(200, 'x')}), Error);  // more tokens than the engine takes
}

// Every choice's request gets the words' sequences; a word of no tokens is a 400 naming the field.
TEST(ServeBadWords, EveryChoiceTakesThem) {
  ServedModel m;
  m.limits.context = 64;
  m.limits.vocab_size = 300;
  m.tokenizer = std::make_unique<data::Tokenizer>(data::read_hf_tokenizer(kMotifTokenizer));
  GenerationParams p;
  p.n = 2;
  p.bad_words = {"to"};
  for (const infer::Request& r : make_requests(m, {{1, 2}}, p))
    EXPECT_EQ(r.options.bad_words, (std::vector<std::vector<int32_t>>{{116, 111}, {256, 111}}));
  p.bad_words = {"\t"};
  try {
    make_requests(m, {{1, 2}}, p);
    ADD_FAILURE() << "a word of no tokens was taken";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "bad_words");
  }
}

TEST(ServeBadWords, TheRequestField) {
  ServeLimits limits;
  limits.model_name = "tiny";
  limits.vocab_size = 512;
  limits.context = 256;
  const auto parse = [&](const std::string& body) {
    return parse_completion_request(parse_body(body), parse_ordered_body(body), limits).params.bad_words;
  };
  EXPECT_EQ(parse(R"({"prompt": "a", "bad_words": ["x", " y z"]})"), (std::vector<std::string>{"x", " y z"}));
  EXPECT_TRUE(parse(R"({"prompt": "a", "bad_words": []})").empty());
  std::string many = "[\"w\"";
  for (int i = 1; i < 65; ++i) many += ", \"w\"";
  for (const std::string& value : {std::string(R"("x")"), std::string(R"([""])"), std::string("[1]"), many + "]"})
    try {
      parse(R"({"prompt": "a", "bad_words": )" + value + "}");
      ADD_FAILURE() << "accepted " << value;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param, "bad_words");
    }
}

}  // namespace
}  // namespace difftx::serve
