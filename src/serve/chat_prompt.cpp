#include "serve/chat_prompt.h"

#include <algorithm>

namespace difftx::serve {

std::vector<int32_t> encode_chat_prompt(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prefix,
                                        const std::string& rendered) {
  std::vector<int32_t> ids = tokenizer.encode(rendered, data::Specials::allowed);
  if (ids.size() < prefix.size() || !std::equal(prefix.begin(), prefix.end(), ids.begin()))
    ids.insert(ids.begin(), prefix.begin(), prefix.end());
  return ids;
}

std::vector<int32_t> chat_stop_ids(const chat::ChatTemplate& tmpl, const data::Tokenizer& tokenizer) {
  const auto it = tokenizer.special_tokens().find(tmpl.eos_token);
  if (tmpl.eos_token.empty() || it == tokenizer.special_tokens().end()) return {};
  return {it->second};
}

}  // namespace difftx::serve
