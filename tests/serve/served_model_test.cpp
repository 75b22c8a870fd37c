// From parsed requests to engine Requests: n choices seeded seed + i, the context budget (a
// 400 naming both lengths), stop ids; chat prompts tokenized with specials and one prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "data/bpe_trainer.h"
#include "serve/api_error.h"
#include "serve/chat_prompt.h"
#include "serve/served_model.h"
#include "io/io_test_files.h"
#include "support/testing.h"

namespace difftx::serve {
namespace {

ServedModel model_with_context(int64_t context) {
  ServedModel m;
  m.limits.context = context;
  m.limits.vocab_size = 300;
  m.frame.prefix = {0};
  m.frame.stop = {0};
  return m;
}

TEST(ServeRequests, ChoicesSeedsAndBudget) {
  const ServedModel m = model_with_context(16);
  GenerationParams p;
  p.n = 3;
  p.seed = 40;
  p.options.stop_strings = {"END"};
  p.logprobs = true;
  const std::vector<infer::Request> r = make_requests(m, {{0, 5, 6}, {0, 7}}, p, {9});
  ASSERT_EQ(r.size(), 6u);  // prompt-major
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].options.sampling.seed, 40u + i % 3);
    EXPECT_EQ(r[i].options.stop_tokens, (std::vector<int32_t>{0, 9}));
    EXPECT_EQ(r[i].options.stop_strings, std::vector<std::string>{"END"});
    EXPECT_TRUE(r[i].options.logprobs);
  }
  EXPECT_EQ(r[0].prompt, (std::vector<int32_t>{0, 5, 6}));
  EXPECT_EQ(r[3].prompt, (std::vector<int32_t>{0, 7}));
  EXPECT_EQ(r[0].options.max_new_tokens, 13);  // until the context ends
  EXPECT_EQ(r[3].options.max_new_tokens, 14);
  p.max_tokens = 13;
  EXPECT_EQ(make_requests(m, {{0, 5, 6}}, p)[0].options.max_new_tokens, 13);
}

// vLLM's stop_token_ids stop too; with ignore_eos the model's end-of-sequence ids and the chat's
// end of turn do not, the request's own still do.
TEST(ServeRequests, StopTokenIdsAndIgnoreEos) {
  const ServedModel m = model_with_context(16);
  GenerationParams p;
  p.stop_token_ids = {42, 7};
  EXPECT_EQ(make_requests(m, {{0, 5}}, p, {9})[0].options.stop_tokens, (std::vector<int32_t>{42, 7, 0, 9}));
  p.ignore_eos = true;
  EXPECT_EQ(make_requests(m, {{0, 5}}, p, {9})[0].options.stop_tokens, (std::vector<int32_t>{42, 7}));
  p.stop_token_ids.clear();
  EXPECT_TRUE(make_requests(m, {{0, 5}}, p, {9})[0].options.stop_tokens.empty());
}

// vLLM's min_tokens: at most the tokens a choice may generate (max_tokens, else the context left).
TEST(ServeRequests, MinTokensAtMostWhatMayBeGenerated) {
  const ServedModel m = model_with_context(16);
  GenerationParams p;
  p.options.min_tokens = 14;
  EXPECT_EQ(make_requests(m, {{0, 5}}, p)[0].options.min_tokens, 14);
  p.max_tokens = 13;
  try {
    make_requests(m, {{0, 5}}, p);
    ADD_FAILURE() << "min_tokens above max_tokens was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "min_tokens");
  }
}

// vLLM's truncate_prompt_tokens: a longer prompt keeps its last k tokens; -1 as many as leave
// max_tokens (else one) to generate; a shorter one, or one that cannot be cut to fit, stays.
TEST(ServeRequests, TruncatePromptTokensKeepsTheLast) {
  GenerationParams p;
  std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(truncate_prompt(ids, p, 16));
  p.truncate_prompt_tokens = 4;
  EXPECT_TRUE(truncate_prompt(ids, p, 16));
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_FALSE(truncate_prompt(ids, p, 16));
  p.truncate_prompt_tokens = -1;
  p.max_tokens = 5;
  std::vector<int32_t> long_prompt(20, 7);
  long_prompt.back() = 8;
  EXPECT_TRUE(truncate_prompt(long_prompt, p, 16));
  EXPECT_EQ(long_prompt.size(), 11u);
  EXPECT_EQ(long_prompt.back(), 8);
  p.max_tokens.reset();
  std::vector<int32_t> again(20, 7);
  EXPECT_TRUE(truncate_prompt(again, p, 16));
  EXPECT_EQ(again.size(), 15u);
  p.max_tokens = 16;  // nothing is left for the prompt: it stays, and the context check refuses it
  std::vector<int32_t> whole(20, 7);
  EXPECT_FALSE(truncate_prompt(whole, p, 16));
  EXPECT_EQ(whole.size(), 20u);
}

