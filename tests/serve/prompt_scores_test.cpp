// A scored prompt as replies show it (serve/prompt_scores.h), over a tokenizer of bytes: the
// echoed tokens of completions' logprobs (the first with no logprob, each other's own entry first
// among its alternatives, a silent token writing no text) and vLLM's prompt_logprobs (null first,
// then objects keyed by id: the prompt's token with its rank, then the alternatives by rank).
#include <gtest/gtest.h>

#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"
#include "serve/prompt_scores.h"

namespace difftx::serve {
namespace {

data::Tokenizer bytes_and_end() {
  data::TokenTable bytes;
  for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
  return data::Tokenizer("bytes", std::move(bytes), data::gpt2_pattern(), {{"<|endoftext|>", 256}});
}

TEST(PromptScores, EchoedTokensAndVllmsPromptLogprobs) {
  const data::Tokenizer tokenizer = bytes_and_end();
  const std::vector<int32_t> prompt = {256, 'h', 'i'};
  // Token 'h' after the end token: rank 3, the alternatives 'a' and 'b'; 'i' after it: rank 1,
  // itself the likeliest.
  const std::vector<infer::PromptTokenLogprob> scores = {{-2.5f, 3, {{'a', -0.5f}, {'b', -1.0f}}},
                                                         {-0.1f, 1, {{'i', -0.1f}, {'a', -3.0f}}}};
  const std::vector<TokenInfo> infos = prompt_token_infos(tokenizer, prompt, scores, {256});
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0].token, "<|endoftext|>");
  EXPECT_FALSE(infos[0].logprob);
  EXPECT_TRUE(infos[0].silent);
  EXPECT_TRUE(infos[0].top.empty());
  EXPECT_EQ(*infos[1].logprob, -2.5f);
  EXPECT_EQ(infos[1].top, (std::vector<std::pair<std::string, float>>{{"h", -2.5f}, {"a", -0.5f}, {"b", -1.0f}}));
  EXPECT_FALSE(infos[1].silent);
  const nlohmann::json lp = completion_logprobs(infos, 0);
  EXPECT_EQ(lp["text_offset"], nlohmann::json({0, 0, 1}));  // the silent token writes no text

  const nlohmann::json v = prompt_logprobs_json(tokenizer, prompt, scores);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_TRUE(v[0].is_null());
  EXPECT_EQ(v[1], nlohmann::json::parse(R"({"104": {"logprob": -2.5, "rank": 3, "decoded_token": "h"},
                                            "97": {"logprob": -0.5, "rank": 1, "decoded_token": "a"},
                                            "98": {"logprob": -1.0, "rank": 2, "decoded_token": "b"}})"));
  EXPECT_EQ(v[2], nlohmann::json::parse(R"({"105": {"logprob": -0.10000000149011612, "rank": 1, "decoded_token": "i"},
                                            "97": {"logprob": -3.0, "rank": 2, "decoded_token": "a"}})"));
}

}  // namespace
}  // namespace difftx::serve
