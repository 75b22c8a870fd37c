// API keys: `Authorization: Bearer KEY` (OpenAI's clients) or `x-api-key: KEY` (Anthropic's),
// compared in constant time.
#pragma once
#include <string>
#include <string_view>

namespace difftx::serve {

// Equal contents, in time that depends on the lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);
// Whether an Authorization header value carries the key (scheme case-insensitive).
bool bearer_matches(std::string_view header, std::string_view key);

}  // namespace difftx::serve