TEST(ServeRequests, ContextErrorsNameTheLengths) {
  const ServedModel m = model_with_context(8);
  GenerationParams p;
  try {
    make_requests(m, {std::vector<int32_t>(8, 1)}, p);
    ADD_FAILURE() << "a prompt filling the context was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "prompt");
    EXPECT_NE(std::string(e.what()).find("8 tokens, but the model's context is 8"), std::string::npos) << e.what();
  }
  p.max_tokens = 6;
  try {
    make_requests(m, {{0, 1, 2}}, p);
    ADD_FAILURE() << "max_tokens beyond the context was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param, "max_tokens");
    EXPECT_NE(std::string(e.what()).find("3 in the prompt, 6 to generate"), std::string::npos) << e.what();
  }
  p.max_tokens = 5;
  EXPECT_EQ(make_requests(m, {{0, 1, 2}}, p).size(), 1u);
  EXPECT_THROW(make_requests(m, {{}}, p), ApiError);
}

TEST(ServeRequests, ChatPromptsHaveOnePrefix) {
  const std::vector<std::string_view> docs = {"the whale the whale the sea the sea"};
  const data::Tokenizer tokenizer = data::train_bpe(docs, {.vocab_size = 260, .name = "tiny"});
  const int32_t eot = tokenizer.end_of_text();
  const std::vector<int32_t> prefix = {eot};
  // The template's own leading special token is matched, not added twice; without it, the prefix comes first.
  const auto with = encode_chat_prompt(tokenizer, prefix, "<|endoftext|>the sea");
  const auto without = encode_chat_prompt(tokenizer, prefix, "the sea");
  EXPECT_EQ(with, without);
  EXPECT_EQ(with.front(), eot);
  EXPECT_EQ(std::count(with.begin(), with.end(), eot), 1);
  // Special-token text inside the rendering is the special token.
  const auto inner = encode_chat_prompt(tokenizer, prefix, "the<|endoftext|>sea");
  EXPECT_EQ(std::count(inner.begin(), inner.end(), eot), 2);
  chat::ChatTemplate tmpl = chat::ChatTemplate::parse("{{ messages[0]['content'] }}");
  tmpl.eos_token = "<|endoftext|>";
  EXPECT_EQ(chat_stop_ids(tmpl, tokenizer), std::vector<int32_t>{eot});
  tmpl.eos_token = "</s>";
  EXPECT_TRUE(chat_stop_ids(tmpl, tokenizer).empty());
}

// A message's text parts: joined by newlines for a template that prints the content, passed on as
// a list to one that loops over them (Gemma 3's, Llama 4's), as vLLM decides.
TEST(ServeRequests, ContentPartsReachATemplateAsItTakesThem) {
  const auto parts = nlohmann::ordered_json::parse(
      R"([{"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}])");
  const ChatRenderer joined = chat_renderer(chat::ChatTemplate::parse("{{ messages[0]['content'] }}"));
  EXPECT_EQ(joined(parts, false, nlohmann::ordered_json::object()), "one\ntwo");
  const ChatRenderer looped = chat_renderer(chat::ChatTemplate::parse(
      "{% for message in messages %}{% for part in message['content'] %}[{{ part['text'] }}]{% endfor %}{% endfor %}"));
  EXPECT_EQ(looped(parts, false, nlohmann::ordered_json::object()), "[one][two]");
  EXPECT_TRUE(iterates_content_parts("{%- for item in message['content'] -%}"));
  EXPECT_TRUE(iterates_content_parts("{% for c in message.content %}"));
  EXPECT_FALSE(iterates_content_parts("{{ message['content'] | trim }}"));
}

// A model whose tool_use template differs from its default: the developer role and the content
// parts follow the template that renders the call.
TEST(ServeRequests, TheToolUseTemplateDecidesWhatItTakes) {
  testing::TempDir dir;
  nlohmann::json config;
  config["chat_template"] = nlohmann::json::array(
      {{{"name", "default"}, {"template", "{% for m in messages %}{{ m['role'] }}:{{ m['content'] }};{% endfor %}"}},
       {{"name", "tool_use"},
        {"template", "{% for m in messages %}{% if m['role'] == 'developer' %}dev:{% endif %}"
                     "{% for part in m['content'] %}[{{ part['text'] }}]{% endfor %};{% endfor %}"}}});
  testing::write_bytes(dir / "tokenizer_config.json", config.dump());
  const ChatRenderer render = chat_renderer(*chat::ChatTemplate::from_model_dir(dir.path().string()));
  const auto messages = nlohmann::ordered_json::parse(
      R"([{"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])");
  EXPECT_EQ(render(messages, false, nlohmann::ordered_json::object()), "system:a\nb;");
  const auto tools = nlohmann::ordered_json::parse(R"({"tools": [{"type": "function", "function": {"name": "f"}}]})");
  EXPECT_EQ(render(messages, false, tools), "dev:[a][b];");
}

TEST(ServeRequests, TemplateRefusalsAre400sWithTheirMessage) {
  const ChatRenderer render = chat_renderer(chat::ChatTemplate::parse(
      "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok"));
  EXPECT_EQ(render(nlohmann::ordered_json::parse(R"([{"role": "user", "content": "x"}])"), true,
                   nlohmann::ordered_json::object()),
            "ok");
  try {
    render(nlohmann::ordered_json::parse(R"([{"role": "system", "content": "x"}])"), true,
           nlohmann::ordered_json::object());
    ADD_FAILURE() << "the template's exception did not come out";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "messages");
    EXPECT_NE(std::string(e.what()).find("System role not supported"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace difftx::serve
