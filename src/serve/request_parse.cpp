#include "serve/request_parse.h"

#include <algorithm>
#include <set>
#include <span>

#include "io/json_file.h"
#include "serve/api_error.h"
#include "serve/json_fields.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Fields accepted and ignored: they do not change what is generated.
const std::set<std::string> kHarmless = {"user",         "metadata",         "store",           "service_tier",
                                         "cache_prompt", "prompt_cache_key", "safety_identifier", "verbosity"};
// OpenAI's fields for what this server does not do: accepted as null (clients that send every
// field), refused by name otherwise.
const std::set<std::string> kNullOnly = {"prediction", "audio", "web_search_options"};
// OpenAI's reasoning_effort values; the template reads it (gpt-oss's does), as transformers passes it.
const std::set<std::string> kReasoningEfforts = {"none", "minimal", "low", "medium", "high", "xhigh"};

void check_keys(const json& body, const std::set<std::string>& known, std::span<const char* const> more = {}) {
  for (const auto& [key, value] : body.items()) {
    if (known.count(key) || kHarmless.count(key) || std::find(more.begin(), more.end(), key) != more.end()) continue;
    if (kNullOnly.count(key)) {
      if (value.is_null()) continue;
      unsupported(key, "'" + key + "'");
    }
    unknown_param(key);
  }
}

void check_model(const Fields& f, const ServeLimits& limits) {
  const auto model = f.string("model");
  if (model && *model != limits.model_name)
    throw ApiError(404, "the model '" + *model + "' does not exist; this server serves '" + limits.model_name + "'",
                   "model", "model_not_found");
}

// OpenAI's logit_bias: {"token id": bias}, ids in [0, vocab_size) written in decimal, biases
// numbers in [-100, 100].
std::vector<std::pair<int32_t, float>> parse_logit_bias(const Fields& f, int64_t vocab_size) {
  const json* v = f.find("logit_bias");
  if (!v) return {};
  if (!v->is_object()) bad_param("logit_bias", "'logit_bias' must be an object, not " + json_type_name(*v));
  std::vector<std::pair<int32_t, float>> bias;
  for (const auto& [key, value] : v->items()) {
    const bool digits = !key.empty() && key.size() <= 10 && std::all_of(key.begin(), key.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    const int64_t id = digits ? std::stoll(key) : -1;
    if (id < 0 || id > INT32_MAX)
      bad_param("logit_bias", concat("'logit_bias' keys must be token ids in [0, ", vocab_size, "), not \"",
                                     key.substr(0, 64), "\""));
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
      bad_param("logit_bias", concat("'logit_bias' values must be numbers in [-100, 100]; token ", id, " has ",
                                     value.dump().substr(0, 64)));
    bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
  }
  const std::string problem = infer::logit_bias_problem(bias, vocab_size);
  if (!problem.empty()) bad_param("logit_bias", "'logit_bias': " + problem);
  return bias;
}

std::vector<std::string> parse_stop(const Fields& f) {
  const json* v = f.find("stop");
  if (!v) return {};
  std::vector<std::string> stops;
  if (v->is_string()) {
    stops.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > 4) bad_param("stop", concat("'stop' holds at most 4 strings, not ", v->size()));
    for (const json& s : *v) {
      if (!s.is_string()) bad_param("stop", "'stop' must be a string or a list of strings, not a list holding " + json_type_name(s));
      stops.push_back(s.get<std::string>());
    }
  } else {
    bad_param("stop", "'stop' must be a string or a list of strings, not " + json_type_name(*v));
  }
  for (const std::string& s : stops)
    if (s.empty()) bad_param("stop", "a 'stop' string must not be empty");
  return stops;
}

