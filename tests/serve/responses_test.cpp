// OpenAI's Responses API in terms of chat completions: the request's input items, instructions,
// flat tools, tool_choice, text.format and max_output_tokens as the chat request's
// (serve/responses_request.h), errors naming the Responses field; a reply as output items and the
// Response object, and a streamed reply's events in order, adding up to the same items
// (serve/responses_output.h).
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/content_tokens.h"
#include "serve/reasoning_envelope.h"
#include "serve/responses_output.h"
#include "serve/responses_request.h"
#include "support/api_errors.h"
#include "support/sse_events.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ResponsesRequest parse(const std::string& body, const ordered_json& history = ordered_json::array(),
                       bool stores = true) {
  ServeLimits limits;
  limits.model_name = "tiny";
  limits.vocab_size = 512;
  limits.context = 256;
  return parse_responses_request(parse_body(body), parse_ordered_body(body), limits, history, stores);
}

void expect_error(const std::string& body, const std::string& param) {
  testing::expect_api_error([](const std::string& b) { parse(b); }, body, 400, param);
}

TEST(Responses, InputItemsBecomeChatMessages) {
  const ResponsesRequest r = parse(R"({"input": [
      {"role": "user", "content": [{"type": "input_text", "text": "1+2?"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "add them"}]},
      {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\": 1, \"b\": 2}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "3"},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is 3."}]}],
    "instructions": "Be brief.", "max_output_tokens": 9, "temperature": 0.5,
    "tools": [{"type": "function", "name": "add", "parameters": {"type": "object", "properties": {}}}],
    "tool_choice": {"type": "function", "name": "add"}})");
  const ordered_json& m = r.chat.messages;
  ASSERT_EQ(m.size(), 5u);
  // The model's text and then its calls, fed back: one assistant turn, as chat writes it.
  const ResponsesRequest turn = parse(R"({"input": [{"role": "user", "content": "1+2?"},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Adding."}]},
      {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{}"},
      {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "3"}]})");
  ASSERT_EQ(turn.chat.messages.size(), 3u);
  EXPECT_EQ(turn.chat.messages[1]["content"][0]["text"], "Adding.");
  EXPECT_EQ(turn.chat.messages[1]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[0], ordered_json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[1]["content"], ordered_json::array({{{"type", "text"}, {"text", "1+2?"}}}));
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["reasoning_content"], "add them");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "add");
  EXPECT_EQ(m[3], ordered_json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "3"}}));
  EXPECT_EQ(m[4]["role"], "assistant");
  EXPECT_EQ(*r.chat.params.max_tokens, 9);
  EXPECT_EQ(r.chat.params.options.sampling.temperature, 0.5);
  ASSERT_EQ(r.chat.output.functions.size(), 1u);
  EXPECT_EQ(r.chat.output.named_function, "add");
  EXPECT_EQ(r.settings["instructions"], "Be brief.");
  EXPECT_EQ(r.settings["tools"][0]["name"], "add");  // as the request wrote them, flat
  EXPECT_EQ(r.settings["max_output_tokens"], 9);

  const ResponsesRequest plain = parse(R"({"input": "Hi", "text": {"format": {"type": "json_schema", "name": "a",
      "schema": {"type": "object", "properties": {"x": {"type": "integer"}}}, "strict": true}}})");
  EXPECT_EQ(plain.chat.messages, ordered_json::array({{{"role", "user"}, {"content", "Hi"}}}));
  ASSERT_TRUE(plain.chat.output.schema);
  EXPECT_EQ((*plain.chat.output.schema)["properties"]["x"]["type"], "integer");
  EXPECT_EQ(plain.settings["text"]["format"]["name"], "a");
}

