// Anthropic's Messages API in terms of chat completions: the system prompt, content blocks, tools,
// tool_choice, thinking, max_tokens and stop_sequences as the chat request's
// (serve/messages_request.h), errors naming the Messages field; a reply as the message with its
// content blocks and stop reason, and a streamed reply's events in order, adding up to the same
// blocks (serve/messages_output.h).
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/messages_output.h"
#include "serve/messages_request.h"
#include "serve/reasoning_envelope.h"
#include "support/api_errors.h"
#include "support/sse_events.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ChatRequest parse(const std::string& body, bool counting = false) {
  ServeLimits limits;
  limits.model_name = "tiny";
  limits.vocab_size = 512;
  limits.context = 256;
  return parse_messages_request(parse_body(body), parse_ordered_body(body), limits, counting);
}

void expect_error(const std::string& body, const std::string& param) {
  testing::expect_api_error([](const std::string& b) { parse(b); }, body, 400, param);
}

TEST(Messages, SpeculativeDecodingPerRequestAsChatHasIt) {
  const ChatRequest r = parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}],
                                  "draft": "ngram", "draft_tokens": 3})");
  EXPECT_EQ(r.params.options.draft, infer::DraftMode::ngram);
  EXPECT_EQ(r.params.options.draft_tokens, 3);
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "draft": "eagle"})", "draft");
}

TEST(Messages, BlocksBecomeChatMessages) {
  const ChatRequest r = parse(R"({"model": "tiny", "max_tokens": 9, "system": [{"type": "text", "text": "Be brief."}],
      "messages": [
        {"role": "user", "content": "1+2?"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "add", "signature": "s"},
                                          {"type": "text", "text": "Adding."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"b": 2, "a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"},
                                     {"type": "text", "text": "So?"}]}],
      "tools": [{"name": "add", "description": "Adds.", "input_schema": {"type": "object", "properties": {}}}],
      "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
      "stop_sequences": ["END"], "temperature": 0.5, "top_k": 3})");
  const ordered_json& m = r.messages;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], ordered_json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[1]["content"], "1+2?");
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["content"], "Adding.");
  EXPECT_EQ(m[2]["reasoning_content"], "add");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"], ordered_json({{"b", 2}, {"a", 1}}));  // as written
  EXPECT_EQ(m[3], ordered_json({{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "3"}}));
  EXPECT_EQ(m[4]["content"][0]["text"], "So?");
  EXPECT_EQ(r.params.max_tokens, 9);
  EXPECT_EQ(r.params.options.stop_strings, std::vector<std::string>{"END"});
  EXPECT_EQ(r.params.options.sampling.top_k, 3);
  EXPECT_EQ(r.output.tool_choice, ToolChoice::required);
  EXPECT_FALSE(r.output.parallel_tool_calls);
  ASSERT_EQ(r.output.functions.size(), 1u);
  EXPECT_EQ(r.output.functions[0].name, "add");
  // thinking: the template's enable_thinking and the reasoning budget.
  const ChatRequest thinks = parse(R"({"max_tokens": 50, "messages": [{"role": "user", "content": "Hi"}],
                                       "thinking": {"type": "enabled", "budget_tokens": 20}})");
  EXPECT_EQ(thinks.template_kwargs["enable_thinking"], true);
  EXPECT_EQ(thinks.output.max_reasoning_tokens, 20);
  EXPECT_EQ(parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "thinking": {"type": "disabled"}})")
                .template_kwargs["enable_thinking"],
            false);
  // output_config: the text's JSON schema (the chat's response_format) and the template's effort.
  const ChatRequest shaped = parse(R"({"max_tokens": 50, "messages": [{"role": "user", "content": "Hi"}],
      "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"a": {"type": "integer"}},
                                   "required": ["a"], "additionalProperties": false}}, "effort": "max"}})");
  EXPECT_TRUE(shaped.output.constrains_text());
  EXPECT_EQ(shaped.template_kwargs["reasoning_effort"], "max");
  EXPECT_EQ(parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "output_config": {"effort": "low"},
                      "chat_template_kwargs": {"reasoning_effort": "high"}})")
                .template_kwargs["reasoning_effort"],
            "high");  // the request's own template variables win
  // A final assistant turn of text is continued (a prefill); one of tool calls is not.
  const ChatRequest prefill = parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "JSON?"},
                                        {"role": "assistant", "content": "{"}]})");
  EXPECT_TRUE(prefill.continue_final_message);
  EXPECT_FALSE(prefill.add_generation_prompt);
  const ChatRequest called = parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "1+2?"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "add", "input": {}}]}],
      "tools": [{"name": "add", "input_schema": {"type": "object"}, "type": null}]})");
  EXPECT_FALSE(called.continue_final_message);
  EXPECT_TRUE(called.add_generation_prompt);
  // Adaptive thinking: the template's, with no budget; the fields that change nothing here pass.
  const ChatRequest adaptive = parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}],
      "thinking": {"type": "adaptive", "display": "summarized"}, "speed": "standard", "inference_geo": "us",
      "cache_control": {"type": "ephemeral"}})");
  EXPECT_EQ(adaptive.template_kwargs["enable_thinking"], true);
  EXPECT_FALSE(adaptive.output.max_reasoning_tokens);
  // count_tokens bodies have no max_tokens.
  EXPECT_NO_THROW(parse(R"({"model": "tiny", "messages": [{"role": "user", "content": "Hi"}]})", true));
}

