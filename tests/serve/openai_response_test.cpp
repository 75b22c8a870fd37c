// Response builders: OpenAI's shapes for completions and chat, whole and streamed, usage,
// both logprobs forms; metrics text; the API key check; SSE framing.
#include <gtest/gtest.h>

#include "serve/auth.h"
#include "serve/metrics.h"
#include "serve/openai_response.h"
#include "serve/request_log.h"
#include "serve/sse.h"

namespace difftx::serve {
namespace {

using nlohmann::json;

const ResponseHeader kHeader{"cmpl-1", 1700000000, "tiny"};

std::vector<TokenInfo> two_tokens() {
  return {{"He", -0.5f, {{"He", -0.5f}, {"Hi", -1.5f}}}, {"llo", -0.25f, {{"llo", -0.25f}, {"llo", -3.0f}}}};
}

TEST(ServeResponse, Completion) {
  const json r = completion_response(kHeader, {{"Hello", "stop", two_tokens(), {}, {}}, {"Hey", "length", {}, {}, {}}},
                                     {5, 4}, true, {10, 10});
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["id"], "cmpl-1");
  EXPECT_EQ(r["model"], "tiny");
  EXPECT_EQ(r["created"], 1700000000);
  ASSERT_EQ(r["choices"].size(), 2u);
  EXPECT_EQ(r["choices"][0]["index"], 0);
  EXPECT_EQ(r["choices"][0]["text"], "Hello");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][1]["stop_reason"], nullptr);  // vLLM's: a finished choice has one
  ChoiceResult stopped{"x", "stop", {}, {}, {}};
  stopped.stop_reason = "END";
  EXPECT_EQ(completion_response(kHeader, {stopped}, {1, 1}, false, {0})["choices"][0]["stop_reason"], "END");
  stopped.stop_reason = 7;
  EXPECT_EQ(chat_response(kHeader, {stopped}, {1, 1}, false)["choices"][0]["stop_reason"], 7);
  const json& lp = r["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json({"He", "llo"}));
  EXPECT_EQ(lp["token_logprobs"], json({-0.5, -0.25}));
  EXPECT_EQ(lp["text_offset"], json({10, 12}));
  EXPECT_EQ(lp["top_logprobs"][0], json({{"He", -0.5}, {"Hi", -1.5}}));
  EXPECT_EQ(lp["top_logprobs"][1], json({{"llo", -0.25}}));  // the same text twice: the likelier
  EXPECT_EQ(r["usage"], json({{"prompt_tokens", 5}, {"completion_tokens", 4}, {"total_tokens", 9},
                              {"prompt_tokens_details", {{"cached_tokens", 0}}}}));
  EXPECT_TRUE(completion_response(kHeader, {{"x", "stop", {}, {}, {}}}, {1, 1}, false, {0})["choices"][0]["logprobs"]
                  .is_null());
}

// A special token skip_special_tokens leaves out of the text is in the logprobs, but text_offset
// indexes into the text returned: the token after it starts where it does.
TEST(ServeResponse, TextOffsetsSkipSilentTokens) {
  std::vector<TokenInfo> tokens = two_tokens();
  TokenInfo special{"<|im_start|>", -2.0f, {}};
  special.silent = true;
  tokens.insert(tokens.begin() + 1, special);
  EXPECT_EQ(text_characters(special), 0);
  EXPECT_EQ(text_characters(tokens[0]), 2);
  const json lp = completion_logprobs(tokens, 10);
  EXPECT_EQ(lp["tokens"], json({"He", "<|im_start|>", "llo"}));
  EXPECT_EQ(lp["text_offset"], json({10, 12, 12}));
}

// A prompt's first token has no logprob: null in token_logprobs and top_logprobs, as OpenAI's echo
// writes it. vLLM's prompt_logprobs go on the choice (completions) or the response (chat).
TEST(ServeResponse, EchoedPromptAndPromptLogprobs) {
  std::vector<TokenInfo> tokens = two_tokens();
  tokens.insert(tokens.begin(), TokenInfo{"A", std::nullopt, {}});
  const json lp = completion_logprobs(tokens, 0);
  EXPECT_EQ(lp["token_logprobs"], json({nullptr, -0.5, -0.25}));
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  EXPECT_EQ(lp["text_offset"], json({0, 1, 3}));
  const json scores = json::array({nullptr, {{"7", {{"logprob", -1.0}, {"rank", 2}, {"decoded_token", "x"}}}}});
  ChoiceResult c{"Ax", "length", {}, {}, {}, scores};
  EXPECT_EQ(completion_response(kHeader, {c}, {2, 0}, false, {0})["choices"][0]["prompt_logprobs"], scores);
  EXPECT_FALSE(completion_response(kHeader, {{"x", "stop", {}, {}, {}}}, {1, 1}, false, {0})["choices"][0].contains(
      "prompt_logprobs"));
  const json chat = chat_response(kHeader, {c}, {2, 0}, false);
  EXPECT_EQ(chat["prompt_logprobs"], scores);
  EXPECT_FALSE(chat["choices"][0].contains("prompt_logprobs"));
}