// A continued response: the stored conversation's items, then the input; the instructions are the
// request's own; the items to store are the conversation's so far.
TEST(Responses, AContinuedResponseStartsFromTheStoredItems) {
  const ordered_json history = ordered_json::parse(R"([
      {"type": "message", "role": "user", "content": "1+2?"},
      {"id": "rs_a_0", "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "add"}]},
      {"id": "fc_a_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "add",
       "arguments": "{}"}])");
  const ResponsesRequest r = parse(R"({"input": [{"type": "function_call_output", "call_id": "call_1", "output": "3"}],
      "previous_response_id": "resp_a", "instructions": "Be brief."})", history);
  const ordered_json& m = r.chat.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0], ordered_json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[1]["content"], "1+2?");
  EXPECT_EQ(m[2]["reasoning_content"], "add");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(m[3]["role"], "tool");
  ASSERT_EQ(r.items.size(), 4u);  // the instructions are not an item: a continuation does not inherit them
  EXPECT_EQ(r.items[3]["type"], "function_call_output");
  EXPECT_EQ(r.settings["previous_response_id"], "resp_a");
  EXPECT_EQ(r.settings["store"], true);  // OpenAI's default
  EXPECT_EQ(parse(R"({"input": "a"})").items,
            ordered_json::parse(R"([{"type": "message", "role": "user", "content": "a"}])"));
  EXPECT_EQ(parse(R"({"input": "a", "store": false})").settings["store"], false);
  EXPECT_EQ(parse(R"({"input": "a"})", ordered_json::array(), false).settings["store"], false);  // kept nowhere
  EXPECT_THROW(parse(R"({"input": "a", "store": "yes"})", ordered_json::array(), false), ApiError);
  EXPECT_EQ(parse(R"({"input": "a"})").settings["previous_response_id"], nullptr);
  // Errors name the request's own items, counted from its input.
  try {
    parse(R"({"input": [{"type": "function_call", "name": "f"}]})", history);
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("input[0]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(previous_response_id(json{{"previous_response_id", "resp_a"}}), "resp_a");
  EXPECT_EQ(previous_response_id(json{{"input", "a"}}), std::nullopt);
  EXPECT_THROW(previous_response_id(json{{"previous_response_id", 5}}), ApiError);
}

TEST(Responses, ErrorsNameTheResponsesField) {
  expect_error(R"({})", "input");
  expect_error(R"({"input": []})", "input");
  expect_error(R"({"input": [{"type": "input_image", "image_url": "x"}]})", "input");
  expect_error(R"({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]})", "input");
  expect_error(R"({"input": [{"type": "function_call", "name": "f"}]})", "input");
  expect_error(R"({"input": [{"role": "tool", "content": "x"}]})", "input");
  expect_error(R"({"input": "a", "conversation": "conv_1", "previous_response_id": "resp_1"})", "conversation");
  expect_error(R"({"input": "a", "conversation": {"name": "conv_1"}})", "conversation");
  expect_error(R"({"input": "a", "conversation": 7})", "conversation");
  expect_error(R"({"input": "a", "prompt": {"id": "pmpt_1"}})", "prompt");
  expect_error(R"({"input": "a", "background": true, "store": false})", "background");
  testing::expect_api_error([](const std::string& b) { parse(b, ordered_json::array(), /*stores=*/false); },
                            R"({"input": "a", "background": true})", 400, "background");
  expect_error(R"({"input": "a", "background": 1})", "background");
  expect_error(R"({"input": "a", "include": ["reasoning.everything"]})", "include");
  expect_error(R"({"input": "a", "include": "message.output_text.logprobs"})", "include");
  expect_error(R"({"input": "a", "include": [7]})", "include");
  expect_error(R"({"input": "a", "truncation": "middle"})", "truncation");
  expect_error(R"({"input": "a", "top_logprobs": 21})", "top_logprobs");
  expect_error(R"({"input": "a", "max_tool_calls": 0})", "max_tool_calls");
  expect_error(R"({"input": "a", "tools": [{"type": "file_search"}]})", "tools");
  expect_error(R"({"input": "a", "tools": [{"type": "function"}]})", "tools");
  expect_error(R"({"input": "a", "tool_choice": {"type": "web_search"}})", "tool_choice");
  expect_error(R"({"input": "a", "text": {"format": {"type": "xml"}}})", "text");
  expect_error(R"({"input": "a", "max_output_tokens": 0})", "max_output_tokens");
  expect_error(R"({"input": "a", "temperature": 3})", "temperature");
  expect_error(R"({"input": "a", "frobnicate": 1})", "frobnicate");
  expect_error(R"({"input": [{"type": 5}]})", "input");  // a type that is no string: a 400, not a failed read
  expect_error(R"({"input": [{"role": "user", "content": [{"type": null, "text": "x"}]}]})", "input");
  expect_error(R"({"input": "a", "tools": [{"type": {}}]})", "tools");
  EXPECT_NO_THROW(parse(R"({"input": "a", "store": true, "metadata": {"k": "v"}, "truncation": "disabled",
                            "include": [], "user": "u", "reasoning": {"effort": "low", "summary": "auto"}})"));
}

const ResponseHeader kHeader{"resp_abc", 1700000000, "tiny"};

TEST(Responses, OutputItemsAndTheResponseObject) {
  ChoiceResult reply{"It is 3.", "tool_calls", {}, std::string("add them"), {{"call_1", "add", R"({"a":1})"}}};
  const json items = output_items(kHeader, reply, false, {});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["type"], "reasoning");
  EXPECT_EQ(items[0]["id"], "rs_abc_0");
  EXPECT_EQ(items[0]["content"][0]["text"], "add them");
  EXPECT_EQ(items[1]["type"], "message");
  EXPECT_EQ(items[1]["status"], "completed");
  EXPECT_EQ(items[1]["content"][0]["text"], "It is 3.");
  EXPECT_EQ(items[2], json({{"id", "fc_abc_2"}, {"type", "function_call"}, {"status", "completed"},
                            {"call_id", "call_1"}, {"name", "add"}, {"arguments", R"({"a":1})"}}));
  reply.text.clear();
  reply.reasoning.reset();
  EXPECT_EQ(output_items(kHeader, reply, false, {}).size(), 1u);  // calls alone: no empty message
  // Reasoning alone (cut in it): no empty message; an empty reasoning block: no item; nothing: one
  // empty message. A stream's events give the same items.
  for (const ChoiceResult& only : {ChoiceResult{"", "length", {}, std::string("hmm"), {}},
                                   ChoiceResult{"", "stop", {}, std::string(""), {}}, ChoiceResult{"", "stop", {}, {}, {}}}) {
    const json whole = output_items(kHeader, only, false, {});
    ResponseEvents events(kHeader, json::object(), {});
    events.start();
    if (only.reasoning) events.push({*only.reasoning, "", {}}, {}, {});
    events.finish(false, {1, 1});
    json streamed = events.response()["output"];
    for (json& item : streamed) item.erase("status");
    json expected = whole;
    for (json& item : expected) item.erase("status");
    EXPECT_EQ(streamed, expected) << only.reasoning.value_or("(none)");
    EXPECT_EQ(whole.size(), 1u);
  }
  const Usage usage{10, 4, 6};
  const json r = response_object(kHeader, {{"tools", json::array()}}, "incomplete", json::array(), &usage);
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(r["usage"]["total_tokens"], 14);
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 6);
  EXPECT_EQ(r["tools"], json::array());
}

