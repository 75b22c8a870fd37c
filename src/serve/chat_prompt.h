// A rendered chat prompt as token ids, the way transformers' apply_chat_template(tokenize=True)
// makes them: special-token text is matched (the template writes it), and nothing is added,
// except the model's prompt prefix (BOS, difftx's end-of-text) where the rendering does not
// already start with it. And the ids that end a reply: the template's eos_token, where the
// tokenizer has it as a special token.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "data/tokenizer.h"

namespace difftx::serve {

std::vector<int32_t> encode_chat_prompt(const data::Tokenizer& tokenizer, const std::vector<int32_t>& prefix,
                                        const std::string& rendered);
std::vector<int32_t> chat_stop_ids(const chat::ChatTemplate& tmpl, const data::Tokenizer& tokenizer);

}  // namespace difftx::serve