// vLLM's bad_words: a list of non-empty strings, at most half the engine's sequences (each word
// may be tokenized twice: serve/bad_words.h).
std::vector<std::string> parse_bad_words(const Fields& f) {
  const json* v = f.find("bad_words");
  if (!v) return {};
  const auto most = static_cast<size_t>(infer::kMaxBadWords / 2);
  if (!v->is_array()) bad_param("bad_words", "'bad_words' must be a list of strings, not " + json_type_name(*v));
  if (v->size() > most) bad_param("bad_words", concat("'bad_words' holds at most ", most, " words, not ", v->size()));
  std::vector<std::string> words;
  for (const json& w : *v) {
    if (!w.is_string() || w.get<std::string>().empty())
      bad_param("bad_words", "'bad_words' must hold non-empty strings, not " + w.dump().substr(0, 64));
    words.push_back(w.get<std::string>());
  }
  return words;
}

// vLLM's stop_token_ids: at most kMaxStopTokenIds ids in [0, vocab_size), each ending the text
// where drawn (the token is no text).
std::vector<int32_t> parse_stop_token_ids(const Fields& f, int64_t vocab_size) {
  const json* v = f.find("stop_token_ids");
  if (!v || v->is_null()) return {};
  if (!v->is_array())
    bad_param("stop_token_ids", "'stop_token_ids' must be a list of token ids, not " + json_type_name(*v));
  if (v->size() > infer::kMaxStopTokenIds)
    bad_param("stop_token_ids",
              concat("'stop_token_ids' holds at most ", infer::kMaxStopTokenIds, " ids, not ", v->size()));
  std::vector<int32_t> ids;
  for (const json& id : *v) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size)
      bad_param("stop_token_ids", concat("'stop_token_ids' holds token ids in [0, ", vocab_size, "), not ",
                                         id.dump().substr(0, 64)));
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

// Speculative decoding per request: `draft` ("none", "ngram", or "model" where the server has a
// draft model; absent: the server's --draft) and `draft_tokens` (absent: the server's).
void parse_draft(const Fields& f, const ServeLimits& limits, infer::RequestOptions& o) {
  if (const auto draft = f.string("draft")) {
    if (*draft == "none") o.draft = infer::DraftMode::none;
    else if (*draft == "ngram") o.draft = infer::DraftMode::ngram;
    else if (*draft == "model" && limits.draft_model) o.draft = infer::DraftMode::model;
    else if (*draft == "model") bad_param("draft", "'draft': \"model\" needs a server started with --draft DIR");
    else bad_param("draft", "'draft' must be \"none\", \"ngram\" or \"model\", not \"" + *draft + "\"");
  }
  o.draft_tokens = f.integer("draft_tokens", 1, infer::kMaxDraftTokens).value_or(0);
}

