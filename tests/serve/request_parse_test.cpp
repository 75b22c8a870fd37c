// Request parsing: every field family is read with its type and range, OpenAI's defaults and
// aliases hold, and each kind of bad request is the right status naming the right field.
#include <gtest/gtest.h>

#include <string>

#include "chat/chat_template.h"
#include "serve/api_error.h"
#include "serve/request_parse.h"
#include "support/api_errors.h"

namespace difftx::serve {
namespace {

using nlohmann::json;

ServeLimits limits() {
  ServeLimits l;
  l.model_name = "tiny";
  l.vocab_size = 512;
  l.context = 256;
  return l;
}

CompletionRequest parse_completion(const std::string& body) {
  return parse_completion_request(parse_body(body), parse_ordered_body(body), limits());
}

// The ApiError a completion body raises (status, param, message part), or a failure.
void expect_completion_error(const std::string& body, int status, const std::string& param, const std::string& part) {
  testing::expect_api_error([](const std::string& b) { parse_completion(b); }, body, status, param, part);
}

ChatRequest parse_chat(const std::string& body) {
  return parse_chat_request(parse_body(body), parse_ordered_body(body), limits());
}

void expect_chat_error(const std::string& body, int status, const std::string& param, const std::string& part) {
  testing::expect_api_error([](const std::string& b) { parse_chat(b); }, body, status, param, part);
}

TEST(ServeRequestParse, CompletionDefaultsAndFields) {
  const CompletionRequest r = parse_completion(R"({"model": "tiny", "prompt": "Hello"})");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(*r.prompts[0].text, "Hello");
  EXPECT_EQ(r.params.n, 1);
  EXPECT_FALSE(r.params.max_tokens);
  EXPECT_FALSE(r.params.seed);
  EXPECT_FALSE(r.params.stream);
  EXPECT_FALSE(r.params.logprobs);
  EXPECT_EQ(r.params.options.sampling.temperature, 1.0);
  EXPECT_EQ(r.params.options.sampling.top_p, 1.0);
  EXPECT_EQ(r.params.options.sampling.min_p, 0.0);
  EXPECT_EQ(r.params.options.sampling.repetition_penalty, 1.0);
  // generation_config.json's min_p and repetition_penalty are the defaults, as vLLM takes them.
  ServeLimits configured = limits();
  configured.default_min_p = 0.05;
  configured.default_repetition_penalty = 1.1;
  const CompletionRequest d =
      parse_completion_request(parse_body(R"({"prompt": "a"})"), parse_ordered_body(R"({"prompt": "a"})"), configured);
  EXPECT_EQ(d.params.options.sampling.min_p, 0.05);
  EXPECT_EQ(d.params.options.sampling.repetition_penalty, 1.1);

  const CompletionRequest f =
      parse_completion(R"({"prompt": [1, 2, 3], "max_tokens": 7, "temperature": 0, "top_p": 0.5, "top_k": 40,
                    "min_p": 0.1, "seed": 42, "n": 3, "stop": ["\n", "END"], "presence_penalty": -2,
                    "frequency_penalty": 2.0, "repetition_penalty": 1.2, "logprobs": 3, "stream": true,
                    "stop_token_ids": [5, 511], "ignore_eos": true, "include_stop_str_in_output": true,
                    "min_tokens": 2,
                    "stream_options": {"include_usage": true}, "echo": false, "best_of": 3, "logit_bias": {},
                    "suffix": null, "user": "u", "metadata": {"a": 1}})");
  ASSERT_EQ(f.prompts.size(), 1u);
  EXPECT_FALSE(f.prompts[0].text);
  EXPECT_EQ(f.prompts[0].ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(*f.params.max_tokens, 7);
  EXPECT_EQ(f.params.options.sampling.temperature, 0.0);
  EXPECT_EQ(f.params.options.sampling.top_p, 0.5);
  EXPECT_EQ(f.params.options.sampling.top_k, 40);
  EXPECT_DOUBLE_EQ(f.params.options.sampling.min_p, 0.1);
  EXPECT_EQ(f.params.options.sampling.presence_penalty, -2.0);
  EXPECT_EQ(f.params.options.sampling.frequency_penalty, 2.0);
  EXPECT_EQ(f.params.options.sampling.repetition_penalty, 1.2);
  EXPECT_EQ(f.params.stop_token_ids, (std::vector<int32_t>{5, 511}));
  EXPECT_TRUE(f.params.ignore_eos);
  EXPECT_TRUE(f.params.options.include_stop_str);
  EXPECT_EQ(f.params.options.min_tokens, 2);
  EXPECT_FALSE(r.params.ignore_eos);
  EXPECT_FALSE(r.params.options.include_stop_str);
  EXPECT_EQ(*f.params.seed, 42u);
  EXPECT_EQ(f.params.n, 3);
  EXPECT_EQ(f.params.options.stop_strings, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(f.params.logprobs);
  EXPECT_EQ(f.params.options.top_logprobs, 3);
  EXPECT_TRUE(f.params.stream);
  EXPECT_TRUE(f.params.include_usage);
}

// Speculative decoding per request: `draft` and `draft_tokens`; "model" only where the server has
// a draft model.
TEST(ServeRequestParse, DraftFields) {
  const CompletionRequest none = parse_completion(R"({"prompt": "a"})");
  EXPECT_FALSE(none.params.options.draft);
  EXPECT_EQ(none.params.options.draft_tokens, 0);
  const CompletionRequest ngram = parse_completion(R"({"prompt": "a", "draft": "ngram", "draft_tokens": 9})");
  EXPECT_EQ(ngram.params.options.draft, infer::DraftMode::ngram);
  EXPECT_EQ(ngram.params.options.draft_tokens, 9);
  EXPECT_EQ(parse_chat(R"({"messages": [{"role": "user", "content": "a"}], "draft": "none"})").params.options.draft,
            infer::DraftMode::none);
  ServeLimits with_model = limits();
  with_model.draft_model = true;
  const std::string body = R"({"prompt": "a", "draft": "model"})";
  EXPECT_EQ(parse_completion_request(parse_body(body), parse_ordered_body(body), with_model).params.options.draft,
            infer::DraftMode::model);
  expect_completion_error(body, 400, "draft", "needs a server started with --draft DIR");
  expect_completion_error(R"({"prompt": "a", "draft": "eagle"})", 400, "draft", "not \"eagle\"");
  expect_completion_error(R"({"prompt": "a", "draft": 3})", 400, "draft", "");
  expect_completion_error(R"({"prompt": "a", "draft_tokens": 0})", 400, "draft_tokens", "[1, 64]");
  expect_completion_error(R"({"prompt": "a", "draft_tokens": 65})", 400, "draft_tokens", "[1, 64]");
}

TEST(ServeRequestParse, PromptShapes) {
  const auto prompts = [](const std::string& body) { return parse_completion(body).prompts; };
  EXPECT_EQ(prompts(R"({"prompt": ["a", "b"]})").size(), 2u);
  const auto lists = prompts(R"({"prompt": [[1, 2], [3]]})");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[1].ids, (std::vector<int32_t>{3}));
  EXPECT_EQ(prompts(R"({"prompt": [5.0]})")[0].ids, (std::vector<int32_t>{5}));  // an integral float is an integer
  EXPECT_EQ(prompts(R"({"prompt": "x", "stop": "y"})").size(), 1u);
  EXPECT_EQ(parse_completion(R"({"prompt": "x", "seed": -1})").params.seed,
            ~uint64_t{0});
}

TEST(ServeRequestParse, MalformedBodies) {
  expect_completion_error("{", 400, "", "invalid JSON");
  expect_completion_error("", 400, "", "invalid JSON");
  expect_completion_error(R"({"prompt": "a"} trailing)", 400, "", "invalid JSON");
  expect_completion_error(R"({"prompt": "a", "prompt": "b"})", 400, "", "invalid JSON");  // a repeated key
  expect_completion_error(std::string(100000, '[') + std::string(100000, ']'), 400, "", "invalid JSON");  // depth
  expect_completion_error("[1, 2]", 400, "", "must be a JSON object");
  expect_completion_error("\"text\"", 400, "", "must be a JSON object");
  expect_completion_error(R"({"prompt": NaN})", 400, "", "invalid JSON");
  // An object of more than 1024 keys anywhere (the ordered parse is quadratic in them).
  const auto with_keys = [](int n) {
    std::string keys;
    for (int i = 0; i < n; ++i) keys += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 0";
    return R"({"prompt": "a", "x": {"y": {)" + keys + "}}}";
  };
  expect_completion_error(with_keys(1025), 400, "", "more than 1024 keys");
  EXPECT_EQ(parse_body(with_keys(1024))["x"]["y"].size(), 1024u);
  expect_completion_error(R"({"prompt": "a", "max_tokens": 1e999})", 400, "", "invalid JSON");
}

TEST(ServeRequestParse, WrongTypes) {
  expect_completion_error(R"({"prompt": 5})", 400, "prompt", "must be a string");
  expect_completion_error(R"({"prompt": {}})", 400, "prompt", "must be a string");
  expect_completion_error(R"({"prompt": []})", 400, "prompt", "empty list");
  expect_completion_error(R"({"prompt": [[]]})", 400, "prompt", "empty list");
  expect_completion_error(R"({"prompt": [1, "a"]})", 400, "prompt", "integers");
  expect_completion_error(R"({"prompt": ["a", 1]})", 400, "prompt", "a number");
  expect_completion_error(R"({"prompt": "a", "max_tokens": "5"})", 400, "max_tokens", "must be an integer");
  expect_completion_error(R"({"prompt": "a", "max_tokens": 2.5})", 400, "max_tokens", "must be an integer in");
  expect_completion_error(R"({"prompt": "a", "temperature": "hot"})", 400, "temperature", "must be a number");
  expect_completion_error(R"({"prompt": "a", "temperature": true})", 400, "temperature", "must be a number");
  expect_completion_error(R"({"prompt": "a", "stream": 1})", 400, "stream", "must be a boolean");
  expect_completion_error(R"({"prompt": "a", "stop": 3})", 400, "stop", "string or a list");
  expect_completion_error(R"({"prompt": "a", "stop": ["x", 3]})", 400, "stop", "string or a list");
  expect_completion_error(R"({"prompt": "a", "seed": "1"})", 400, "seed", "must be an integer");
  expect_completion_error(R"({"prompt": "a", "seed": 1.5})", 400, "seed", "must be an integer");
  expect_completion_error(R"({"prompt": "a", "model": 3})", 400, "model", "must be a string");
  expect_completion_error(R"({"prompt": "a", "logit_bias": []})", 400, "logit_bias", "must be an object");
  expect_completion_error(R"({"prompt": "a", "stream": true, "stream_options": 1})", 400, "stream_options",
                          "'stream_options' must be an object, not a number");
}

TEST(ServeRequestParse, OutOfRange) {
  expect_completion_error(R"({"prompt": "a", "max_tokens": 0})", 400, "max_tokens", "[1, 256]");
  expect_completion_error(R"({"prompt": "a", "max_tokens": -5})", 400, "max_tokens", "[1, 256]");
  expect_completion_error(R"({"prompt": "a", "max_tokens": 257})", 400, "max_tokens", "[1, 256]");
  expect_completion_error(R"({"prompt": "a", "max_tokens": 99999999999999999999})", 400, "max_tokens", "[1, 256]");
  expect_completion_error(R"({"prompt": "a", "temperature": -0.1})", 400, "temperature", "[0, 2]");
  expect_completion_error(R"({"prompt": "a", "temperature": 2.5})", 400, "temperature", "[0, 2]");
  expect_completion_error(R"({"prompt": "a", "temperature": 1e308})", 400, "temperature", "[0, 2]");
  expect_completion_error(R"({"prompt": "a", "top_p": 0})", 400, "top_p", "(0, 1]");
  expect_completion_error(R"({"prompt": "a", "top_p": 1.01})", 400, "top_p", "(0, 1]");
  expect_completion_error(R"({"prompt": "a", "top_k": -1})", 400, "top_k", "must be an integer in");
  expect_completion_error(R"({"prompt": "a", "min_p": 2})", 400, "min_p", "[0, 1]");
  expect_completion_error(R"({"prompt": "a", "presence_penalty": 2.5})", 400, "presence_penalty", "[-2, 2]");
  expect_completion_error(R"({"prompt": "a", "frequency_penalty": -3})", 400, "frequency_penalty", "[-2, 2]");
  expect_completion_error(R"({"prompt": "a", "repetition_penalty": 0})", 400, "repetition_penalty", "(0, 10]");
  expect_completion_error(R"({"prompt": "a", "stop_token_ids": 5})", 400, "stop_token_ids", "a list of token ids");
  expect_completion_error(R"({"prompt": "a", "stop_token_ids": [512]})", 400, "stop_token_ids", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "stop_token_ids": [-1]})", 400, "stop_token_ids", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "stop_token_ids": ["1"]})", 400, "stop_token_ids", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "ignore_eos": 1})", 400, "ignore_eos", "boolean");
  expect_completion_error(R"({"prompt": "a", "min_tokens": -1})", 400, "min_tokens", "[0, 256]");
  expect_completion_error(R"({"prompt": "a", "repetition_penalty": 10.5})", 400, "repetition_penalty", "(0, 10]");
  expect_completion_error(R"({"prompt": "a", "n": 0})", 400, "n", "[1, 16]");
  expect_completion_error(R"({"prompt": "a", "n": 17})", 400, "n", "[1, 16]");
  expect_completion_error(R"({"prompt": ["a", "b", "c"], "n": 6})", 400, "n", "n = 6 choices is more than the 16");
  expect_completion_error(R"({"prompt": "a", "logprobs": 6})", 400, "logprobs", "[0, 5]");
  expect_completion_error(R"({"prompt": [512]})", 400, "prompt", "[0, 512)");
  expect_completion_error(R"({"prompt": [-1]})", 400, "prompt", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "stop": ["a", "b", "c", "d", "e"]})", 400, "stop", "at most 4");
  expect_completion_error(R"({"prompt": "a", "stop": ""})", 400, "stop", "must not be empty");
  expect_completion_error(R"({"prompt": "a", "seed": 18446744073709551616})", 400, "seed", "must be an integer");
  expect_completion_error(R"({"prompt": "a", "seed": 9223372036854775808})", 400, "seed",
                          "[-9223372036854775808, 9223372036854775807]");
  expect_completion_error(R"({"prompt": "a", "seed": 1.5})", 400, "seed", "not 1.5");
  expect_completion_error(R"({"prompt": "a", "seed": 9223372036854775808.0})", 400, "seed",
                          "9223372036854775807], not");  // 2^63 as a float: no int64
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"512": 1}})", 400, "logit_bias", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"-1": 1}})", 400, "logit_bias", "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"x": 1}})", 400, "logit_bias", "not \"x\"");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"99999999999999999999": 1}})", 400, "logit_bias",
                          "[0, 512)");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"5": 100.5}})", 400, "logit_bias", "[-100, 100]");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"5": "1"}})", 400, "logit_bias", "[-100, 100]");
  expect_completion_error(R"({"prompt": "a", "logit_bias": {"5": 1, "05": 2}})", 400, "logit_bias", "token 5 is given twice");
}

