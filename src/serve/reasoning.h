// Reasoning models think in a block before they answer: <think>...</think> (Qwen 3, DeepSeek R1,
// Phi-4-mini-flash-reasoning, GLM 4.5), [THINK]...[/THINK] (Mistral's Magistral) or
// <seed:think>...</seed:think> (ByteDance's Seed-OSS), whichever markers the template uses. The block goes to
// message.reasoning_content (and stream deltas' reasoning_content), the rest to content, as vLLM
// and DeepSeek's API return it. The block is open from the start where the rendered prompt left
// it open (a template that ends the prompt inside <think>), or opened by the reply's first bytes.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "data/tokenizer.h"
#include "infer/reasoning_block.h"

namespace difftx::serve {

// The block's markers, and where the open marker a reply starts with ends (after at most 16 bytes
// of white space; nullopt while it may still come): the engine's, so that the reply is split where
// the engine's stop strings start to be matched.
using infer::open_marker_end;
using infer::ReasoningMarkers;

// The markers a chat template's text uses (either of a format's two); nullopt when it has none.
std::optional<ReasoningMarkers> reasoning_markers_of_template(std::string_view source);
// The format whose markers are both the vocabulary's added tokens: a model that thinks where its
// template does not say so (Phi-4-mini-reasoning's template has no <think>; its model writes one).
std::optional<ReasoningMarkers> reasoning_markers_of_vocabulary(const data::Tokenizer& tokenizer);
// The markers a model's replies use, where nothing names them (--reasoning-parser auto): its chat
// template's, else its vocabulary's.
std::optional<ReasoningMarkers> reasoning_markers_of_model(std::string_view template_source,
                                                           const data::Tokenizer& tokenizer);
// The markers of a format by name (--reasoning-parser): think, mistral, seed_oss, and vLLM's names
// of the <think> parsers (deepseek_r1, qwen3, glm45); nullopt for another name.
std::optional<ReasoningMarkers> reasoning_markers_named(std::string_view name);
// The formats' names, for messages: "think, mistral, seed_oss".
std::string reasoning_format_names(std::string_view separator);
// Whether the rendered prompt ends inside a block (its last open marker is not closed), read from
// its generation prompt alone, as vLLM reads it: what follows `conversation`, the same messages
// rendered without the generation prompt (the whole prompt where that is not its start). So a
// <think> that a message holds opens nothing.
bool prompt_opens_reasoning(std::string_view prompt, std::string_view conversation, const ReasoningMarkers& markers);

// Where the prompt opened the block, an open marker the model writes again anyway is dropped from
// the reasoning (as vLLM drops it): read_reply and ReplyStream skip to its open_marker_end.

struct ReasoningSplit {
  std::string reasoning, content;
  bool had_block = false;  // a block was there (reasoning may still be empty)
  bool closed = false;     // and its close marker was read (what follows is content)
  size_t held = 0;         // bytes at the end not placed yet (a marker may be starting)
};

// Splits a reply. final: nothing more will come (a block never closed is all reasoning).
ReasoningSplit split_reasoning(std::string_view text, const ReasoningMarkers& markers, bool open_at_start, bool final);

}  // namespace difftx::serve