// The fields completions and chat share; `max_tokens_keys` are the names max_tokens goes by.
// `least_max_tokens`: the smallest max_tokens taken (0 where the prompt alone may be asked for).
GenerationParams parse_common(const Fields& f, const ServeLimits& limits, const std::vector<std::string>& max_tokens_keys,
                              int64_t least_max_tokens = 1) {
  check_model(f, limits);
  GenerationParams p;
  infer::SamplingOptions& s = p.options.sampling;
  s.temperature = f.number("temperature", {0, 2}).value_or(limits.default_temperature.value_or(1.0));
  s.top_p = f.number("top_p", {0, 1, true}).value_or(limits.default_top_p.value_or(1.0));
  s.top_k = f.integer("top_k", 0, INT32_MAX).value_or(limits.default_top_k.value_or(0));
  s.min_p = f.number("min_p", {0, 1}).value_or(limits.default_min_p.value_or(0.0));
  s.presence_penalty = f.number("presence_penalty", {-2, 2}).value_or(0.0);
  s.frequency_penalty = f.number("frequency_penalty", {-2, 2}).value_or(0.0);
  // vLLM's extra parameter (transformers' repetition penalty), as its generation_config default too.
  s.repetition_penalty =
      f.number("repetition_penalty", {0, 10, true}).value_or(limits.default_repetition_penalty.value_or(1.0));
  // A signed 64-bit integer, as vLLM takes it: each seed its own stream (with unsigned seeds beside
  // them, -1 and 2^64 - 1 would be one).
  if (const auto seed = f.integer("seed", INT64_MIN, INT64_MAX)) p.seed = static_cast<uint64_t>(*seed);
  for (const std::string& key : max_tokens_keys)
    if (const auto m = f.integer(key, least_max_tokens, std::max<int64_t>(1, limits.context)); m && !p.max_tokens)
      p.max_tokens = m;
  p.n = f.integer("n", 1, limits.max_choices).value_or(1);
  p.options.stop_strings = parse_stop(f);
  p.options.include_stop_str = f.boolean("include_stop_str_in_output").value_or(false);
  p.stop_token_ids = parse_stop_token_ids(f, limits.vocab_size);
  p.bad_words = parse_bad_words(f);
  p.truncate_prompt_tokens = f.integer("truncate_prompt_tokens", -1, std::max<int64_t>(1, limits.context));
  if (p.truncate_prompt_tokens == 0)
    bad_param("truncate_prompt_tokens", "'truncate_prompt_tokens' must be -1 or at least 1, not 0");
  p.ignore_eos = f.boolean("ignore_eos").value_or(false);
  // vLLM's: no stop token or stop string before this many tokens (at most max_tokens: make_requests).
  p.options.min_tokens = f.integer("min_tokens", 0, std::max<int64_t>(1, limits.context)).value_or(0);
  p.stream = f.boolean("stream").value_or(false);
  if (const json* so = f.find("stream_options")) {
    if (!so->is_object()) bad_param("stream_options", "'stream_options' must be an object, not " + json_type_name(*so));
    const Fields options(*so);
    check_keys(*so, {"include_usage"});
    p.include_usage = options.boolean("include_usage").value_or(false);
    if (!p.stream) bad_param("stream_options", "'stream_options' is only allowed when 'stream' is true");
  }
  s.logit_bias = parse_logit_bias(f, limits.vocab_size);
  // vLLM's: score the prompt, each token with this many alternatives (its -1, the whole
  // vocabulary, is not served). Not in a stream, which vLLM refuses too.
  if (const auto k = f.integer("prompt_logprobs", 0, infer::kMaxTopLogprobs)) {
    if (p.stream) bad_param("prompt_logprobs", "'prompt_logprobs' is not available with 'stream': true");
    p.options.prompt_logprobs = static_cast<int>(*k);
  }
  parse_draft(f, limits, p.options);
  p.skip_special_tokens = f.boolean("skip_special_tokens").value_or(true);
  // vLLM's too; it joins special tokens with spaces only in its slow (Python) tokenizers' text,
  // which byte-level BPE tokenizers are not: checked, and the text is the same either way.
  f.boolean("spaces_between_special_tokens");
  return p;
}

// A list of ids, each in [0, vocab_size).
std::vector<int32_t> parse_ids(const json& list, int64_t vocab_size, const std::string& param) {
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (const json& v : list) {
    const auto id = json_integer(v, 0, vocab_size - 1);
    if (!id) bad_param(param, concat("token ids must be integers in [0, ", vocab_size, "), not ", v.dump()));
    ids.push_back(static_cast<int32_t>(*id));
  }
  return ids;
}

std::vector<Prompt> parse_prompts(const Fields& f, int64_t vocab_size) {
  const json* v = f.find("prompt");
  if (!v) missing_param("prompt");
  const std::string shape = "'prompt' must be a string, a list of strings, a list of token ids or a list of lists of them";
  if (v->is_string()) return {Prompt{v->get<std::string>(), {}}};
  if (!v->is_array()) bad_param("prompt", shape + ", not " + json_type_name(*v));
  if (v->empty()) bad_param("prompt", "'prompt' must not be an empty list");
  if (v->front().is_number()) return {Prompt{std::nullopt, parse_ids(*v, vocab_size, "prompt")}};
  std::vector<Prompt> prompts;
  for (const json& item : *v) {
    if (item.is_string()) {
      prompts.push_back({item.get<std::string>(), {}});
    } else if (item.is_array() && !item.empty()) {
      prompts.push_back({std::nullopt, parse_ids(item, vocab_size, "prompt")});
    } else {
      bad_param("prompt", shape + "; it holds " + (item.is_array() ? "an empty list" : json_type_name(item)));
    }
  }
  return prompts;
}