TEST(Responses, StreamedEventsAddUpToTheItems) {
  ResponseEvents events(kHeader, {{"tools", json::array()}}, {});
  std::string sse = events.start();
  sse += events.push({"thinking ", "", {}}, {}, {});
  sse += events.push({"done", "It", {}}, {}, {});
  sse += events.push({"", " is.", {{0, "add", "{\"a\"", ""}}}, {"call_1"}, {});
  sse += events.push({"", "", {{0, "", ":1}", ""}, {1, "now", "", ""}}}, {"", "call_2"}, {});
  sse += events.finish(false, {10, 7});
  const std::vector<json> e = testing::sse_events(sse);
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(e[i]["sequence_number"], static_cast<int64_t>(i));
  EXPECT_EQ(e.front()["type"], "response.created");
  EXPECT_EQ(e.back()["type"], "response.completed");
  const json& output = e.back()["response"]["output"];
  ASSERT_EQ(output.size(), 4u);
  EXPECT_EQ(output[0]["content"][0]["text"], "thinking done");
  EXPECT_EQ(output[1]["content"][0]["text"], "It is.");
  EXPECT_EQ(output[2]["arguments"], "{\"a\":1}");
  EXPECT_EQ(output[2]["call_id"], "call_1");
  EXPECT_EQ(output[3]["name"], "now");
  EXPECT_EQ(output[3]["arguments"], "");
  EXPECT_EQ(e.back()["response"]["usage"]["output_tokens"], 7);
  // Every item: added, its deltas, done, in that order; the done item is the response's.
  for (size_t index = 0; index < output.size(); ++index) {
    std::string deltas;
    int added = -1, done = -1;
    for (size_t i = 0; i < e.size(); ++i) {
      if (!e[i].contains("output_index") || e[i]["output_index"] != index) continue;
      const std::string type = e[i]["type"];
      if (type == "response.output_item.added") added = static_cast<int>(i);
      if (type == "response.output_item.done") {
        done = static_cast<int>(i);
        EXPECT_EQ(e[i]["item"], output[index]);
      }
      if (type.size() > 6 && type.substr(type.size() - 6) == ".delta") {
        EXPECT_GT(static_cast<int>(i), added);
        EXPECT_EQ(done, -1);
        deltas += e[i]["delta"].get<std::string>();
      }
    }
    EXPECT_GE(added, 0);
    EXPECT_GT(done, added);
    const json& item = output[index];
    EXPECT_EQ(deltas, item["type"] == "function_call" ? item["arguments"] : item["content"][0]["text"]) << index;
  }
  // An error ends a stream as an `error` event.
  const std::vector<json> failed = testing::sse_events(events.error(error_body(500, "generation failed: x", "", "generation_error")));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["code"], "generation_error");
}

