// `difftx serve`: an OpenAI-compatible HTTP server over the continuous-batching engine
// (src/serve/): completions, chat completions, tokenize, metrics and a chat page.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "chat/model_chat_template.h"
#include "cli/command.h"
#include "cli/device_option.h"
#include "cli/draft_option.h"
#include "cli/engine_model.h"
#include "core/error.h"
#include "data/generation_defaults.h"
#include "grammar/token_vocabulary.h"
#include "infer/model_prompt.h"
#include "serve/chat_prompt.h"
#include "serve/server.h"
#include "serve/tool_format.h"

namespace difftx::cli {
namespace {

namespace fs = std::filesystem;

int run_serve(Args& args) {
  const ModelOptions source = model_options(args);
  serve::ServerOptions o;
  o.host = args.get("host", o.host);
  o.port = static_cast<int>(args.get_int("port", o.port, IntRange{0, 65535}));
  o.api_key = args.get("api-key", std::getenv("DIFFTX_API_KEY") ? std::getenv("DIFFTX_API_KEY") : "");
  o.max_body_bytes = static_cast<size_t>(args.get_int("max-body-bytes", static_cast<int64_t>(o.max_body_bytes),
                                                      IntRange{1024, int64_t{1} << 32}));
  o.max_connections = static_cast<int>(args.get_int("max-connections", o.max_connections, IntRange{1, 4096}));
  o.read_timeout_s = static_cast<int>(args.get_int("read-timeout", o.read_timeout_s, IntRange{1, 3600}));
  o.write_timeout_s = o.read_timeout_s;
  o.grace_seconds = args.get_double("grace", o.grace_seconds, NumberRange{0, 3600});
  o.log_format = serve::parse_log_format(args.get("log-format", "text"));
  o.responses_store_bytes =
      args.get_int("responses-store-bytes", o.responses_store_bytes, IntRange{0, int64_t{1} << 40});
  infer::EngineOptions e;
  e.spelling = OptionSpelling::flag;
  e.kv = kv_dtype_option(args);
  e.kv_tokens = args.get_int("kv-tokens", 0, kNonNegative);
  e.kv_bytes = args.get_int("kv-bytes", 0, kNonNegative);
  e.max_batch_tokens = args.get_int("max-batch-tokens", e.max_batch_tokens, IntRange{1, kMaxDimension});
  e.max_running = args.get_int("max-running", e.max_running, IntRange{1, kMaxBatchRows});
  e.max_queue = args.get_int("max-queue", e.max_queue, IntRange{0, kMaxBatchRows});
  e.prefix_cache = !args.flag("no-prefix-cache");
  e.context = args.get_int("context", 0, IntRange{0, kMaxDimension});
  const std::string model_name =
      args.get("model-name", fs::absolute(source.dir).lexically_normal().filename().string());
  const int64_t max_choices = args.get_int("max-choices", 16, IntRange{1, 1024});
  backends::Backend& device = device_option(args);
  DraftOption draft = draft_option(args);
  const auto tool_parser = args.get("tool-parser");
  const std::string reasoning_parser = args.get("reasoning-parser", "auto");
  const int64_t max_tool_calls = args.get_int("max-tool-calls", 8, IntRange{1, 64});
  args.finish();
  std::optional<serve::ToolFormat> tool_format;
  if (tool_parser) {
    tool_format = serve::tool_format_named(*tool_parser);
    DIFFTX_CHECK(tool_format.has_value(), "--tool-parser '", *tool_parser, "' is not one of ",
                 serve::tool_format_names(", "));
  }
  DIFFTX_CHECK(reasoning_parser == "auto" || reasoning_parser == "none" || serve::reasoning_markers_named(reasoning_parser),
               "--reasoning-parser '", reasoning_parser, "' is not one of auto, none, ",
               serve::reasoning_format_names(", "));
  DIFFTX_CHECK(!model_name.empty(), "--model-name must not be empty");

  return serve::run_server(o, [&]() {
    auto m = std::make_unique<serve::ServedModel>();
    m->model = std::make_unique<model::Model>(load_engine_model(source.dir, device));
    m->tokenizer =
        std::make_unique<data::Tokenizer>(infer::load_model_tokenizer(source.dir, source.tokenizer, m->model->config));
    const data::GenerationDefaults defaults = data::read_generation_defaults(source.dir);
    m->frame = data::prompt_frame(*m->tokenizer, defaults);
    for (int32_t id : m->frame.stop)
      DIFFTX_CHECK(id < m->model->config.vocab_size, source.dir.string(), ": eos_token_id ", id,
                   " is outside the vocabulary of ", m->model->config.vocab_size);
    draft.load(device, m->tokenizer.get(), *m->model);
    infer::EngineOptions engine_options = e;
    engine_options.sample_vocab = m->tokenizer->vocab_size();
    draft.apply(engine_options);
    m->draft_model = draft.model;
    m->engine = std::make_unique<infer::Engine>(*m->model, m->tokenizer.get(), engine_options);
    m->limits.model_name = model_name;
    m->limits.vocab_size = m->tokenizer->vocab_size();
    m->limits.context = m->engine->context();
    m->limits.default_temperature = defaults.temperature;
    m->limits.default_top_p = defaults.top_p;
    m->limits.default_top_k = defaults.top_k;
    m->limits.default_min_p = defaults.min_p;
    m->limits.default_repetition_penalty = defaults.repetition_penalty;
    m->limits.max_choices = max_choices;
    m->limits.draft_model = draft.model != nullptr;
    m->output.tokenizer = m->tokenizer.get();
    m->output.vocabulary = grammar::TokenVocabulary::of(*m->tokenizer, m->tokenizer->vocab_size());
    m->output.tool_format = tool_format ? serve::tool_format_for_tokenizer(*tool_format, *m->tokenizer) : tool_format;
    m->output.max_tool_calls = max_tool_calls;
    m->output.reasoning = serve::reasoning_markers_named(reasoning_parser);  // auto and none: nullopt
    if (auto tmpl = chat::load_chat_template(source.dir, source.chat_template)) {
      if (!m->output.tool_format) m->output.tool_format = serve::tool_format_of_template(tmpl->tools_source());
      if (reasoning_parser == "auto")
        m->output.reasoning = serve::reasoning_markers_of_model(tmpl->source, *m->tokenizer);
      m->chat_stop = serve::chat_stop_ids(*tmpl, *m->tokenizer);
      m->render_chat = serve::chat_renderer(std::move(*tmpl));
    }
    return m;
  });
}

}  // namespace

DIFFTX_COMMAND("serve", "an OpenAI-compatible HTTP server with continuous batching and a chat page",
               "  --model DIR            a model directory with its tokenizer (as for generate)\n"
               DIFFTX_DEVICE_HELP
               "  --host ADDR            address to listen on (default 127.0.0.1)\n"
               "  --port N               port (default 8080; 0: any free port, printed)\n"
               "  --model-name NAME      the model's id in /v1/models and responses (default: the directory's name)\n"
               "  --chat-template FILE   the Jinja chat template for /v1/chat/completions (default: the model's own,\n"
               "                         from tokenizer_config.json or chat_template.jinja; without one, chat is a 400)\n"
               "  --api-key KEY          require 'Authorization: Bearer KEY' on every endpoint but /health and /\n"
               "                         (default: the DIFFTX_API_KEY environment variable; none: no key)\n"
               "  --kv-dtype f32|bf16|int8  KV pool storage (default bf16)\n"
               "  --kv-tokens N          KV pool capacity in tokens (default: from --kv-bytes)\n"
               "  --kv-bytes N           KV pool capacity in bytes (default: max_position_embeddings tokens, <= 1 GiB)\n"
               "  --max-batch-tokens N   rows per engine step: decode rows plus prompt chunks (default 512)\n"
               "  --max-running N        sequences decoding at once (default 64)\n"
               "  --max-queue N          requests waiting beyond those; more get 503 (default 1024)\n"
               "  --context T            most tokens of a sequence, prompt and reply (default max_position_embeddings)\n"
               "  --no-prefix-cache      do not reuse the KV blocks of matching prompt prefixes\n"
               DIFFTX_DRAFT_HELP
               "                        (a request may set 'draft': none|ngram|model and 'draft_tokens')\n"
               "  --max-choices N        n times prompts a request may ask for (default 16)\n"
               "  --tool-parser NAME     how the model writes tool calls: hermes (<tool_call> blocks: Hermes, Qwen),\n"
               "                         llama3_json (Llama 3.x JSON calls), mistral ([TOOL_CALLS][...]; as\n"
               "                         mistral_v11 where the tokenizer has [ARGS]), mistral_v11\n"
               "                         ([TOOL_CALLS]NAME[ARGS]{...}: Mistral Small 3.2, Magistral, Devstral),\n"
               "                         pythonic ([f(x=1)]: Llama 3.2 / 4, Gemma 3 pythonic), phi4_mini\n"
               "                         (functools[...]), granite (<|tool_call|>[...]), deepseek_v3 (DeepSeek\n"
               "                         V3's tool-call tokens),\n"
               "                         deepseek_v31 (DeepSeek V3.1's), qwen3_coder (<tool_call> blocks of\n"
               "                         <function=...> and <parameter=...>: Qwen3-Coder), glm45 or glm47\n"
               "                         (<tool_call> blocks of <arg_key> and <arg_value>: GLM-4.5 to 4.7),\n"
               "                         kimi_k2 (Kimi K2's tool-call tokens), internlm (<|action_start|><|plugin|>),\n"
               "                         hunyuan_a13b (<tool_calls>[...]), minimax (<tool_calls>, a call a line:\n"
               "                         MiniMax-M1), xlam (a JSON list: xLAM), granite_20b_fc or granite-20b-fc\n"
               "                         (<function_call>), nemotron_json (<TOOLCALL>[...]), seed_oss\n"
               "                         (<seed:tool_call> blocks of <function=...> and <parameter=...>: Seed-OSS);\n"
               "                         default: from the chat template's text\n"
               "  --max-tool-calls N     calls in one turn where parallel_tool_calls allows several (default 8)\n"
               "  --reasoning-parser auto|none|think|mistral|seed_oss  reasoning blocks to reasoning_content:\n"
               "                         think (<think>...</think>; also deepseek_r1, qwen3, glm45), mistral\n"
               "                         ([THINK]...[/THINK]), seed_oss (<seed:think>...</seed:think>) always; auto:\n"
               "                         the markers the chat template has (default); none never\n"
               "  --responses-store-bytes N  memory for the Responses API's stored responses (store,\n"
               "                         previous_response_id, GET/DELETE /v1/responses/ID), and as much\n"
               "                         again for ended background runs' events, and again for the\n"
               "                         Conversations API's conversations (never dropped: a write that\n"
               "                         does not fit is refused); stored responses and events go oldest\n"
               "                         first (default 64 MiB; 0: none of them)\n"
               "  --max-body-bytes N     larger request bodies get 413 (default 8 MiB)\n"
               "  --max-connections N    connections served at once; more wait (default 128)\n"
               "  --read-timeout S       seconds a client has to send a request's header and body\n"
               "                         (after the 3 s a kept-alive connection may idle; default 30)\n"
               "  --grace S              on SIGINT/SIGTERM, seconds in-flight requests may finish (default 10)\n"
               "  --log-format text|json one line per request on stderr (default text)\n"
               "  --tokenizer NAME       use this tokenizer instead of the model directory's",
               run_serve);

}  // namespace difftx::cli