// A message's content: a string, or a list of text parts (checked; the renderer joins them or
// passes them on, served_model.h).
ordered_json message_content(const ordered_json& content) {
  if (content.is_string()) return content;
  if (!content.is_array())
    bad_param("messages",
              "a message's 'content' must be a string or a list of parts, not " + json_type_name(json(content)));
  for (const ordered_json& part : content) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      bad_param("messages", "a content part must be an object with a 'type'");
    if (part["type"] != "text") unsupported("messages", "content of type '" + part["type"].get<std::string>() + "'");
    if (!part.contains("text") || !part["text"].is_string()) bad_param("messages", "a text part needs a string 'text'");
  }
  return content;
}

ordered_json parse_messages(const ordered_json& body) {
  const auto it = body.find("messages");
  if (it == body.end() || it->is_null()) missing_param("messages");
  if (!it->is_array() || it->empty()) bad_param("messages", "'messages' must be a non-empty list of messages");
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool"};
  ordered_json messages = ordered_json::array();
  for (const ordered_json& m : *it) {
    if (!m.is_object()) bad_param("messages", "each message must be an object, not " + json_type_name(json(m)));
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string() || !roles.count(role->get<std::string>()))
      bad_param("messages", "each message needs a 'role': system, developer, user, assistant or tool");
    for (const char* key : {"function_call", "audio"})
      if (m.contains(key) && !m[key].is_null()) unsupported("messages", std::string("a message with '") + key + "'");
    ordered_json out = m;
    const auto content = m.find("content");
    // As OpenAI: only an assistant message may leave out its content (a turn of tool calls).
    if ((content == m.end() || content->is_null()) && *role != "assistant")
      bad_param("messages", "a " + role->get<std::string>() + " message needs a 'content'");
    out["content"] = content == m.end() || content->is_null() ? ordered_json("") : message_content(*content);
    if (m.contains("tool_calls") && m["tool_calls"].is_null()) out.erase("tool_calls");  // null: none
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      if (*role != "assistant") bad_param("messages", "only an assistant message may have 'tool_calls'");
      out["tool_calls"] = checked_tool_calls(m["tool_calls"]);
    }
    // vLLM's newer name for an assistant turn's thinking: the templates read reasoning_content.
    if (*role == "assistant" && m.contains("reasoning") && m["reasoning"].is_string() && !m.contains("reasoning_content"))
      out["reasoning_content"] = m["reasoning"];
    if (m.contains("tool_call_id") && !m["tool_call_id"].is_string() && !m["tool_call_id"].is_null())
      bad_param("messages", "a message's 'tool_call_id' must be a string");
    if (*role == "tool" && !(m.contains("tool_call_id") && m["tool_call_id"].is_string()))
      bad_param("messages", "a tool message needs the 'tool_call_id' of the call it answers");
    messages.push_back(std::move(out));
  }
  return messages;
}