// OpenAI's logit_bias: token ids as decimal keys, biases in [-100, 100], on both endpoints.
TEST(ServeRequestParse, LogitBias) {
  const CompletionRequest c = parse_completion(R"({"prompt": "a", "logit_bias": {"5": -100, "7": 2.5, "0": 100}})");
  EXPECT_EQ(c.params.options.sampling.logit_bias,
            (std::vector<std::pair<int32_t, float>>{{0, 100.0f}, {5, -100.0f}, {7, 2.5f}}));
  const ChatRequest r =
      parse_chat(R"({"messages": [{"role": "user", "content": "hi"}], "logit_bias": {"511": -1}})");
  EXPECT_EQ(r.params.options.sampling.logit_bias, (std::vector<std::pair<int32_t, float>>{{511, -1.0f}}));
  EXPECT_TRUE(parse_completion(R"({"prompt": "a", "logit_bias": {}})").params.options.sampling.logit_bias.empty());
}

// vLLM's skip_special_tokens (default true) on both endpoints; spaces_between_special_tokens is
// checked and changes nothing here.
TEST(ServeRequestParse, SkipSpecialTokens) {
  EXPECT_TRUE(parse_completion(R"({"prompt": "a"})").params.skip_special_tokens);
  EXPECT_FALSE(parse_completion(R"({"prompt": "a", "skip_special_tokens": false})").params.skip_special_tokens);
  EXPECT_TRUE(parse_completion(R"({"prompt": "a", "skip_special_tokens": null})").params.skip_special_tokens);
  const std::string hi = R"("messages": [{"role": "user", "content": "hi"}])";
  EXPECT_TRUE(parse_chat("{" + hi + "}").params.skip_special_tokens);
  EXPECT_FALSE(parse_chat("{" + hi + R"(, "skip_special_tokens": false, "spaces_between_special_tokens": false})")
                   .params.skip_special_tokens);
  EXPECT_TRUE(parse_completion(R"({"prompt": "a", "spaces_between_special_tokens": true})").params.skip_special_tokens);
  expect_completion_error(R"({"prompt": "a", "skip_special_tokens": "no"})", 400, "skip_special_tokens",
                          "must be a boolean");
  expect_chat_error("{" + hi + R"(, "skip_special_tokens": 0})", 400, "skip_special_tokens", "must be a boolean");
  expect_chat_error("{" + hi + R"(, "spaces_between_special_tokens": "yes"})", 400, "spaces_between_special_tokens",
                    "must be a boolean");
}

