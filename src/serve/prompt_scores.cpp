#include "serve/prompt_scores.h"

#include <algorithm>
#include <string>

namespace difftx::serve {

namespace {

std::string token_text(const data::Tokenizer& tokenizer, int32_t id) { return tokenizer.decode({&id, 1}); }

}  // namespace

std::vector<TokenInfo> prompt_token_infos(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                          const std::vector<infer::PromptTokenLogprob>& scores,
                                          const std::vector<int32_t>& silent) {
  std::vector<TokenInfo> out;
  for (size_t i = 0; i < prompt.size(); ++i) {
    TokenInfo t;
    t.token = token_text(tokenizer, prompt[i]);
    t.silent = std::binary_search(silent.begin(), silent.end(), prompt[i]);
    if (i > 0 && i - 1 < scores.size()) {
      const infer::PromptTokenLogprob& s = scores[i - 1];
      t.logprob = s.logprob;
      t.top.emplace_back(t.token, s.logprob);
      for (const infer::TokenLogprob& alt : s.top) t.top.emplace_back(token_text(tokenizer, alt.id), alt.logprob);
    }
    out.push_back(std::move(t));
  }
  return out;
}

nlohmann::json prompt_logprobs_json(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                    const std::vector<infer::PromptTokenLogprob>& scores) {
  nlohmann::json out = nlohmann::json::array({nullptr});
  const auto entry = [&](int32_t id, float logprob, int64_t rank) {
    return nlohmann::json{{"logprob", logprob}, {"rank", rank}, {"decoded_token", token_text(tokenizer, id)}};
  };
  for (size_t i = 1; i < prompt.size() && i - 1 < scores.size(); ++i) {
    const infer::PromptTokenLogprob& s = scores[i - 1];
    nlohmann::json position = nlohmann::json::object();
    position[std::to_string(prompt[i])] = entry(prompt[i], s.logprob, s.rank);
    for (size_t k = 0; k < s.top.size(); ++k) {
      const std::string key = std::to_string(s.top[k].id);
      if (!position.contains(key)) position[key] = entry(s.top[k].id, s.top[k].logprob, static_cast<int64_t>(k) + 1);
    }
    out.push_back(std::move(position));
  }
  return out;
}

}  // namespace difftx::serve
