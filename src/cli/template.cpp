// `difftx template`: renders a model's chat template over messages from a JSON file and
// prints the prompt exactly (no newline added), as transformers' apply_chat_template would.
#include <cstdio>

#include "chat/chat_template.h"
#include "cli/command.h"
#include "core/error.h"
#include "io/input_file.h"

namespace difftx::cli {
namespace {

int run_template(Args& args) {
  const auto model = args.get("model");
  const std::string messages_path = args.require("messages");
  const bool no_generation_prompt = args.flag("no-generation-prompt");
  const auto template_path = args.get("chat-template");
  const auto date = args.get("date");
  args.finish();
  DIFFTX_CHECK(model || template_path, "template: give --model DIR (its tokenizer_config.json) or --chat-template FILE");

  std::optional<chat::ChatTemplate> tmpl;
  if (model && !template_path) tmpl = chat::ChatTemplate::from_model_dir(*model);
  if (template_path) {
    chat::ChatTemplate own;
    try {
      own = chat::ChatTemplate::parse(io::read_whole_file(*template_path));
    } catch (const chat::TemplateError&) {
      throw;
    } catch (const Error& e) {
      fail(*template_path, ": ", e.what());
    }
    if (model) own.take_special_tokens_of(*model);  // the model's special tokens with the given template
    tmpl = std::move(own);
  }
  DIFFTX_CHECK(tmpl.has_value(), "template: ", *model,
               " has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja); "
               "give one with --chat-template FILE");
  if (date) tmpl->date = *date;

  nlohmann::ordered_json input;
  try {
    input = nlohmann::ordered_json::parse(io::read_whole_file(messages_path));
  } catch (const nlohmann::json::exception& e) {
    fail(messages_path, ": not valid JSON (", e.what(), ")");
  }
  nlohmann::ordered_json messages, extra = nlohmann::ordered_json::object();
  if (input.is_array()) {
    messages = input;
  } else {
    DIFFTX_CHECK(input.is_object() && input.contains("messages"), messages_path,
                 ": expected an array of messages or an object with \"messages\"");
    messages = input["messages"];
    for (auto it = input.begin(); it != input.end(); ++it)
      if (it.key() != "messages") extra[it.key()] = it.value();
  }
  const std::string prompt = tmpl->render(messages, !no_generation_prompt, extra);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("template", "render a model's chat template over messages: the prompt, byte for byte",
               "  --model DIR               a model directory with tokenizer_config.json (its chat_template\n"
               "                            and special tokens) or chat_template.jinja\n"
               "  --messages FILE.json      an array of {role, content, ...} messages, or an object with\n"
               "                            \"messages\" and other variables (tools, enable_thinking, ...)\n"
               "  --no-generation-prompt    render with add_generation_prompt false (default: true)\n"
               "  --chat-template FILE      use this Jinja template instead of the model's\n"
               "  --date YYYY-MM-DD         the date strftime_now formats (default: $DIFFTX_TEMPLATE_DATE,\n"
               "                            else today)\n"
               "raise_exception() in the template is an error carrying its message.",
               run_template);

}  // namespace difftx::cli