// A scored prompt: echo (with logprobs, the prompt's scores at as many alternatives; max_tokens 0
// then allowed), vLLM's prompt_logprobs on completions and chat (not streamed; -1, the whole
// vocabulary, refused).
TEST(ServeRequestParse, EchoAndPromptLogprobs) {
  const CompletionRequest echo = parse_completion(R"({"prompt": "a", "echo": true, "max_tokens": 0})");
  EXPECT_TRUE(echo.echo);
  EXPECT_EQ(*echo.params.max_tokens, 0);
  EXPECT_FALSE(echo.params.options.prompt_logprobs);  // no logprobs: the text alone
  const CompletionRequest scored = parse_completion(R"({"prompt": "a", "echo": true, "logprobs": 2})");
  EXPECT_EQ(scored.params.options.prompt_logprobs, 2);
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "echo": true, "logprobs": 2, "prompt_logprobs": 5})")
                .params.options.prompt_logprobs,
            5);
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "logprobs": 2})").params.options.prompt_logprobs, std::nullopt);
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "prompt_logprobs": 0})").params.options.prompt_logprobs, 0);
  EXPECT_EQ(parse_chat(R"({"messages": [{"role": "user", "content": "hi"}], "prompt_logprobs": 20})")
                .params.options.prompt_logprobs,
            20);
  expect_completion_error(R"({"prompt": "a", "max_tokens": 0})", 400, "max_tokens", "[1, 256]");
  expect_completion_error(R"({"prompt": "a", "prompt_logprobs": -1})", 400, "prompt_logprobs", "[0, 20]");
  expect_completion_error(R"({"prompt": "a", "prompt_logprobs": 1, "stream": true})", 400, "prompt_logprobs",
                          "not available with 'stream'");
  expect_chat_error(R"({"messages": [{"role": "user", "content": "hi"}], "prompt_logprobs": 21})", 400,
                    "prompt_logprobs", "[0, 20]");
}