TEST(Responses, ABackgroundStreamStartsQueuedAndAStoppedOneKeepsItsOutput) {
  ResponseEvents events(kHeader, {{"background", true}}, {});
  std::string sse = events.start();
  sse += events.push({"", "It is", {}}, {}, {});
  const std::vector<json> e = testing::sse_events(sse);
  ASSERT_GE(e.size(), 3u);
  EXPECT_EQ(e[0]["type"], "response.created");
  EXPECT_EQ(e[0]["response"]["status"], "queued");
  EXPECT_EQ(e[1]["type"], "response.queued");
  EXPECT_EQ(e[2]["type"], "response.in_progress");
  EXPECT_EQ(e[2]["response"]["status"], "in_progress");
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(e[i]["sequence_number"], static_cast<int64_t>(i));
  const json stopped = events.ended_response("cancelled");
  EXPECT_EQ(stopped["status"], "cancelled");
  ASSERT_EQ(stopped["output"].size(), 1u);
  EXPECT_EQ(stopped["output"][0]["status"], "incomplete");
  EXPECT_EQ(stopped["output"][0]["content"][0]["text"], "It is");
  EXPECT_TRUE(events.response().is_null());  // it sent no Response of its own
}

TEST(Responses, SpeculativeDecodingPerRequestAsChatHasIt) {
  const ResponsesRequest r = parse(R"({"input": "a", "draft": "ngram", "draft_tokens": 3})");
  EXPECT_EQ(r.chat.params.options.draft, infer::DraftMode::ngram);
  EXPECT_EQ(r.chat.params.options.draft_tokens, 3);
  expect_error(R"({"input": "a", "draft": "model"})", "draft");  // no draft model on this server
  expect_error(R"({"input": "a", "draft_tokens": 0})", "draft_tokens");
}

