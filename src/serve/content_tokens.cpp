#include "serve/content_tokens.h"

#include <utility>

namespace difftx::serve {

std::vector<TokenInfo> ContentTokens::take(const ReplyDelta& delta, std::vector<TokenInfo> tokens) {
  for (TokenInfo& t : tokens)
    if (!t.silent) held_.push_back(std::move(t));
  if (delta.content.empty()) {
    if (!delta.reasoning.empty() || !delta.calls.empty()) held_.clear();
    return {};
  }
  // The newest held tokens whose text covers the content: those before them wrote what the reader
  // kept out of it (a marker that closed the reasoning or a call, whitespace it trims).
  size_t first = held_.size(), covered = 0;
  while (first > 0 && covered < delta.content.size()) covered += held_[--first].token.size();
  std::vector<TokenInfo> out(std::make_move_iterator(held_.begin() + static_cast<std::ptrdiff_t>(first)),
                             std::make_move_iterator(held_.end()));
  held_.clear();
  return out;
}

}  // namespace difftx::serve