// The template's extra variables: reasoning_effort, documents, chat_template_kwargs (which may set
// them too, and win), then `tools`.
ordered_json template_variables(const Fields& f, const ordered_json& ordered, const OutputRequest& output) {
  ordered_json vars = ordered_json::object();
  if (const json* v = f.find("reasoning_effort"); v && !v->is_null()) {
    if (!v->is_string() || !kReasoningEfforts.count(v->get<std::string>()))
      bad_param("reasoning_effort", "'reasoning_effort' must be one of none, minimal, low, medium, high, xhigh");
    vars["reasoning_effort"] = *v;
  }
  if (const json* v = f.find("documents"); v && !v->is_null()) {  // retrieval templates' (Command R's)
    if (!v->is_array()) bad_param("documents", "'documents' must be a list");
    vars["documents"] = ordered["documents"];
  }
  if (const json* v = f.find("chat_template_kwargs")) {
    if (!v->is_object()) bad_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    for (const char* reserved : {"messages", "add_generation_prompt"})
      if (v->contains(reserved))
        bad_param("chat_template_kwargs", std::string("'chat_template_kwargs' must not set '") + reserved + "'");
    for (const auto& [key, value] : ordered["chat_template_kwargs"].items()) vars[key] = value;
  }
  if (!output.tools.is_null()) vars["tools"] = output.tools;
  return vars;
}

}  // namespace

// Keys in one object of a request: parse_ordered_body's ordered_json inserts each key in time linear
// in the object's keys (a body of 300,000 keys took 77 s); no request field needs more.
constexpr int64_t kMaxRequestObjectKeys = 1024;

std::string content_text(const ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (size_t i = 0; i < content.size(); ++i) {
      if (i > 0) text += '\n';
      text += content[i].value("text", std::string());
    }
  return text;
}

json parse_body(std::string_view body) {
  try {
    return io::parse_json_text(body, "request body", nullptr, kMaxRequestObjectKeys);
  } catch (const Error& e) {
    throw ApiError(400, std::string("invalid JSON: ") + e.what(), "", "invalid_json");
  }
}

ordered_json parse_ordered_body(std::string_view body) {
  parse_body(body);  // a 400 for what is not JSON, too deep or with a repeated key
  return ordered_json::parse(body);
}

ordered_json parse_request_json_text(std::string_view text, const std::string& source) {
  io::parse_json_text(text, source, nullptr, kMaxRequestObjectKeys);
  return ordered_json::parse(text);
}

CompletionRequest parse_completion_request(const json& body, const ordered_json& ordered, const ServeLimits& limits) {
  const Fields f(body);
  check_keys(body, {"model", "prompt", "max_tokens", "temperature", "top_p", "top_k", "min_p", "n", "stream",
                    "stream_options", "logprobs", "echo", "stop", "presence_penalty", "frequency_penalty",
                    "repetition_penalty", "best_of",
                    "logit_bias", "seed", "suffix", "draft", "draft_tokens", "skip_special_tokens",
                    "spaces_between_special_tokens", "stop_token_ids", "ignore_eos", "include_stop_str_in_output",
                    "min_tokens", "prompt_logprobs", "bad_words", "truncate_prompt_tokens"},
             kOutputFormatFields);
  CompletionRequest r;
  // echo: the text (and the logprobs) start with the prompt's; max_tokens 0 then asks for it alone.
  r.echo = f.boolean("echo").value_or(false);
  r.params = parse_common(f, limits, {"max_tokens"}, r.echo ? 0 : 1);
  parse_output_format(body, ordered, r.output);
  if (const auto logprobs = f.integer("logprobs", 0, 5)) {
    r.params.logprobs = true;
    r.params.options.top_logprobs = static_cast<int>(*logprobs);
    if (r.echo)
      r.params.options.prompt_logprobs =
          std::max(r.params.options.prompt_logprobs.value_or(0), static_cast<int>(*logprobs));
  }
  if (const auto best_of = f.integer("best_of", 1, limits.max_choices); best_of && *best_of > r.params.n)
    unsupported("best_of", "'best_of' greater than 'n'");
  if (const auto suffix = f.string("suffix"); suffix && !suffix->empty()) unsupported("suffix", "'suffix'");
  r.prompts = parse_prompts(f, limits.vocab_size);
  if (static_cast<int64_t>(r.prompts.size()) * r.params.n > limits.max_choices)
    bad_param("n", concat(r.prompts.size(), " prompts times n = ", r.params.n, " choices is more than the ",
                          limits.max_choices, " a request may ask for"));
  return r;
}