TEST(ServeRequestParse, TruncatePromptTokens) {
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "truncate_prompt_tokens": 5})").params.truncate_prompt_tokens, 5);
  EXPECT_EQ(parse_chat(R"({"messages": [{"role": "user", "content": "hi"}], "truncate_prompt_tokens": -1})")
                .params.truncate_prompt_tokens,
            -1);
  expect_completion_error(R"({"prompt": "a", "truncate_prompt_tokens": 0})", 400, "truncate_prompt_tokens", "not 0");
  expect_completion_error(R"({"prompt": "a", "truncate_prompt_tokens": -2})", 400, "truncate_prompt_tokens", "[-1, 256]");
  expect_completion_error(R"({"prompt": "a", "truncate_prompt_tokens": 257})", 400, "truncate_prompt_tokens", "[-1, 256]");
}

TEST(ServeRequestParse, UnsupportedAndUnknownParameters) {
  expect_completion_error(R"({"prompt": "a", "best_of": 2})", 400, "best_of", "not supported");
  expect_completion_error(R"({"prompt": "a", "suffix": "z"})", 400, "suffix", "not supported");
  expect_completion_error(R"({"prompt": "a", "frobnicate": 1})", 400, "frobnicate", "unrecognized");
  expect_completion_error(R"({"prompt": "a", "stream_options": {"include_usage": true}})", 400, "stream_options",
                          "only allowed when 'stream' is true");
  expect_completion_error(R"({"prompt": "a", "stream": true, "stream_options": {"x": 1}})", 400, "x", "unrecognized");
  expect_completion_error(R"({"prompt": "a", "model": "gpt-4"})", 404, "model", "does not exist");
  expect_completion_error(R"({"max_tokens": 5})", 400, "prompt", "required");

  const std::string m = R"("messages": [{"role": "user", "content": "hi"}])";
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function"}]})", 400, "tools", "must be {");
  expect_chat_error("{" + m + R"(, "tool_choice": "required"})", 400, "tool_choice", "no 'tools'");
  expect_chat_error("{" + m + R"(, "functions": [{}]})", 400, "functions", "not supported");
  expect_chat_error("{" + m + R"(, "response_format": {"type": "xml"}})", 400, "response_format", "must be text");
  expect_chat_error("{" + m + R"(, "modalities": ["audio"]})", 400, "modalities", "not supported");
  expect_chat_error("{" + m + R"(, "audio": {}})", 400, "audio", "'audio' is not supported");
  expect_chat_error("{" + m + R"(, "prediction": {"type": "content", "content": "x"}})", 400, "prediction",
                    "'prediction' is not supported");
  EXPECT_NO_THROW(parse_chat("{" + m + R"(, "audio": null, "prediction": null, "web_search_options": null})"));
  expect_chat_error("{" + m + R"(, "top_logprobs": 3})", 400, "top_logprobs", "needs 'logprobs': true");
  expect_chat_error("{" + m + R"(, "logprobs": true, "top_logprobs": 21})", 400, "top_logprobs", "[0, 20]");
  expect_chat_error("{" + m + R"(, "logprobs": 1})", 400, "logprobs", "must be a boolean");
  // Harmless fields and the neutral values of unsupported ones pass.
  const ChatRequest ok =
      parse_chat("{" + m + R"(, "user": "u", "store": false, "parallel_tool_calls": true, "tools": [],
                 "tool_choice": "none", "response_format": {"type": "text"}, "modalities": ["text"],
                 "max_completion_tokens": 9, "max_tokens": 3, "logprobs": true, "top_logprobs": 20})");
  EXPECT_EQ(*ok.params.max_tokens, 9);  // max_completion_tokens wins
  EXPECT_TRUE(ok.params.logprobs);
  EXPECT_EQ(ok.params.options.top_logprobs, 20);
}

