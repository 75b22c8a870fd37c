// The model a server serves (weights, tokenizer, engine, chat template) and how requests'
// prompts become engine Requests: tokenizing, the prompt frame, n choices with their seeds and
// the token budget left by the context.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "data/generation_defaults.h"
#include "data/tokenizer.h"
#include "infer/engine.h"
#include "model/model.h"
#include "serve/api_error.h"
#include "serve/output_constraint.h"
#include "serve/request_parse.h"

namespace difftx::serve {

// Renders chat messages into a prompt (add_generation_prompt, extra template variables);
// errors the client caused are ApiError.
using ChatRenderer = std::function<std::string(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                               const nlohmann::ordered_json& extra)>;

struct ServedModel {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<data::Tokenizer> tokenizer;
  std::shared_ptr<const model::Model> draft_model;  // --draft DIR's, which the engine drafts with
  std::unique_ptr<infer::Engine> engine;
  data::PromptFrame frame;       // what prompts start with; the end-of-sequence ids
  ServeLimits limits;
  ChatRenderer render_chat;      // empty: the model has no chat template
  std::vector<int32_t> chat_stop;  // extra stop ids for chat (the template's end-of-turn token)
  ConstraintModel output;          // what output constraints need: vocabulary, tool and reasoning formats
  std::unique_ptr<ConstraintCache> constraints = std::make_unique<ConstraintCache>();
};

// A text prompt as `difftx generate` encodes it: the frame's prefix, then the text (special-token
// text matched for tokenizer.json, literal for tiktoken files).
std::vector<int32_t> encode_text_prompt(const ServedModel& m, const std::string& text);
// A rendered chat prompt (serve/chat_prompt.h); text the tokenizer refuses is a 400.
std::vector<int32_t> encode_chat_prompt(const ServedModel& m, const std::string& rendered);
// Renders with the template; what the template refuses (raise_exception) is a 400 with its message.
ChatRenderer chat_renderer(chat::ChatTemplate tmpl);
// Whether a template loops over a message's content (`for part in message['content']`): then it
// takes the parts as a list, as vLLM detects it.
bool iterates_content_parts(const std::string& template_source);

// vLLM's truncate_prompt_tokens (GenerationParams): a longer prompt keeps its last tokens; whether
// it was cut. A prompt that cannot be cut to fit stays as it is (make_requests says why).
bool truncate_prompt(std::vector<int32_t>& ids, const GenerationParams& params, int64_t context);

// Why a prompt of `length` tokens leaves no room in the context for what `params` may generate (a
// 400 naming the lengths); nullopt where it fits.
std::optional<ApiError> context_refusal(int64_t length, const GenerationParams& params, int64_t context);

// n Requests per prompt (prompt-major), choice i of a prompt seeded seed + i. A prompt that
// leaves no room in the context, or max_tokens beyond it, is a 400 naming the lengths.
std::vector<infer::Request> make_requests(const ServedModel& m, const std::vector<std::vector<int32_t>>& prompts,
                                          const GenerationParams& params, const std::vector<int32_t>& extra_stop = {});

}  // namespace difftx::serve