ChatRequest parse_chat_request(const json& body, const ordered_json& ordered, const ServeLimits& limits) {
  const Fields f(body);
  check_keys(body, {"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k",
                    "min_p", "n", "stream", "stream_options", "logprobs", "top_logprobs", "stop", "presence_penalty",
                    "frequency_penalty", "repetition_penalty", "logit_bias", "seed", "tools", "tool_choice",
                    "parallel_tool_calls", "functions", "function_call", "modalities", "chat_template_kwargs",
                    "reasoning_effort", "max_reasoning_tokens", "draft", "draft_tokens", "documents",
                    "add_generation_prompt", "continue_final_message", "skip_special_tokens",
                    "spaces_between_special_tokens", "stop_token_ids", "ignore_eos", "include_stop_str_in_output",
                    "min_tokens", "prompt_logprobs", "bad_words", "truncate_prompt_tokens"},
             kOutputFormatFields);
  ChatRequest r;
  r.params = parse_common(f, limits, {"max_completion_tokens", "max_tokens"});
  r.params.logprobs = f.boolean("logprobs").value_or(false);
  if (const auto top = f.integer("top_logprobs", 0, infer::kMaxTopLogprobs)) {
    if (!r.params.logprobs) bad_param("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    r.params.options.top_logprobs = static_cast<int>(*top);
  }
  if (const json* v = f.find("functions"); v && !(v->is_array() && v->empty()))
    unsupported("functions", "'functions' (the legacy API; use 'tools')");
  if (const json* v = f.find("function_call"); v && !(v->is_string() && (*v == "none" || *v == "auto")))
    unsupported("function_call", "'function_call' (the legacy API; use 'tool_choice')");
  parse_output_format(body, ordered, r.output);
  parse_tools(body, ordered, r.output);
  if (const json* v = f.find("modalities"); v && *v != json::array({"text"}))
    unsupported("modalities", "'modalities' other than [\"text\"]");
  r.template_kwargs = template_variables(f, ordered, r.output);
  r.messages = parse_messages(ordered);
  r.add_generation_prompt = f.boolean("add_generation_prompt").value_or(true);
  r.continue_final_message = f.boolean("continue_final_message").value_or(false);
  if (r.continue_final_message && r.add_generation_prompt)
    bad_param("continue_final_message", "'continue_final_message' needs 'add_generation_prompt': false");
  if (r.continue_final_message && r.messages.back().value("role", "") != "assistant")
    bad_param("continue_final_message", "'continue_final_message' needs a final assistant message to continue");
  return r;
}

TokenizeRequest parse_tokenize_request(const json& body) {
  const Fields f(body);
  check_keys(body, {"content", "prompt", "add_special", "model"});
  TokenizeRequest r;
  auto text = f.string("content");
  if (!text) text = f.string("prompt");
  if (!text) throw ApiError(400, "'content' (or 'prompt') is required", "content", "missing_required_parameter");
  r.text = *text;
  r.add_special = f.boolean("add_special").value_or(false);
  return r;
}

std::vector<int32_t> parse_detokenize_request(const json& body, int64_t vocab_size) {
  const Fields f(body);
  check_keys(body, {"tokens", "model"});
  const json* v = f.find("tokens");
  if (!v) missing_param("tokens");
  if (!v->is_array()) bad_param("tokens", "'tokens' must be a list of token ids, not " + json_type_name(*v));
  return parse_ids(*v, vocab_size, "tokens");
}

ChatRequest parse_apply_template_request(const json& body, const ordered_json& ordered) {
  const Fields f(body);
  check_keys(body, {"messages", "model", "tools", "chat_template_kwargs", "reasoning_effort", "documents"});
  ChatRequest r;
  parse_tools(body, ordered, r.output);
  r.template_kwargs = template_variables(f, ordered, r.output);
  r.messages = parse_messages(ordered);
  return r;
}

}  // namespace difftx::serve