TEST(ServeResponse, ChatToolCallsAndReasoning) {
  const json r = chat_response(kHeader,
                               {{"", "tool_calls", {}, std::string("thought"), {{"call_1", "add", R"({"a":1})"}}},
                                {"text", "stop", {}, std::nullopt, {}}},
                               {3, 2}, false);
  const json& m = r["choices"][0]["message"];
  EXPECT_TRUE(m["content"].is_null());  // calls and no text: null, as OpenAI sends it
  EXPECT_EQ(m["reasoning_content"], "thought");
  EXPECT_EQ(m["tool_calls"], json::parse(R"([{"id": "call_1", "type": "function",
                                              "function": {"name": "add", "arguments": "{\"a\":1}"}}])"));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_FALSE(r["choices"][1]["message"].contains("reasoning_content"));
  EXPECT_FALSE(r["choices"][1]["message"].contains("tool_calls"));
  EXPECT_EQ(tool_call_json({"call_2", "f", "{}"}, 3)["index"], 3);
}

TEST(ServeResponse, Chat) {
  const json r = chat_response({"chatcmpl-1", 1, "tiny"}, {{"Hello", "stop", two_tokens(), {}, {}}}, {3, 2}, true);
  EXPECT_EQ(r["object"], "chat.completion");
  const json& c = r["choices"][0];
  EXPECT_EQ(c["message"]["role"], "assistant");
  EXPECT_EQ(c["message"]["content"], "Hello");
  EXPECT_EQ(c["finish_reason"], "stop");
  const json& first = c["logprobs"]["content"][0];
  EXPECT_EQ(first["token"], "He");
  EXPECT_EQ(first["logprob"], -0.5);
  EXPECT_EQ(first["bytes"], json({72, 101}));
  ASSERT_EQ(first["top_logprobs"].size(), 2u);
  EXPECT_EQ(first["top_logprobs"][1]["token"], "Hi");
  EXPECT_EQ(first["top_logprobs"][1]["bytes"], json({72, 105}));
  EXPECT_EQ(r["usage"]["total_tokens"], 5);
}

