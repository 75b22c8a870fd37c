// api/generation.h: the special tokens the library's text requests leave out of their text, as the
// server's routes leave them out (skip_special_tokens).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/generation.h"
#include "chat/chat_template.h"
#include "data/hf_tokenizer.h"
#include "data/tokenizer.h"

namespace difftx {
namespace {

data::Tokenizer special_tokenizer() {
  data::TokenTable bytes;
  for (int b = 0; b < 256; ++b) bytes.insert(std::string(1, static_cast<char>(b)), b);
  return data::Tokenizer("specials", std::move(bytes), data::gpt2_pattern(),
                         {{"<|endoftext|>", 256}, {"<think>", 257}, {"</think>", 258}, {"<|im_start|>", 259}});
}

// A completion leaves out every special token (/v1/completions has no reasoning block); a chat
// reply keeps its reasoning block's markers (the template's, else the vocabulary's), as
// /v1/chat/completions without tools does.
TEST(Generation, SkippedSpecialTokensAreTheServersRoutes) {
  const data::Tokenizer tokenizer = special_tokenizer();
  const chat::ChatTemplate chat = chat::ChatTemplate::parse("{% for m in messages %}{{ m['content'] }}{% endfor %}");
  using Ids = std::vector<int32_t>;
  EXPECT_EQ(api::skipped_special_tokens(tokenizer, nullptr), (Ids{256, 257, 258, 259}));
  EXPECT_EQ(api::skipped_special_tokens(tokenizer, &chat), (Ids{256, 259}));
}

}  // namespace
}  // namespace difftx
