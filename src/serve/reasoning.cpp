#include "serve/reasoning.h"

#include <algorithm>

namespace difftx::serve {
namespace {

// How much of the text's end could be the start of `marker`.
size_t partial(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (marker.substr(0, n) == text.substr(text.size() - n)) return n;
  return 0;
}

struct ReasoningFormat {
  std::string_view name, open, close;
};
// In the order a template is matched against them; none's markers hold another's.
constexpr ReasoningFormat kFormats[] = {{"think", "<think>", "</think>"},
                                        {"mistral", "[THINK]", "[/THINK]"},
                                        {"seed_oss", "<seed:think>", "</seed:think>"}};
constexpr std::string_view kThinkAliases[] = {"deepseek_r1", "qwen3", "glm45"};

ReasoningMarkers markers_of(const ReasoningFormat& f) { return {std::string(f.open), std::string(f.close)}; }

}  // namespace

std::optional<ReasoningMarkers> reasoning_markers_of_template(std::string_view source) {
  for (const ReasoningFormat& f : kFormats)
    if (source.find(f.open) != std::string_view::npos || source.find(f.close) != std::string_view::npos)
      return markers_of(f);
  return std::nullopt;
}

std::optional<ReasoningMarkers> reasoning_markers_of_vocabulary(const data::Tokenizer& tokenizer) {
  for (const ReasoningFormat& f : kFormats)
    if (tokenizer.added().by_content(f.open) && tokenizer.added().by_content(f.close)) return markers_of(f);
  return std::nullopt;
}

std::optional<ReasoningMarkers> reasoning_markers_of_model(std::string_view template_source,
                                                           const data::Tokenizer& tokenizer) {
  if (auto markers = reasoning_markers_of_template(template_source)) return markers;
  return reasoning_markers_of_vocabulary(tokenizer);
}

std::optional<ReasoningMarkers> reasoning_markers_named(std::string_view name) {
  for (const ReasoningFormat& f : kFormats)
    if (f.name == name) return markers_of(f);
  if (std::find(std::begin(kThinkAliases), std::end(kThinkAliases), name) != std::end(kThinkAliases))
    return markers_of(kFormats[0]);
  return std::nullopt;
}

std::string reasoning_format_names(std::string_view separator) {
  std::string names;
  for (const ReasoningFormat& f : kFormats) names += (names.empty() ? "" : std::string(separator)) + std::string(f.name);
  return names;
}

bool prompt_opens_reasoning(std::string_view prompt, std::string_view conversation, const ReasoningMarkers& m) {
  if (prompt.substr(0, conversation.size()) == conversation) prompt.remove_prefix(conversation.size());
  const size_t open = prompt.rfind(m.open);
  if (open == std::string_view::npos) return false;
  return prompt.find(m.close, open + m.open.size()) == std::string_view::npos;
}

ReasoningSplit split_reasoning(std::string_view text, const ReasoningMarkers& m, bool open_at_start, bool final) {
  ReasoningSplit out;
  size_t body = 0;
  if (!open_at_start) {
    // A block only where the reply starts with the open marker.
    const std::optional<size_t> end = open_marker_end(text, m, final);
    if (!end) {  // the marker may be coming
      out.held = text.size();
      return out;
    }
    if (*end == 0) {
      out.content = std::string(text);
      return out;
    }
    body = *end;
  }
  out.had_block = true;
  const size_t close = text.find(m.close, body);
  if (close == std::string_view::npos) {
    out.held = final ? 0 : partial(text.substr(body), m.close);
    out.reasoning = std::string(text.substr(body, text.size() - body - out.held));
    return out;
  }
  out.closed = true;
  out.reasoning = std::string(text.substr(body, close - body));
  out.content = std::string(text.substr(close + m.close.size()));
  return out;
}

}  // namespace difftx::serve
