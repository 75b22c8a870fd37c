#include "serve/content_tokens.h"

#include <utility>

namespace difftx::serve {

std::vector<TokenInfo> ContentTokens::take(const ReplyDelta& delta, std::vector<TokenInfo> tokens) {
  for (TokenInfo& t : tokens)
    if (!t.silent) held_.push_back(std::move(t));
  if (!delta.content.empty()) return std::exchange(held_, {});
  if (!delta.reasoning.empty() || !delta.calls.empty()) held_.clear();
  return {};
}

}  // namespace difftx::serve