// vLLM's request fields: documents reach the template; an assistant turn's `reasoning` is its
// reasoning_content; continue_final_message needs add_generation_prompt false and a final
// assistant message.
TEST(ServeRequestParse, DocumentsReasoningAndContinuingTheFinalMessage) {
  const ChatRequest r = parse_chat(R"({"messages": [{"role": "user", "content": "a"},
      {"role": "assistant", "content": "b", "reasoning": "r"}], "documents": [{"title": "t", "text": "x"}],
      "add_generation_prompt": false, "continue_final_message": true})");
  EXPECT_EQ(r.template_kwargs["documents"][0]["title"], "t");
  EXPECT_EQ(r.messages[1]["reasoning_content"], "r");
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_TRUE(r.continue_final_message);
  expect_chat_error(R"({"messages": [{"role": "assistant", "content": "b"}], "continue_final_message": true})", 400,
                    "continue_final_message", "add_generation_prompt");
  expect_chat_error(R"({"messages": [{"role": "user", "content": "a"}], "add_generation_prompt": false,
                       "continue_final_message": true})",
                    400, "continue_final_message", "final assistant message");
  expect_chat_error(R"({"messages": [{"role": "user", "content": "a"}], "documents": "x"})", 400, "documents", "list");
}

TEST(ServeRequestParse, ChatMessages) {
  const ChatRequest r = parse_chat(R"({"messages": [{"role": "system", "content": "be brief"},
                                  {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                                  {"role": "assistant", "content": null}],
                    "chat_template_kwargs": {"enable_thinking": false}})");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(content_text(r.messages[1]["content"]), "a\nb");  // text parts, joined by newlines as vLLM joins them
  EXPECT_TRUE(r.messages[1]["content"].is_array());           // where the template takes a string
  EXPECT_EQ(r.messages[2]["content"], "");
  EXPECT_EQ(r.template_kwargs["enable_thinking"], false);
  // reasoning_effort reaches the template as a variable; chat_template_kwargs may set it instead.
  const std::string hi = R"("messages": [{"role": "user", "content": "hi"}])";
  EXPECT_EQ(parse_chat("{" + hi + R"(, "reasoning_effort": "low"})").template_kwargs["reasoning_effort"], "low");
  EXPECT_EQ(parse_chat("{" + hi + R"(, "reasoning_effort": "low", "chat_template_kwargs": {"reasoning_effort": "high"}})")
                .template_kwargs["reasoning_effort"],
            "high");
  EXPECT_FALSE(parse_chat("{" + hi + R"(, "reasoning_effort": null, "prompt_cache_key": "k", "safety_identifier": "u"})")
                   .template_kwargs.contains("reasoning_effort"));
  expect_chat_error("{" + hi + R"(, "reasoning_effort": "max"})", 400, "reasoning_effort", "one of none");
  expect_chat_error("{" + hi + R"(, "reasoning_effort": 1})", 400, "reasoning_effort", "one of none");
  expect_chat_error(R"({})", 400, "messages", "required");
  expect_chat_error(R"({"messages": []})", 400, "messages", "non-empty");
  expect_chat_error(R"({"messages": "hi"})", 400, "messages", "non-empty");
  expect_chat_error(R"({"messages": [1]})", 400, "messages", "must be an object");
  expect_chat_error(R"({"messages": [{"content": "x"}]})", 400, "messages", "'role'");
  expect_chat_error(R"({"messages": [{"role": "wizard", "content": "x"}]})", 400, "messages", "'role'");
  expect_chat_error(R"({"messages": [{"role": "user", "content": 5}]})", 400, "messages", "'content'");
  expect_chat_error(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", 400, "messages",
                    "not supported");
  expect_chat_error(R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{}]}]})", 400, "messages",
                    "each of 'tool_calls'");
  expect_chat_error(R"({"messages": [{"role": "user", "content": "", "tool_calls": []}]})", 400, "messages",
                    "only an assistant message");
  expect_chat_error(R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"type": "function",
                    "function": {"name": "f", "arguments": "{not json"}}]}]})", 400, "messages", "must be JSON text");
  // Arguments are checked as a body is: keys per object bounded (ordered_json's insertion is
  // linear in an object's keys: 670,000 would hold a thread for minutes).
  std::string keys;
  for (int i = 0; i <= 1024; ++i) keys += (i ? R"(, \")" : R"(\")") + std::to_string(i) + R"(\": 0)";
  expect_chat_error(R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function",
                    "function": {"name": "f", "arguments": "{)" + keys + R"(}"}}]}]})",
                    400, "messages", "must be JSON text");
}