TEST(ServeResponse, Chunks) {
  const json c = chat_chunk(kHeader, 1, {{"content", "lo"}}, "", nullptr);
  EXPECT_EQ(c["object"], "chat.completion.chunk");
  EXPECT_EQ(c["choices"][0]["index"], 1);
  EXPECT_EQ(c["choices"][0]["delta"]["content"], "lo");
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(c["choices"][0]["logprobs"].is_null());
  EXPECT_FALSE(c["choices"][0].contains("stop_reason"));  // until the choice finishes
  EXPECT_EQ(completion_chunk(kHeader, 0, "", "stop", nullptr, "END")["choices"][0]["stop_reason"], "END");
  const json end = chat_chunk(kHeader, 0, json::object(), "length", nullptr);
  EXPECT_EQ(end["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(end["choices"][0]["delta"].empty());
  const json t = completion_chunk(kHeader, 0, "x", "stop", nullptr);
  EXPECT_EQ(t["object"], "text_completion");
  EXPECT_EQ(t["choices"][0]["text"], "x");
  const json u = usage_chunk(kHeader, "chat.completion.chunk", {2, 3});
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 5);
  EXPECT_EQ(sse_event(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_STREQ(kSseDone, "data: [DONE]\n\n");
}

TEST(ServeResponse, PartialUtf8BecomesReplacementCharacters) {
  // A token that ends inside a character: its JSON string is still valid UTF-8.
  EXPECT_EQ(dump_json(json("\xe2\x82")), "\"\xef\xbf\xbd\"");
  const json lp = chat_logprobs({{"\xe2\x82", -1.0f, {}}});
  EXPECT_EQ(lp["content"][0]["bytes"], json({0xe2, 0x82}));  // the bytes stay exact
}

TEST(ServeResponse, ModelsList) {
  const json m = models_list("tiny", 7);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "tiny");
  EXPECT_EQ(m["data"][0]["object"], "model");
  EXPECT_EQ(m["data"][0]["created"], 7);
  EXPECT_EQ(m["data"][0]["type"], "model");  // Anthropic's fields beside
  EXPECT_EQ(m["data"][0]["created_at"], "1970-01-01T00:00:07Z");
  EXPECT_EQ(m["has_more"], false);
  EXPECT_EQ(m["last_id"], "tiny");
}

TEST(ServeAuth, BearerKeys) {
  EXPECT_TRUE(bearer_matches("Bearer sekrit", "sekrit"));
  EXPECT_TRUE(bearer_matches("bearer sekrit", "sekrit"));
  EXPECT_TRUE(bearer_matches("Bearer   sekrit", "sekrit"));  // 1*SP after the scheme
  EXPECT_FALSE(bearer_matches("Bearer   ", "sekrit"));
  EXPECT_FALSE(bearer_matches("Bearer sekri", "sekrit"));
  EXPECT_FALSE(bearer_matches("Bearer sekritt", "sekrit"));
  EXPECT_FALSE(bearer_matches("Bearer sekriT", "sekrit"));
  EXPECT_FALSE(bearer_matches("Basic sekrit", "sekrit"));
  EXPECT_FALSE(bearer_matches("", "sekrit"));
  EXPECT_FALSE(bearer_matches("Bearer ", "sekrit"));
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_FALSE(constant_time_equal("a", ""));
}

TEST(ServeMetrics, PrometheusText) {
  Metrics m;
  m.count_request("/v1/completions", 200);
  m.count_request("/v1/completions", 200);
  m.count_request("/v1/completions", 400);
  m.count_tokens(10, 4);
  m.observe_time_to_first_token(0.02);
  m.observe_inter_token_latency(0.003);
  m.observe_inter_token_latency(100);
  infer::EngineStats s;
  s.waiting = 2;
  s.running = 3;
  s.kv_blocks = 10;
  s.kv_blocks_used = 4;
  s.prefix_lookup_tokens = 8;
  s.prefix_hit_tokens = 2;
  const std::string text = m.render(&s);
  for (const char* want :
       {"difftx_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 2\n",
        "difftx_requests_total{endpoint=\"/v1/completions\",status=\"400\"} 1\n", "difftx_prompt_tokens_total 10\n",
        "difftx_generated_tokens_total 4\n", "difftx_queue_length 2\n", "difftx_running_sequences 3\n",
        "difftx_kv_blocks_used 4\n", "difftx_kv_usage_ratio 0.4\n", "difftx_prefix_cache_hit_rate 0.25\n",
        "difftx_time_to_first_token_seconds_bucket{le=\"0.025\"} 1\n",
        "difftx_time_to_first_token_seconds_bucket{le=\"0.01\"} 0\n",
        "difftx_inter_token_latency_seconds_bucket{le=\"0.005\"} 1\n",
        "difftx_inter_token_latency_seconds_bucket{le=\"+Inf\"} 2\n", "difftx_inter_token_latency_seconds_count 2\n",
        "# TYPE difftx_time_to_first_token_seconds histogram\n"})
    EXPECT_NE(text.find(want), std::string::npos) << want << " not in:\n" << text;
  EXPECT_EQ(m.render(nullptr).find("difftx_queue_length"), std::string::npos);  // no engine yet
}

TEST(ServeLog, TextAndJsonLines) {
  RequestRecord r{"POST", "/v1/completions", "127.0.0.1", 200, 5, 7, 0.25, 0.01};
  const std::string text = format_request_log(r, LogFormat::text);
  EXPECT_NE(text.find("POST /v1/completions 200"), std::string::npos) << text;
  EXPECT_NE(text.find("prompt 5 generated 7"), std::string::npos) << text;
  EXPECT_NE(text.find("250.0 ms"), std::string::npos) << text;
  const json line = json::parse(format_request_log(r, LogFormat::json));
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["generated_tokens"], 7);
  EXPECT_DOUBLE_EQ(line["ttft_ms"].get<double>(), 10.0);
  r.path = "/x\nforged 200";  // a client cannot forge log lines
  EXPECT_EQ(format_request_log(r, LogFormat::text).find('\n'), std::string::npos);
  EXPECT_THROW(parse_log_format("xml"), Error);
}

}  // namespace
}  // namespace difftx::serve
