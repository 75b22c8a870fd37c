// Chat templates: the Jinja template a Hugging Face model ships in tokenizer_config.json, which
// turns a list of messages into the prompt text. difftx renders the subset of Jinja that real
// chat templates use, with jinja2's semantics under transformers' settings (trim_blocks,
// lstrip_blocks, loop controls, raise_exception, strftime_now, an unescaped tojson).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/template_error.h"
#include "core/error.h"

namespace difftx::chat {

struct Stmt;

struct ChatTemplate {
  // Parses the template; an unsupported construct is a difftx::Error naming it and its line.
  static ChatTemplate parse(const std::string& source);
  // Reads the model directory's chat_template.jinja, else tokenizer_config.json's chat_template
  // (a string, or a list of {name, template}: its "default", and its "tool_use", which transformers
  // renders where the call has tools), and the special tokens (strings or {"content": ...}
  // objects); std::nullopt when the model has no template.
  static std::optional<ChatTemplate> from_model_dir(const std::string& dir);
  // The special tokens of a model directory's tokenizer_config.json (none when it is absent), for
  // a template given apart from the model.
  void take_special_tokens_of(const std::string& dir);

  // messages: a JSON array of {role, content, ...} objects, passed through as they are (content
  // may be a string or a list of parts; extra keys such as tool_calls/reasoning_content are
  // visible to the template). extra: additional top-level variables (e.g. tools,
  // enable_thinking) as a JSON object; they override the special tokens. As transformers does,
  // `tools` and `documents` are None unless extra gives them. raise_exception() and every other
  // render-time failure throw TemplateError: raise_exception's message as the template wrote
  // it, the others prefixed with "chat template line N: ".
  // nlohmann::json keeps object keys sorted; the ordered_json overload keeps them as written
  // (what tojson of a tool definition prints). With `tools` in extra (not null) the tool_use
  // template renders where there is one.
  std::string render(const nlohmann::json& messages, bool add_generation_prompt,
                     const nlohmann::json& extra = nlohmann::json::object()) const;
  std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  std::string bos_token, eos_token;  // from tokenizer_config.json, "" when absent (then undefined)
  // The other special tokens (unk_token, pad_token, additional_special_tokens, ...) by name.
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  // "YYYY-MM-DD" for strftime_now; empty: $DIFFTX_TEMPLATE_DATE when set, else today.
  std::string date;
  std::string source;  // the template's text (what a server reads its tool and reasoning formats from)
  std::string tool_use_source;  // the named tool_use template's, "" without one
  // The text that shows how the model writes tool calls: the tool_use template's, else the default's.
  const std::string& tools_source() const { return tool_use_source.empty() ? source : tool_use_source; }
  // Whether render() with this `extra` renders the tool_use template (it passes tools; there is one).
  bool renders_tool_use(const nlohmann::ordered_json& extra) const;

 private:
  using BodyPtr = std::shared_ptr<const std::vector<std::shared_ptr<const Stmt>>>;
  void take_special_tokens(const nlohmann::json& config);
  // The statements that render a call: tool_use's where it passes tools and there is one.
  const std::vector<std::shared_ptr<const Stmt>>& body_for(bool tools) const;
  BodyPtr body_, tool_use_body_;
};

}  // namespace difftx::chat
