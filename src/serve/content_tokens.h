// Which of a reply's generated tokens its content holds, for the logprobs of the Responses API's
// output_text (include "message.output_text.logprobs"): each token is given with what the reply
// reader (reply_reader.h) settled after its text. The tokens of a piece of content are the newest
// ones whose text covers it: the token that settled it and those held back just before it (a
// marker's first bytes that proved to be text, a character's first bytes). Tokens that went to the
// reasoning or to a tool call are not, nor are those of a marker that settled nothing (the
// `</think>` before the content) or that wrote no text (TokenInfo::silent: the end of turn).
#pragma once
#include <vector>

#include "serve/openai_response.h"
#include "serve/reply_reader.h"

namespace difftx::serve {

class ContentTokens {
 public:
  // `tokens` (this step's: one, or none where the reply ended without a token) and what the
  // reader settled after their text: the tokens of `delta.content`, empty where it has none.
  std::vector<TokenInfo> take(const ReplyDelta& delta, std::vector<TokenInfo> tokens);

 private:
  std::vector<TokenInfo> held_;  // tokens whose text the reader has not settled yet
};

}  // namespace difftx::serve