TEST(Responses, IncludesAskForLogprobsAndSealedReasoning) {
  const ResponsesRequest plain = parse(R"({"input": "a", "top_logprobs": 3})");
  EXPECT_FALSE(plain.includes.logprobs);
  EXPECT_FALSE(plain.chat.params.logprobs);  // alternatives only with the logprobs included, as vLLM has it
  EXPECT_EQ(plain.settings["top_logprobs"], 3);
  EXPECT_EQ(plain.settings["truncation"], "disabled");
  EXPECT_EQ(plain.settings["max_tool_calls"], nullptr);
  const ResponsesRequest r = parse(R"({"input": "a", "top_logprobs": 3, "truncation": "auto", "max_tool_calls": 2,
      "include": ["message.output_text.logprobs", "reasoning.encrypted_content", "file_search_call.results"]})");
  EXPECT_TRUE(r.includes.logprobs);
  EXPECT_TRUE(r.includes.encrypted_reasoning);
  EXPECT_TRUE(r.chat.params.logprobs);
  EXPECT_EQ(r.chat.params.options.top_logprobs, 3);
  EXPECT_TRUE(r.truncate_auto);
  EXPECT_EQ(r.settings["truncation"], "auto");
  EXPECT_EQ(r.settings["max_tool_calls"], 2);
  EXPECT_FALSE(parse(R"({"input": "a", "include": null})").includes.logprobs);
  EXPECT_EQ(parse(R"({"input": "a", "conversation": {"id": "conv_1"}})").settings["conversation"], json({{"id", "conv_1"}}));
  EXPECT_FALSE(plain.settings.contains("conversation"));
  const ResponsesRequest background = parse(R"({"input": "a", "background": true})");
  EXPECT_TRUE(background.background);
  EXPECT_EQ(background.settings["background"], true);
  EXPECT_EQ(plain.settings["background"], false);
}

TEST(Responses, SealedReasoningComesBackAsTheAssistantsReasoning) {
  const std::string thought = "add them, \u00e9 \"quoted\"\nthen answer";
  const std::string sealed = seal_reasoning(thought);
  EXPECT_EQ(open_reasoning(sealed), thought);
  EXPECT_EQ(open_reasoning("gAAAAAB" + sealed), std::nullopt);
  EXPECT_EQ(open_reasoning(sealed.substr(0, sealed.size() - 1)), std::nullopt);
  EXPECT_EQ(open_reasoning(seal_reasoning("\xff\xfe")), std::nullopt);  // not UTF-8: not text this server wrote
  const json item = {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", json::array()}, {"encrypted_content", sealed}};
  const std::string body = json{{"input", json::array({{{"role", "user"}, {"content", "1+2?"}}, item,
                                                       {{"role", "assistant"}, {"content", "3"}}})}}
                               .dump();
  const ResponsesRequest r = parse(body);
  ASSERT_EQ(r.chat.messages.size(), 2u);
  EXPECT_EQ(r.chat.messages[1]["reasoning_content"], thought);
  // The reply's reasoning item carries it sealed, whole and streamed alike.
  const ChoiceResult reply{"3", "stop", {}, thought, {}};
  const json items = output_items(kHeader, reply, false, {.encrypted_reasoning = true});
  EXPECT_EQ(items[0]["encrypted_content"], sealed);
  EXPECT_FALSE(output_items(kHeader, reply, false, {})[0].contains("encrypted_content"));
  ResponseEvents events(kHeader, json::object(), {.encrypted_reasoning = true});
  events.start();
  events.push({thought, "3", {}}, {}, {});
  events.finish(false, {1, 2});
  EXPECT_EQ(events.response()["output"][0], items[0]);
  // One the server did not give: OpenAI's invalid_encrypted_content.
  for (const json& bad : {json("difftx-reasoning-1.@@@"), json("gAAAAABk"), json(5)}) {
    json forged = item;
    forged["encrypted_content"] = bad;
    const std::string b = json{{"input", json::array({{{"role", "user"}, {"content", "x"}}, forged})}}.dump();
    try {
      parse(b);
      ADD_FAILURE() << bad;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.code, "invalid_encrypted_content");
      EXPECT_EQ(e.param, "input");
    }
  }
}

