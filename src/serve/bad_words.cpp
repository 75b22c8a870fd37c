#include "serve/bad_words.h"

#include "core/error.h"
#include "infer/engine.h"

namespace difftx::serve {

std::vector<std::vector<int32_t>> bad_word_sequences(const data::Tokenizer& tokenizer,
                                                     const std::vector<std::string>& words) {
  std::vector<std::vector<int32_t>> out;
  for (const std::string& word : words) {
    const std::string bare = word.substr(std::min(word.find_first_not_of(" \t\n\r\f\v"), word.size()));
    std::vector<int32_t> alone = tokenizer.encode(bare);
    DIFFTX_CHECK(!alone.empty(), "bad word \"", word, "\" is no token");
    DIFFTX_CHECK(alone.size() <= infer::kMaxBadWordTokens, "bad word \"", word.substr(0, 64), "\" is ", alone.size(),
                 " tokens: at most ", infer::kMaxBadWordTokens);
    std::vector<int32_t> spaced = tokenizer.encode(" " + bare);
    const bool another = !spaced.empty() && spaced.size() == alone.size() && spaced[0] != alone[0];
    out.push_back(std::move(alone));
    if (another) out.push_back(std::move(spaced));
  }
  return out;
}

}  // namespace difftx::serve
