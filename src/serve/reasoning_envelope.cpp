#include "serve/reasoning_envelope.h"

#include "data/base64.h"
#include "data/utf8.h"

namespace difftx::serve {
namespace {
constexpr std::string_view kTag = "difftx-reasoning-1.";
}  // namespace

std::string seal_reasoning(std::string_view text) { return std::string(kTag) + data::base64_encode(text); }

std::optional<std::string> open_reasoning(std::string_view envelope) {
  if (!envelope.starts_with(kTag)) return std::nullopt;
  std::optional<std::string> text = data::base64_decode(envelope.substr(kTag.size()));
  if (!text || data::valid_utf8_prefix(*text) != text->size()) return std::nullopt;
  return text;
}

}  // namespace difftx::serve