TEST(Messages, ErrorsNameTheMessagesField) {
  const std::string hi = R"("messages": [{"role": "user", "content": "Hi"}])";
  expect_error(R"({)" + hi + "}", "max_tokens");
  expect_error(R"({"max_tokens": 0, )" + hi + "}", "max_tokens");
  expect_error(R"({"max_tokens": 5})", "messages");
  expect_error(R"({"max_tokens": 5, "messages": []})", "messages");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]})", "messages");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})",
               "messages");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t",
                   "name": "f", "input": "x"}]}]})",
               "messages");
  expect_error(R"({"max_tokens": 5, "system": 3, )" + hi + "}", "system");
  expect_error(R"({"max_tokens": 5, "tools": [{"type": "web_search_20250305", "name": "web_search"}], )" + hi + "}",
               "tools");
  expect_error(R"({"max_tokens": 5, "tools": [{"name": "f"}], )" + hi + "}", "tools");
  expect_error(R"({"max_tokens": 5, "tool_choice": {"type": "sometimes"}, )" + hi + "}", "tool_choice");
  expect_error(R"({"max_tokens": 5, "tool_choice": {"type": "tool", "name": "nope"},
                   "tools": [{"name": "f", "input_schema": {"type": "object"}}], )" + hi + "}",
               "tool_choice");
  expect_error(R"({"max_tokens": 5, "thinking": {"type": "enabled"}, )" + hi + "}", "thinking");
  expect_error(R"({"max_tokens": 5, "thinking": {"type": "adaptive", "display": "omitted"}, )" + hi + "}", "thinking");
  expect_error(R"({"max_tokens": 5, "thinking": {"type": 1}, )" + hi + "}", "thinking");
  // A type of the wrong JSON type is a 400 like any unknown one.
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": 1, "text": "x"}]}]})", "messages");
  expect_error(R"({"max_tokens": 5, "tools": [{"type": ["custom"], "name": "f", "input_schema": {}}], )" + hi + "}",
               "tools");
  expect_error(R"({"max_tokens": 5, "tool_choice": {"type": null}, )" + hi + "}", "tool_choice");
  expect_error(R"({"max_tokens": 5, "stop_sequences": "END", )" + hi + "}", "stop_sequences");
  expect_error(R"({"max_tokens": 5, "mcp_servers": [], )" + hi + "}", "mcp_servers");
  expect_error(R"({"max_tokens": 5, "output_config": {"format": {"type": "xml"}}, )" + hi + "}", "output_config");
  expect_error(R"({"max_tokens": 5, "output_config": {"effort": "huge"}, )" + hi + "}", "output_config");
  expect_error(R"({"max_tokens": 5, "output_config": {"verbosity": 1}, )" + hi + "}", "output_config");
  expect_error(R"({"max_tokens": 5, "frobnicate": 1, )" + hi + "}", "frobnicate");
  EXPECT_NO_THROW(parse(R"({"max_tokens": 5, "metadata": {"user_id": "u"}, "service_tier": "auto", )" + hi + "}"));
  // Empty content, Anthropic's 400 but for a final assistant turn (it was a crash: nothing to read).
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": []}]})", "messages");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": ""}]})", "messages");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": []},
                   {"role": "user", "content": "b"}]})",
               "messages");
  EXPECT_NO_THROW(parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": []}]})"));
  testing::expect_api_error([](const std::string& b) { parse(b, true); },
                            R"({"messages": [{"role": "user", "content": []}]})", 400, "messages");
  expect_error(R"({"max_tokens": 5, "tool_choice": {"type": "tool"}, )" + hi + "}", "tool_choice");
  // context_management: clearing edits are taken (Claude Code sends one with every request), others not.
  EXPECT_NO_THROW(parse(R"({"max_tokens": 5, "context_management": {"edits": [{"type": "clear_thinking_20251015",
                            "keep": "all"}, {"type": "clear_tool_uses_20250919"}]}, )" + hi + "}"));
  expect_error(R"({"max_tokens": 5, "context_management": {"edits": [{"type": "compact_20260112"}]}, )" + hi + "}",
               "context_management");
  expect_error(R"({"max_tokens": 5, "context_management": {"edits": {}}, )" + hi + "}", "context_management");
  expect_error(R"({"max_tokens": 5, "context_management": [], )" + hi + "}", "context_management");
  // stop_sequences: up to the engine's 16 (more than the chat API's 4), each non-empty.
  std::string sixteen, seventeen;
  for (int i = 0; i < 17; ++i) (i < 16 ? sixteen : seventeen) += (i ? ", \"" : "\"") + std::to_string(i) + "\"";
  seventeen = sixteen + seventeen;
  EXPECT_EQ(parse(R"({"max_tokens": 5, "stop_sequences": [)" + sixteen + "], " + hi + "}").params.options.stop_strings.size(),
            16u);
  expect_error(R"({"max_tokens": 5, "stop_sequences": [)" + seventeen + "], " + hi + "}", "stop_sequences");
  expect_error(R"({"max_tokens": 5, "stop_sequences": [""], )" + hi + "}", "stop_sequences");
}