TEST(ServeRequestParse, ToolsAndStructuredOutput) {
  const std::string m = R"("messages": [{"role": "user", "content": "hi"}])";
  const std::string tools = R"("tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
      {"type": "function", "function": {"name": "noargs"}}])";
  const ChatRequest r = parse_chat("{" + m + ", " + tools + R"(, "tool_choice": {"type": "function",
      "function": {"name": "noargs"}}, "parallel_tool_calls": false, "max_reasoning_tokens": 7})");
  ASSERT_EQ(r.output.functions.size(), 2u);
  EXPECT_EQ(r.output.functions[0].name, "get_weather");
  EXPECT_EQ(r.output.functions[1].parameters["additionalProperties"], false);  // no parameters: {} only
  EXPECT_EQ(r.output.tool_choice, ToolChoice::required);
  EXPECT_EQ(*r.output.named_function, "noargs");
  EXPECT_FALSE(r.output.parallel_tool_calls);
  EXPECT_EQ(*r.output.max_reasoning_tokens, 7);
  // The tools reach the template as written: key order kept.
  EXPECT_EQ(r.template_kwargs["tools"][0]["function"].begin().key(), "name");
  EXPECT_EQ(r.template_kwargs["tools"][0].begin().key(), "type");
  const ChatRequest schema = parse_chat("{" + m + R"(, "response_format": {"type": "json_schema",
      "json_schema": {"name": "x", "schema": {"type": "integer"}, "strict": true}}})");
  EXPECT_EQ((*schema.output.schema)["type"], "integer");
  EXPECT_EQ((*parse_chat("{" + m + R"(, "response_format": {"type": "json_object"}})").output.schema)["type"],
            "object");
  // A call in the conversation: its arguments become an object for the template, in order.
  const ChatRequest calls = parse_chat(R"({"messages": [{"role": "user", "content": "w"}, {"role": "assistant",
      "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather",
      "arguments": "{\"z\": 1, \"a\": 2}"}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]})");
  EXPECT_EQ(calls.messages[1]["tool_calls"][0]["function"]["arguments"].begin().key(), "z");
  EXPECT_EQ(calls.messages[2]["tool_call_id"], "call_1");
  // Integers beyond int64 in the arguments (JSON's unsigned 64-bit) reach the template exact, as
  // transformers' json.loads and jinja2 print them (not as 1.8446744073709552e+19).
  const ChatRequest big = parse_chat(R"({"messages": [{"role": "user", "content": "w"}, {"role": "assistant",
      "tool_calls": [{"id": "1", "type": "function", "function": {"name": "a",
      "arguments": "{\"id\": 18446744073709551615, \"n\": [9223372036854775808, -9223372036854775808]}"}}]}]})");
  EXPECT_EQ(chat::ChatTemplate::parse("{% for c in messages[1].tool_calls %}{{ c.function.arguments | tojson }} "
                                      "{{ c.function.arguments }} {{ c.function.arguments.id + 1 }}{% endfor %}")
                .render(big.messages, false, big.template_kwargs),
            R"({"id": 18446744073709551615, "n": [9223372036854775808, -9223372036854775808]} )"
            R"({'id': 18446744073709551615, 'n': [9223372036854775808, -9223372036854775808]} 18446744073709551616)");
  // A call without arguments (none, null or "", as clients send a function without parameters)
  // passes {}, as vLLM does.
  const ChatRequest bare = parse_chat(R"({"messages": [{"role": "user", "content": "w"}, {"role": "assistant",
      "tool_calls": [{"id": "1", "type": "function", "function": {"name": "a", "arguments": ""}},
      {"id": "2", "type": "function", "function": {"name": "b", "arguments": null}},
      {"id": "3", "type": "function", "function": {"name": "c"}}]}]})");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(bare.messages[1]["tool_calls"][i]["function"]["arguments"], nlohmann::ordered_json::object()) << i;
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "strict": "yes"}}]})", 400,
                    "tools", "strict must be a boolean");

  expect_chat_error("{" + m + R"(, "tools": {}})", 400, "tools", "must be a list");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "bad name"}}]})", 400, "tools",
                    "letters, digits");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f"}},
                    {"type": "function", "function": {"name": "f"}}]})", 400, "tools", "two tools are named 'f'");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": 3}}]})", 400,
                    "tools", "JSON Schema object");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "x": 1}}]})", 400, "tools",
                    "unknown field 'x'");
  // Arguments are an object: parameters of another type are refused (a required call could not
  // be read back as one), parameters without a type are an object's.
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters":
                    {"type": "string"}}}]})", 400, "tools", "tools[0].function.parameters must be of \"type\": \"object\"");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters":
                    {"type": ["object", "null"]}}}]})", 400, "tools", "not [\"object\",\"null\"]");
  expect_chat_error("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters":
                    {"anyOf": [{"type": "object"}, {"type": "integer"}]}}}]})", 400, "tools", "beside 'anyOf'");
  EXPECT_EQ(parse_chat("{" + m + R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})")
                .output.functions[0]
                .parameters,
            nlohmann::ordered_json::parse(R"({"type": "object"})"));
  expect_chat_error("{" + m + ", " + tools + R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}}})",
                    400, "tool_choice", "does not list");
  expect_chat_error("{" + m + ", " + tools + R"(, "tool_choice": "sometimes"})", 400, "tool_choice", "must be none");
  expect_chat_error("{" + m + R"(, "parallel_tool_calls": "yes"})", 400, "parallel_tool_calls", "boolean");
  expect_chat_error("{" + m + R"(, "max_reasoning_tokens": -1})", 400, "max_reasoning_tokens", "");
  expect_chat_error("{" + m + R"(, "response_format": {"type": "json_schema"}})", 400, "response_format",
                    "needs a 'json_schema' object");
  expect_chat_error("{" + m + R"(, "response_format": {"type": "json_object"}, "grammar": "root ::= [a]"})", 400,
                    "grammar", "cannot both");
  expect_chat_error("{" + m + R"(, "chat_template_kwargs": {"messages": []}})", 400, "chat_template_kwargs",
                    "must not set 'messages'");
  std::string many = R"("tools": [)";
  for (int i = 0; i <= kMaxTools; ++i)
    many +=
        std::string(i ? "," : "") + R"({"type": "function", "function": {"name": "f)" + std::to_string(i) + R"("}})";
  expect_chat_error("{" + m + ", " + many + "]}", 400, "tools", "at most");
}

