#include "chat/chat_template.h"

#include <cstdlib>
#include <filesystem>

#include "chat/globals.h"
#include "chat/parser.h"
#include "chat/renderer.h"
#include "data/hf_tokenizer.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace difftx::chat {

ChatTemplate ChatTemplate::parse(const std::string& source) {
  ChatTemplate t;
  t.body_ = std::make_shared<const Body>(parse_template(source));
  t.source = source;
  return t;
}

namespace {

// tokenizer_config.json of a model directory as a JSON object (empty when the file is absent).
nlohmann::json read_config(const std::filesystem::path& config_path) {
  return io::read_json_object_if_present(config_path).value_or(nlohmann::json::object());
}

}  // namespace

void ChatTemplate::take_special_tokens(const nlohmann::json& config) {
  for (const char* name :
       {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!config.contains(name)) continue;
    const auto text = data::special_token_text(config[name]);
    if (!text) continue;
    if (std::string(name) == "bos_token") bos_token = *text;
    else if (std::string(name) == "eos_token") eos_token = *text;
    else special_tokens[name] = *text;
  }
  if (config.contains("additional_special_tokens") && config["additional_special_tokens"].is_array()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& tok : config["additional_special_tokens"])
      if (const auto text = data::special_token_text(tok)) list.push_back(*text);
    special_tokens["additional_special_tokens"] = list;
  }
}

void ChatTemplate::take_special_tokens_of(const std::string& dir) {
  take_special_tokens(read_config(std::filesystem::path(dir) / "tokenizer_config.json"));
}

std::optional<ChatTemplate> ChatTemplate::from_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
  const fs::path jinja_path = fs::path(dir) / "chat_template.jinja";
  const nlohmann::json config = read_config(config_path);
  std::optional<std::string> source, tool_use;
  if (fs::exists(jinja_path)) {
    source = io::read_whole_file(jinja_path);
  } else if (config.contains("chat_template") && !config["chat_template"].is_null()) {
    const nlohmann::json& ct = config["chat_template"];
    if (ct.is_string()) {
      source = ct.get<std::string>();
    } else {
      DIFFTX_CHECK(ct.is_array(), config_path.string(), ": chat_template must be a string or a list of {name, template}");
      for (const auto& entry : ct) {
        DIFFTX_CHECK(entry.is_object() && entry.contains("name") && entry["name"].is_string() &&
                         entry.contains("template") && entry["template"].is_string(),
                     config_path.string(), ": chat_template's entries must be {\"name\": string, \"template\": ",
                     "string}, got ", io::json_value_for_message(entry));
        const std::string name = entry["name"].get<std::string>();
        if (name == "default") source = entry["template"].get<std::string>();
        if (name == "tool_use") tool_use = entry["template"].get<std::string>();
      }
      DIFFTX_CHECK(source.has_value(), config_path.string(), ": chat_template is a list without a \"default\" entry");
    }
  }
  if (!source) return std::nullopt;
  ChatTemplate t;
  try {
    t = parse(*source);
    if (tool_use) {
      const ChatTemplate with_tools = parse(*tool_use);
      t.tool_use_body_ = with_tools.body_;
      t.tool_use_source = *tool_use;
    }
  } catch (const Error& e) {
    fail(fs::exists(jinja_path) ? jinja_path.string() : config_path.string(), ": ", e.what());
  }
  t.take_special_tokens(config);
  return t;
}

namespace {

template <typename Json>
std::string render_with(const Body& body, const ChatTemplate& t, const Json& messages, bool add_generation_prompt,
                        const Json& extra) {
  DIFFTX_CHECK(messages.is_array(), "chat template: messages must be a JSON array");
  DIFFTX_CHECK(extra.is_object(), "chat template: the extra variables must be a JSON object");
  Dict vars;
  std::string date = t.date;
  if (date.empty())
    if (const char* env = std::getenv("DIFFTX_TEMPLATE_DATE")) date = env;
  add_globals(vars, date);
  for (auto it = t.special_tokens.begin(); it != t.special_tokens.end(); ++it) vars.set(it.key(), from_json(it.value()));
  if (!t.bos_token.empty()) vars.set("bos_token", Value::from(t.bos_token));
  if (!t.eos_token.empty()) vars.set("eos_token", Value::from(t.eos_token));
  vars.set("messages", from_json(messages));
  vars.set("tools", Value::none());
  vars.set("documents", Value::none());
  vars.set("add_generation_prompt", Value::from(add_generation_prompt));
  for (auto it = extra.begin(); it != extra.end(); ++it) vars.set(it.key(), from_json(it.value()));
  return render_body(body, vars);
}

// Whether a call passes tools (transformers renders the tool_use template then).
template <typename Json>
bool has_tools(const Json& extra) {
  return extra.is_object() && extra.contains("tools") && !extra["tools"].is_null();
}

}  // namespace

const Body& ChatTemplate::body_for(bool tools) const {
  DIFFTX_CHECK(body_ != nullptr, "chat template: render() before parse()");
  return tools && tool_use_body_ ? *tool_use_body_ : *body_;
}

bool ChatTemplate::renders_tool_use(const nlohmann::ordered_json& extra) const {
  return tool_use_body_ && has_tools(extra);
}

std::string ChatTemplate::render(const nlohmann::json& messages, bool add_generation_prompt,
                                 const nlohmann::json& extra) const {
  return render_with(body_for(has_tools(extra)), *this, messages, add_generation_prompt, extra);
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                 const nlohmann::ordered_json& extra) const {
  return render_with(body_for(has_tools(extra)), *this, messages, add_generation_prompt, extra);
}

}  // namespace difftx::chat