// A tool_result's is_error reaches the template as the result's text marked an error.
TEST(Messages, AFailedToolResultSaysSo) {
  const ChatRequest r = parse(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "1+2?"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "add", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "no such tool", "is_error": true}]}]})");
  EXPECT_EQ(r.messages[2]["content"], "Error: no such tool");
  expect_error(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                   "is_error": "yes"}]}]})",
               "messages");
}

const ResponseHeader kMessageHeader{"msg_abc", 1700000000, "tiny"};

TEST(Messages, TheMessageAndItsStopReason) {
  const ChoiceResult reply{"It is 3.", "tool_calls", {}, std::string("add them"), {{"call_1", "add", R"({"a":1})"}}};
  const Usage usage{10, 4, 6};
  const json m = message_object(kMessageHeader, reply, message_stop(reply.finish_reason, ""), usage);
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_EQ(m["content"][0],
            json({{"type", "thinking"}, {"thinking", "add them"}, {"signature", seal_reasoning("add them")}}));
  EXPECT_EQ(m["content"][1], json({{"type", "text"}, {"text", "It is 3."}}));
  EXPECT_EQ(m["content"][2], json({{"type", "tool_use"}, {"id", "call_1"}, {"name", "add"}, {"input", {{"a", 1}}}}));
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_EQ(m["stop_sequence"], nullptr);
  // The cached prompt tokens are read from the cache, the rest are input.
  EXPECT_EQ(m["usage"], json({{"input_tokens", 4}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 6},
                              {"output_tokens", 4}}));
  EXPECT_EQ(message_stop("stop", "END").reason, "stop_sequence");
  EXPECT_EQ(message_stop("stop", "END").sequence, "END");
  EXPECT_EQ(message_stop("stop", "").reason, "end_turn");
  EXPECT_EQ(message_stop("length", "").reason, "max_tokens");
  // Nothing written: one empty text block.
  const json empty = message_object(kMessageHeader, {"", "stop", {}, std::nullopt, {}}, message_stop("stop", ""), usage);
  EXPECT_EQ(empty["content"], json::array({{{"type", "text"}, {"text", ""}}}));
  EXPECT_EQ(error_body(ApiError(400, "bad", "max_tokens"), ErrorShape::anthropic),
            json({{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", "bad"}}}}));
  EXPECT_EQ(error_body(ApiError(503, "busy"), ErrorShape::anthropic)["error"]["type"], "overloaded_error");
  EXPECT_EQ(error_shape("/v1/messages/count_tokens"), ErrorShape::anthropic);
  EXPECT_EQ(error_shape("/v1/messagesx"), ErrorShape::openai);
}

TEST(Messages, StreamedEventsAddUpToTheBlocks) {
  MessageEvents events(kMessageHeader, 10);
  std::string sse = events.start(4);  // 4 of the prompt's 10 tokens in the prefix cache
  sse += events.push({"thinking ", "", {}}, {});
  sse += events.push({"done", "It", {}}, {});
  sse += events.push({"", " is.", {{0, "add", "{\"a\"", ""}}}, {"call_1"});
  sse += events.push({"", "", {{0, "", ":1}", ""}, {1, "now", "", ""}}}, {"", "call_2"});
  sse += events.finish(message_stop("tool_calls", ""), {10, 7, 4});
  const std::vector<json> e = testing::sse_events(sse);
  ASSERT_GE(e.size(), 3u);
  EXPECT_EQ(e.front()["type"], "message_start");
  EXPECT_EQ(e.front()["message"]["usage"]["input_tokens"], 6);  // as the final usage counts them
  EXPECT_EQ(e.front()["message"]["usage"]["cache_read_input_tokens"], 4);
  EXPECT_EQ(e[e.size() - 2]["usage"]["input_tokens"], 6);
  EXPECT_EQ(e[e.size() - 2]["usage"]["cache_read_input_tokens"], 4);
  EXPECT_EQ(e[e.size() - 2]["type"], "message_delta");
  EXPECT_EQ(e[e.size() - 2]["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(e[e.size() - 2]["usage"]["output_tokens"], 7);
  EXPECT_EQ(e.back()["type"], "message_stop");
  // Each block: started, its deltas, stopped, in that order, the blocks one after another.
  std::vector<json> blocks;
  std::vector<std::string> texts, signatures;
  int open = -1;
  for (const json& x : e) {
    const std::string type = x["type"];
    if (type == "content_block_start") {
      EXPECT_EQ(open, -1);
      EXPECT_EQ(x["index"], blocks.size());
      open = x["index"];
      blocks.push_back(x["content_block"]);
      texts.emplace_back();
    } else if (type == "content_block_delta") {
      EXPECT_EQ(x["index"], open);
      const json& d = x["delta"];
      if (d["type"] == "signature_delta") {  // a thinking block's signature, last before it stops
        signatures.push_back(d["signature"]);
        continue;
      }
      EXPECT_TRUE(signatures.size() < blocks.size()) << "a delta after the block's signature";
      texts.back() += d.contains("text")       ? d["text"].get<std::string>()
                      : d.contains("thinking") ? d["thinking"].get<std::string>()
                                               : d["partial_json"].get<std::string>();
    } else if (type == "content_block_stop") {
      EXPECT_EQ(x["index"], open);
      open = -1;
    }
  }
  EXPECT_EQ(open, -1);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0]["type"], "thinking");
  EXPECT_EQ(texts[0], "thinking done");
  EXPECT_EQ(signatures, std::vector<std::string>{seal_reasoning("thinking done")});
  EXPECT_EQ(blocks[1]["type"], "text");
  EXPECT_EQ(texts[1], "It is.");
  EXPECT_EQ(blocks[2], json({{"type", "tool_use"}, {"id", "call_1"}, {"name", "add"}, {"input", json::object()}}));
  EXPECT_EQ(texts[2], "{\"a\":1}");
  EXPECT_EQ(blocks[3]["name"], "now");
  // An error ends a stream as an `error` event in Anthropic's shape.
  const std::vector<json> failed = testing::sse_events(events.error(ApiError(500, "generation failed: x")));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["error"]["type"], "api_error");
}

}  // namespace
}  // namespace difftx::serve
