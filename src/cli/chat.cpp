// `difftx chat`: an interactive conversation with a model on the terminal. Each line on stdin is
// a user message; the whole conversation goes through the model's chat template and the reply
// streams to stdout. An empty line or the end of input ends it.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "api/generation.h"
#include "cli/command.h"
#include "cli/device_option.h"
#include "cli/engine_model.h"
#include "cli/sampling_option.h"
#include "core/error.h"
#include "data/generation_defaults.h"
#include "infer/generate.h"
#include "infer/model_prompt.h"
#include "serve/chat_prompt.h"

namespace difftx::cli {
namespace {

int run_chat(Args& args) {
  const ModelOptions m = model_options(args);
  const auto system = args.get("system");
  const bool keep_special = args.flag("keep-special-tokens");
  const data::GenerationDefaults defaults = data::read_generation_defaults(m.dir);
  infer::GenerateOptions o;
  o.spelling = OptionSpelling::flag;
  o.max_new_tokens = args.get_int("max-new-tokens", defaults.max_new_tokens.value_or(512), IntRange{1, kMaxDimension});
  o.kv = kv_dtype_option(args);
  infer::SamplingOptions fallback;
  fallback.temperature = 0.7;  // chat's own default
  o.sampling = sampling_options(args, defaults, fallback);
  o.stop_strings = stop_strings_option(args);
  backends::Backend& device = device_option(args);
  args.finish();

  const chat::ChatTemplate tmpl = required_chat_template(m.dir, m.chat_template);
  model::Model model = load_engine_model(m.dir, device);
  const data::Tokenizer tokenizer = infer::load_model_tokenizer(m.dir, m.tokenizer, model.config);
  const data::PromptFrame frame = data::prompt_frame(tokenizer, defaults);
  o.sample_vocab = tokenizer.vocab_size();
  check_logit_bias(o.sampling, o.sample_vocab);
  o.stop_tokens = frame.stop;
  for (int32_t id : serve::chat_stop_ids(tmpl, tokenizer)) o.stop_tokens.push_back(id);
  // The special tokens the model writes are left out of its replies, as the server leaves them out
  // (skip_special_tokens), but for the reasoning block's markers.
  o.tokenizer = &tokenizer;
  if (!keep_special) o.silent_tokens = api::skipped_special_tokens(tokenizer, &tmpl);

  nlohmann::json messages = nlohmann::json::array();
  if (system) messages.push_back({{"role", "system"}, {"content", *system}});
  std::string line;
  for (;;) {
    std::fputs("> ", stderr);
    if (!std::getline(std::cin, line) || line.empty()) break;
    messages.push_back({{"role", "user"}, {"content", line}});
    const std::vector<int32_t> ids =
        serve::encode_chat_prompt(tokenizer, frame.prefix, tmpl.render(messages, true));
    DIFFTX_CHECK(static_cast<int64_t>(ids.size()) < model.config.max_position_embeddings, "the conversation is ",
                 ids.size(), " tokens, at the end of the context of ", model.config.max_position_embeddings);
    std::string reply;
    infer::generate(model, ids, o, [&](const infer::TokenEvent& e) {
      reply += e.text;
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
    });
    std::fputs("\n", stdout);
    messages.push_back({{"role", "assistant"}, {"content", reply}});
    ++o.sampling.seed;  // a new draw each turn, still reproducible
  }
  return 0;
}

}  // namespace

DIFFTX_COMMAND("chat", "talk to a model on the terminal through its chat template",
               "  --model DIR           a model directory with its tokenizer and a chat template\n"
               DIFFTX_DEVICE_HELP
               "  --chat-template FILE  this Jinja template instead of the model's (tokenizer_config.json)\n"
               "  --system TEXT         a system message first\n"
               "  --max-new-tokens N    most tokens of a reply (default 512); it ends earlier at the EOS\n"
               "  --temperature X       0 is greedy (default 0.7)\n"
               "  --top-k K, --top-p P  sampling as in generate (defaults 0 and 1: off)\n"
               DIFFTX_SAMPLING_HELP
               "  --seed S              seed of the first reply (each reply uses the next; default 1)\n"
               "  --logit-bias ID=BIAS[,ID=BIAS...]  token logit biases in [-100, 100], as in generate\n"
               "  --kv-dtype f32|bf16|int8  KV cache storage (default bf16)\n"
               "  --keep-special-tokens print the special tokens the model writes as text\n"
               "  --tokenizer NAME      use this tokenizer instead of the model directory's\n"
               "Each line on stdin is a message; the reply streams to stdout (without the special tokens the\n"
               "model writes, as serve's skip_special_tokens, unless --keep-special-tokens). An empty line ends.",
               run_chat);

}  // namespace difftx::cli