// response_format's json_schema needs a name, in the shape OpenAI requires: ^[a-zA-Z0-9_-]{1,64}$.
TEST(ServeRequestParse, JsonSchemaNameIsRequiredAndChecked) {
  const std::string m = R"("messages": [{"role": "user", "content": "hi"}])";
  const auto format = [&](const std::string& name) {
    return "{" + m + R"(, "response_format": {"type": "json_schema", "json_schema": {)" + name +
           R"("schema": {"type": "integer"}}}})";
  };
  const std::string field = "response_format.json_schema.name";
  EXPECT_EQ((*parse_chat(format(R"("name": "a-Z_09",)")).output.schema)["type"], "integer");
  EXPECT_TRUE(parse_chat(format(R"("name": ")" + std::string(64, 'n') + R"(",)")).output.schema);
  expect_chat_error(format(""), 400, field, "is required");
  expect_chat_error(format(R"("name": null,)"), 400, field, "is required");
  for (const std::string& bad : std::vector<std::string>{R"("")", R"("my schema")", R"("café")", R"("a.b")", "7",
                                                          '"' + std::string(65, 'n') + '"'})
    expect_chat_error(format(R"("name": )" + bad + ","), 400, field, "1 to 64 letters, digits");
}

// The peers' spellings of an output constraint: llama.cpp's json_schema, vLLM's structured_outputs
// and guided_* fields, on both endpoints; one constraint a request.
TEST(ServeRequestParse, PeersOutputConstraintFields) {
  const std::string m = R"("messages": [{"role": "user", "content": "hi"}])";
  using nlohmann::ordered_json;
  const ordered_json schema = ordered_json::parse(R"({"type": "object", "properties": {"b": {}, "a": {}}})");
  // Schemas keep their properties' order, given as objects or as JSON text.
  EXPECT_EQ(*parse_completion(R"({"prompt": "a", "json_schema": {"type": "object", "properties": {"b": {}, "a": {}}}})")
                 .output.schema,
            schema);
  const ChatRequest guided = parse_chat("{" + m + R"(, "guided_json": "{\"type\": \"object\", \"properties\": )"
                                                  R"({\"b\": {}, \"a\": {}}}"})");
  EXPECT_EQ(*guided.output.schema, schema);
  EXPECT_EQ(guided.output.format_field, "guided_json");
  EXPECT_EQ(*parse_chat("{" + m + R"(, "structured_outputs": {"json": {"type": "object", "properties": {"b": {}, "a": {}}}}})")
                 .output.schema,
            schema);
  EXPECT_EQ(*parse_chat("{" + m + R"(, "structured_outputs": {"json_object": true, "regex": null}})").output.schema,
            ordered_json::parse(R"({"type": "object"})"));
  const CompletionRequest regex = parse_completion(R"({"prompt": "a", "structured_outputs": {"regex": "\\d+"}})");
  EXPECT_EQ(*regex.output.regex, "\\d+");
  EXPECT_EQ(regex.output.format_field, "structured_outputs.regex");  // where its errors point
  EXPECT_EQ(*parse_completion(R"({"prompt": "a", "guided_regex": "[a-z]"})").output.regex, "[a-z]");
  EXPECT_EQ(*parse_chat("{" + m + R"(, "guided_choice": ["yes", "no", ""]})").output.choice,
            (std::vector<std::string>{"yes", "no", ""}));
  EXPECT_EQ(*parse_chat("{" + m + R"(, "structured_outputs": {"choice": ["é"]}})").output.choice,
            (std::vector<std::string>{"é"}));
  EXPECT_EQ(*parse_chat("{" + m + R"(, "guided_grammar": "root ::= [a]"})").output.grammar, "root ::= [a]");
  EXPECT_EQ(*parse_chat("{" + m + R"(, "structured_outputs": {"grammar": "root ::= [a]"}})").output.grammar,
            "root ::= [a]");
  EXPECT_TRUE(parse_chat("{" + m + R"(, "guided_json": null, "response_format": {"type": "text"}})")
                  .output.format_field == "response_format");

  expect_chat_error("{" + m + R"(, "guided_json": {"type": "object"}, "guided_regex": "a"})", 400, "guided_regex",
                    "'guided_regex' and 'guided_json' cannot both");
  expect_completion_error(R"({"prompt": "a", "grammar": "root ::= [a]", "json_schema": {}})", 400, "json_schema",
                          "cannot both");
  expect_chat_error("{" + m + R"(, "response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}})",
                    400, "structured_outputs", "cannot both");
  expect_chat_error("{" + m + R"(, "structured_outputs": {"regex": "a", "choice": ["a"]}})", 400, "structured_outputs",
                    "exactly one");
  expect_chat_error("{" + m + R"(, "structured_outputs": {}})", 400, "structured_outputs", "exactly one");
  expect_chat_error("{" + m + R"(, "structured_outputs": {"disable_any_whitespace": true, "regex": "a"}})", 400,
                    "structured_outputs", "unknown field 'disable_any_whitespace'");
  expect_chat_error("{" + m + R"(, "structured_outputs": "a"})", 400, "structured_outputs", "must be an object");
  expect_chat_error("{" + m + R"(, "structured_outputs": {"json_object": 1}})", 400, "structured_outputs", "boolean");
  expect_chat_error("{" + m + R"(, "structured_outputs": {"json": 3}})", 400, "structured_outputs.json",
                    "must be a JSON Schema");
  expect_chat_error("{" + m + R"(, "guided_json": "{not json"})", 400, "guided_json", "must be a JSON Schema");
  expect_chat_error("{" + m + R"(, "guided_json": "[1]"})", 400, "guided_json", "must be a JSON Schema");
  // A schema sent as text is checked as a body is: 100,000 levels deep it once overflowed the stack.
  expect_chat_error("{" + m + R"(, "guided_json": "{\"a\": )" + std::string(100000, '[') + std::string(100000, ']') +
                        R"(}"})",
                    400, "guided_json", "must be a JSON Schema");
  expect_completion_error(R"({"prompt": "a", "json_schema": []})", 400, "json_schema", "must be a JSON Schema");
  expect_chat_error("{" + m + R"(, "guided_regex": ""})", 400, "guided_regex", "non-empty string");
  expect_chat_error("{" + m + R"(, "guided_regex": 5})", 400, "guided_regex", "non-empty string");
  expect_chat_error("{" + m + R"(, "guided_choice": []})", 400, "guided_choice", "list of 1 to");
  expect_chat_error("{" + m + R"(, "guided_choice": "yes"})", 400, "guided_choice", "list of 1 to");
  expect_chat_error("{" + m + R"(, "guided_choice": ["a", 1]})", 400, "guided_choice", "strings only, not a number");
  std::string many = R"({"prompt": "a", "guided_choice": [)";
  for (int i = 0; i <= kMaxChoices; ++i) many += std::string(i ? "," : "") + "\"c\"";
  expect_completion_error(many + "]}", 400, "guided_choice", "list of 1 to");
  expect_chat_error("{" + m + R"(, "guided_decoding_backend": "xgrammar"})", 400, "guided_decoding_backend",
                    "unrecognized");
}