TokenInfo token(const std::string& text, float logprob) { return {text, logprob, {{text, logprob}, {"x", -9}}, false}; }

TEST(Responses, ContentTokensAreThoseWhoseTextWentToTheContent) {
  ContentTokens content;
  // Reasoning, then a token the reader holds ("<" may open a marker), then text: the held token is
  // the content's; tokens of a call are not.
  EXPECT_TRUE(content.take({"think", "", {}}, {token("think", -1)}).empty());
  EXPECT_TRUE(content.take({}, {token("<", -2)}).empty());
  const std::vector<TokenInfo> got = content.take({"", "<b", {}}, {token("b", -3)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].token + got[1].token, "<b");
  EXPECT_TRUE(content.take({}, {token("<tool", -4)}).empty());
  EXPECT_TRUE(content.take({"", "", {{0, "f", "{}", ""}}}, {token("_call>", -5)}).empty());
  EXPECT_EQ(content.take({"", "!", {}}, {token("!", -6)}).size(), 1u);  // the held call tokens did not come along
  // A marker that settles nothing on its own (the end of the reasoning) is not the content's.
  EXPECT_TRUE(content.take({"more", "", {}}, {token("more", -1)}).empty());
  EXPECT_TRUE(content.take({}, {token("</think>", -1)}).empty());
  EXPECT_TRUE(content.take({}, {token("\n", -1)}).empty());  // whitespace the reader trims
  const std::vector<TokenInfo> answer = content.take({"", "Hi", {}}, {token("Hi", -1)});
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(answer[0].token, "Hi");
  // A character split across tokens: both are the content's.
  EXPECT_TRUE(content.take({}, {token("\xe2", -1)}).empty());
  EXPECT_EQ(content.take({"", "\xe2\x82\xac", {}}, {token("\x82\xac", -1)}).size(), 2u);
  TokenInfo end = token("<|im_end|>", -7);
  end.silent = true;
  EXPECT_TRUE(content.take({}, {token(" ", -8)}).empty());
  const std::vector<TokenInfo> last = content.take({"", " ", {}}, {end});  // the end flushes the held text, not itself
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].token, " ");
}

TEST(Responses, LogprobsFollowTheOutputText) {
  const std::vector<TokenInfo> tokens = {token("It", -0.5f), token(" is", -0.25f)};
  ChoiceResult reply{"It is", "stop", tokens, std::nullopt, {}};
  const json whole = output_items(kHeader, reply, false, {.logprobs = true})[0]["content"][0]["logprobs"];
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0]["token"], "It");
  EXPECT_EQ(whole[1]["logprob"], -0.25);
  EXPECT_EQ(whole[1]["bytes"], json({32, 105, 115}));
  EXPECT_EQ(whole[1]["top_logprobs"][1]["token"], "x");
  EXPECT_EQ(output_items(kHeader, reply, false, {})[0]["content"][0]["logprobs"], json::array());
  ResponseEvents events(kHeader, json::object(), {.logprobs = true});
  std::string sse = events.start();
  sse += events.push({"", "It", {}}, {}, {tokens[0]});
  sse += events.push({"", " is", {}}, {}, {tokens[1]});
  sse += events.finish(false, {1, 2});
  json streamed = json::array();
  for (const json& e : testing::sse_events(sse)) {
    if (e["type"] == "response.output_text.delta") streamed.insert(streamed.end(), e["logprobs"].begin(), e["logprobs"].end());
    if (e["type"] == "response.output_text.done") {
      EXPECT_EQ(e["logprobs"], whole);
    }
  }
  EXPECT_EQ(streamed, whole);
  EXPECT_EQ(events.response()["output"][0]["content"][0]["logprobs"], whole);
}

}  // namespace
}  // namespace difftx::serve
