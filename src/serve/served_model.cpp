#include "serve/served_model.h"

#include <algorithm>
#include <random>
#include <regex>

#include "serve/api_error.h"
#include "serve/bad_words.h"
#include "serve/chat_prompt.h"

namespace difftx::serve {

std::vector<int32_t> encode_text_prompt(const ServedModel& m, const std::string& text) {
  std::vector<int32_t> ids = m.frame.prefix;
  try {
    m.tokenizer->encode_append(text, ids, m.tokenizer->tiktoken_family() ? data::Specials::as_text : data::Specials::allowed);
  } catch (const Error& e) {
    bad_param("prompt", e.what());
  }
  return ids;
}

std::vector<int32_t> encode_chat_prompt(const ServedModel& m, const std::string& rendered) {
  try {
    return serve::encode_chat_prompt(*m.tokenizer, m.frame.prefix, rendered);
  } catch (const Error& e) {
    bad_param("messages", e.what());
  }
}

bool iterates_content_parts(const std::string& source) {
  static const std::regex loop(R"(for\s+\w+\s+in\s+\w+\s*(\[\s*['"]content['"]\s*\]|\.content\b))");
  return std::regex_search(source, loop);
}

namespace {

// What a template's text says about the messages it takes.
struct TemplateTakes {
  bool developer;  // it names the `developer` role
  bool parts;      // it loops over a message's content parts
};
TemplateTakes takes_of(const std::string& source) {
  return {source.find("developer") != std::string::npos, iterates_content_parts(source)};
}

}  // namespace

ChatRenderer chat_renderer(chat::ChatTemplate tmpl) {
  // OpenAI's `developer` messages are its system prompt for newer models. A template that never
  // names the role would drop them (or refuse them), so they reach it as `system`, as llama.cpp
  // and vLLM pass them. A message's text parts reach a template that loops over them as they are,
  // any other joined (vLLM's "openai" and "string" content formats). Both are read from the
  // template that renders the call: the tool_use one where the call passes tools.
  const TemplateTakes plain = takes_of(tmpl.source), with_tools = takes_of(tmpl.tools_source());
  return [tmpl = std::move(tmpl), plain, with_tools](const nlohmann::ordered_json& messages,
                                                    bool add_generation_prompt,
                                                    const nlohmann::ordered_json& extra) {
    try {
      const TemplateTakes takes = tmpl.renders_tool_use(extra) ? with_tools : plain;
      nlohmann::ordered_json given = messages;
      for (auto& m : given) {
        if (!takes.developer && m.value("role", "") == "developer") m["role"] = "system";
        if (!takes.parts && m.contains("content") && m["content"].is_array()) m["content"] = content_text(m["content"]);
      }
      return tmpl.render(given, add_generation_prompt, extra);
    } catch (const chat::TemplateError& e) {
      throw ApiError(400, std::string("the chat template refused the messages: ") + e.what(), "messages",
                     "template_error");
    }
  };
}

std::optional<ApiError> context_refusal(int64_t length, const GenerationParams& params, int64_t context) {
  if (length >= context)
    return ApiError(400, concat("the prompt is ", length, " tokens, but the model's context is ", context,
                                " tokens (at least one must be left to generate)"),
                    "prompt", "context_length_exceeded");
  if (params.max_tokens && length + *params.max_tokens > context)
    return ApiError(400, concat("the context is ", context, " tokens, but ", length + *params.max_tokens,
                                " were asked for (", length, " in the prompt, ", *params.max_tokens, " to generate)"),
                    "max_tokens", "context_length_exceeded");
  return std::nullopt;
}

std::vector<infer::Request> make_requests(const ServedModel& m, const std::vector<std::vector<int32_t>>& prompts,
                                          const GenerationParams& params, const std::vector<int32_t>& extra_stop) {
  const int64_t context = m.limits.context;
  const uint64_t base_seed = params.seed ? *params.seed : std::random_device{}() * 0x100000000ull + std::random_device{}();
  std::vector<std::vector<int32_t>> bad_words;
  if (!params.bad_words.empty()) try {
      bad_words = bad_word_sequences(*m.tokenizer, params.bad_words);
    } catch (const Error& e) {
      bad_param("bad_words", e.what());
    }
  std::vector<infer::Request> requests;
  for (const auto& prompt : prompts) {
    const auto length = static_cast<int64_t>(prompt.size());
    if (length == 0) bad_param("prompt", "the prompt is empty (0 tokens)");
    if (auto refusal = context_refusal(length, params, context)) throw std::move(*refusal);
    for (int64_t i = 0; i < params.n; ++i) {
      infer::Request r;
      r.prompt = prompt;
      r.options = params.options;
      r.options.max_new_tokens = params.max_tokens.value_or(context - length);
      if (r.options.min_tokens > r.options.max_new_tokens)
        bad_param("min_tokens", concat("'min_tokens' ", r.options.min_tokens, " is more than the ",
                                       r.options.max_new_tokens, " tokens this choice may generate"));
      r.options.logprobs = params.logprobs;
      r.options.sampling.seed = base_seed + static_cast<uint64_t>(i);
      r.options.stop_tokens = params.stop_token_ids;
      r.options.bad_words = bad_words;
      if (!params.ignore_eos) {
        r.options.stop_tokens.insert(r.options.stop_tokens.end(), m.frame.stop.begin(), m.frame.stop.end());
        r.options.stop_tokens.insert(r.options.stop_tokens.end(), extra_stop.begin(), extra_stop.end());
      }
      requests.push_back(std::move(r));
    }
  }
  return requests;
}

bool truncate_prompt(std::vector<int32_t>& ids, const GenerationParams& params, int64_t context) {
  if (!params.truncate_prompt_tokens) return false;
  const int64_t k = *params.truncate_prompt_tokens;
  const int64_t keep = k > 0 ? k : context - params.max_tokens.value_or(1);
  if (keep < 1 || static_cast<int64_t>(ids.size()) <= keep) return false;
  ids.erase(ids.begin(), ids.end() - keep);
  return true;
}

}  // namespace difftx::serve