TEST(ServeRequestParse, TokenizeDetokenizeTemplate) {
  const TokenizeRequest t = parse_tokenize_request(parse_body(R"({"content": "hi", "add_special": true})"));
  EXPECT_EQ(t.text, "hi");
  EXPECT_TRUE(t.add_special);
  EXPECT_EQ(parse_tokenize_request(parse_body(R"({"prompt": "yo"})")).text, "yo");
  EXPECT_THROW(parse_tokenize_request(parse_body(R"({})")), ApiError);
  EXPECT_THROW(parse_tokenize_request(parse_body(R"({"content": 1})")), ApiError);
  EXPECT_EQ(parse_detokenize_request(parse_body(R"({"tokens": [0, 511]})"), 512), (std::vector<int32_t>{0, 511}));
  EXPECT_THROW(parse_detokenize_request(parse_body(R"({"tokens": [512]})"), 512), ApiError);
  EXPECT_THROW(parse_detokenize_request(parse_body(R"({"tokens": "1 2"})"), 512), ApiError);
  const std::string one = R"({"messages": [{"role": "user", "content": "x"}]})";
  EXPECT_EQ(parse_apply_template_request(parse_body(one), parse_ordered_body(one)).messages.size(), 1u);
  const std::string bad = R"({"messages": {}})";
  EXPECT_THROW(parse_apply_template_request(parse_body(bad), parse_ordered_body(bad)), ApiError);
}

TEST(ServeRequestParse, ErrorBodyShape) {
  const json body = error_body(ApiError(400, "bad", "temperature", "invalid_value"));
  EXPECT_EQ(body["error"]["message"], "bad");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(body["error"]["param"], "temperature");
  EXPECT_EQ(body["error"]["code"], "invalid_value");
  const json none = error_body(503, "busy");
  EXPECT_TRUE(none["error"]["param"].is_null());
  EXPECT_TRUE(none["error"]["code"].is_null());
  EXPECT_EQ(none["error"]["type"], "service_unavailable_error");
  EXPECT_EQ(error_body(401, "x")["error"]["type"], "authentication_error");
}

}  // namespace
}  // namespace difftx::serve
