#include "serve/auth.h"

#include <cctype>

namespace difftx::serve {

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (b.empty()) return a.empty();
  // Every byte of a is compared (against b cyclically), so the time does not tell where they differ.
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % b.size()]);
  return diff == 0;
}

bool bearer_matches(std::string_view header, std::string_view key) {
  constexpr std::string_view scheme = "bearer ";
  if (header.size() < scheme.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i]) return false;
  // RFC 9110's credentials: the scheme, one or more spaces, the token.
  size_t at = scheme.size();
  while (at < header.size() && header[at] == ' ') ++at;
  return constant_time_equal(header.substr(at), key);
}

}  // namespace difftx::serve
