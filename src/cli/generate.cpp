// `difftx generate`: sample text from a model directory, streaming it to stdout as it is made;
// prompt and decode rates go to stderr so that stdout is only the text.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "api/generation.h"
#include "cli/command.h"
#include "cli/device_option.h"
#include "cli/draft_option.h"
#include "cli/engine_model.h"
#include "cli/sampling_option.h"
#include "core/error.h"
#include "data/generation_defaults.h"
#include "grammar/json_grammar.h"
#include "grammar/token_vocabulary.h"
#include "infer/generate.h"
#include "infer/model_prompt.h"
#include "io/input_file.h"
#include "serve/output_constraint.h"
#include "serve/reasoning.h"

namespace difftx::cli {
namespace {

int run_generate(Args& args) {
  const ModelOptions m = model_options(args);
  const std::string prompt = args.require("prompt");
  const bool as_chat = args.flag("chat");
  const bool keep_special = args.flag("keep-special-tokens");
  // generation_config.json's defaults (Hugging Face directories), then the options.
  const data::GenerationDefaults defaults = data::read_generation_defaults(m.dir);
  infer::GenerateOptions o;
  o.spelling = OptionSpelling::flag;
  o.max_new_tokens = args.get_int("max-new-tokens", defaults.max_new_tokens.value_or(o.max_new_tokens),
                                  IntRange{0, kMaxDimension});
  o.context = args.get_int("context", 0, IntRange{0, kMaxDimension});
  o.kv = kv_dtype_option(args);
  o.sampling = sampling_options(args, defaults);
  backends::Backend& device = device_option(args);
  DraftOption draft = draft_option(args);
  const auto schema_file = args.get("json-schema");
  const auto grammar_file = args.get("grammar");
  const std::vector<std::string> stops = stop_strings_option(args);
  args.finish();
  DIFFTX_CHECK(!(schema_file && grammar_file), "--json-schema and --grammar cannot both be given");
  DIFFTX_CHECK(stops.empty() || !(schema_file || grammar_file), "--stop cannot be given with ",
               schema_file ? "--json-schema" : "--grammar", ": a stop string would cut the document short");
  o.stop_strings = stops;
  serve::OutputRequest rules;
  if (schema_file) rules.schema = grammar::parse_schema_text(io::read_whole_file(*schema_file), *schema_file);
  if (grammar_file) rules.grammar = io::read_whole_file(*grammar_file);

  model::Model model = load_engine_model(m.dir, device);
  const data::Tokenizer tokenizer = infer::load_model_tokenizer(m.dir, m.tokenizer, model.config);
  draft.load(device, &tokenizer, model);
  draft.apply(o);
  const int64_t context = infer::sequence_context(o.context, model.config, o.spelling);
  // The prompt starts as a training document does (difftx: after an end-of-text token; Hugging
  // Face: with the tokenizer's BOS), and generation stops at every end-of-sequence id.
  infer::FramedPrompt framed;
  serve::ConstraintModel output;  // for --json-schema / --grammar
  output.tokenizer = &tokenizer;
  bool reasoning_open = false;
  if (as_chat) {  // the prompt as one user message through the chat template
    const chat::ChatTemplate tmpl = required_chat_template(m.dir, m.chat_template);
    const nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
    output.reasoning = serve::reasoning_markers_of_model(tmpl.source, tokenizer);
    // The special tokens the model writes are left out of its reply, as the server's chat
    // completions leave them out (skip_special_tokens), but for the reasoning block's markers.
    if (!keep_special) o.silent_tokens = api::skipped_special_tokens(tokenizer, &tmpl);
    reasoning_open = output.reasoning && serve::prompt_opens_reasoning(tmpl.render(messages, true),
                                                                       tmpl.render(messages, false), *output.reasoning);
    framed = api::frame_chat_prompt(tokenizer, defaults, tmpl, messages, model.config, m.dir.string());
  } else {
    DIFFTX_CHECK(!m.chat_template, "--chat-template needs --chat");
    framed = infer::frame_prompt(tokenizer, defaults, prompt, model.config, m.dir.string());
    // As the server's completions: every special token the model writes is left out.
    if (!keep_special) o.silent_tokens = api::skipped_special_tokens(tokenizer, nullptr);
  }
  const std::vector<int32_t>& ids = framed.ids;
  DIFFTX_CHECK(static_cast<int64_t>(ids.size()) <= context, "the prompt is ", ids.size(),
               " tokens (with the leading ", framed.prefix, "), longer than the context of ", context, " tokens");
  o.sample_vocab = tokenizer.vocab_size();
  check_logit_bias(o.sampling, o.sample_vocab);
  o.stop_tokens = framed.stop;
  if (rules.schema || rules.grammar) {  // after a reasoning block the prompt left open, if any
    output.vocabulary = grammar::TokenVocabulary::of(tokenizer, tokenizer.vocab_size());
    o.constraint = serve::ConstraintCache().get(output, rules, reasoning_open);
  }

  if (!as_chat) {  // a continuation follows its prompt; a chat reply stands alone
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  }
  o.tokenizer = &tokenizer;
  const infer::GenerateResult r = infer::generate(model, ids, o, [](const infer::TokenEvent& e) {
    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    std::fflush(stdout);
  });
  std::fputs("\n", stdout);
  std::fflush(stdout);
  std::string drafted;
  if (o.draft != infer::DraftMode::none)
    drafted = concat(" | draft ", infer::draft_mode_name(o.draft), ": ", r.draft_accepted, " of ", r.draft_tokens,
                     " drafted tokens accepted");
  std::fprintf(stderr, "prompt: %lld tokens in %.3f s (%.1f tok/s) | decode: %lld tokens in %.3f s (%.1f tok/s)%s%s\n",
               (long long)r.prompt_tokens, r.prefill_seconds, r.prompt_tokens / std::max(r.prefill_seconds, 1e-9),
               (long long)r.decode_steps, r.decode_seconds, r.decode_steps / std::max(r.decode_seconds, 1e-9),
               drafted.c_str(),
               !r.stopped_at_stop_token ? (r.context_full ? " | stopped: context full" : "")
               : stops.empty()          ? " | stopped at end of text"
                                        : " | stopped at end of text or --stop");
  // The engine's error (a grammar's limit reached mid-reply, say) is the command's.
  if (r.finish == infer::FinishReason::error) fail("generation failed: ", r.error);
  // A constrained reply cut short is no document (stdout holds what was written): an error.
  if ((rules.schema || rules.grammar) && !r.stopped_at_stop_token)
    fail(schema_file ? "--json-schema" : "--grammar", ": the reply is incomplete: ",
         r.context_full ? concat("the context of ", context, " tokens filled")
                        : concat("--max-new-tokens ", o.max_new_tokens, " was reached"),
         " before the ", schema_file ? "JSON document" : "grammar's text", " was complete");
  return 0;
}

}  // namespace

DIFFTX_COMMAND("generate", "generate text from a model directory (KV-cache decoding)",
               "  --model DIR           a model directory with its tokenizer (a difftx train checkpoint; a\n"
               "                        tokenizer.json with config.json / generation_config.json, whose\n"
               "                        eos_token_id and sampling defaults apply unless options override them)\n"
               DIFFTX_DEVICE_HELP
               "  --prompt TEXT         the text to continue (echoed, then the continuation streams, without the\n"
               "                        special tokens the model writes, as serve's skip_special_tokens)\n"
               "  --chat                the prompt is one user message, rendered through the model's chat template\n"
               "                        (tokenizer_config.json); the reply streams, ending at the template's EOS,\n"
               "                        without the special tokens the model writes but its reasoning markers\n"
               "  --chat-template FILE  with --chat: this Jinja template instead of the model's\n"
               "  --keep-special-tokens print the special tokens the model writes (<|im_start|>, reserved tokens)\n"
               "                        as text (serve's skip_special_tokens: false)\n"
               "  --max-new-tokens N    tokens to generate at most (default 128); stops early at end of text / EOS\n"
               "  --temperature X       0 is greedy and deterministic (default 0.8)\n"
               "  --top-k K             sample from the K most likely tokens (default 0: all)\n"
               "  --top-p P             sample from the most likely tokens holding P of the mass (default 1: all)\n"
               DIFFTX_SAMPLING_HELP
               "  --seed S              sampling seed (default 1); the same seed gives the same text\n"
               "  --logit-bias ID=BIAS[,ID=BIAS...]  add BIAS (in [-100, 100]) to token ID's logit, each ID once\n"
               "                        (OpenAI's logit_bias: -100 bans a token, +100 all but forces it)\n"
               "  --json-schema FILE    the reply is a JSON document that validates against this JSON Schema\n"
               "                        (docs/STRUCTURED_OUTPUT.md: the keywords enforced); ends where it is complete;\n"
               "                        cut short by --max-new-tokens or the context, it is an error (exit status 1)\n"
               "  --grammar FILE        the reply follows this GBNF grammar (cut short: an error, as --json-schema)\n"
               "  --context T           KV cache capacity in tokens (default max_position_embeddings)\n"
               "  --kv-dtype f32|bf16|int8  how the KV cache stores keys and values (default bf16: half of F32;\n"
               "                        int8: a quarter, plus a scale per head row)\n"
               DIFFTX_DRAFT_HELP
               "  --tokenizer NAME      use this tokenizer instead of the model directory's",
               run_generate);

}  // namespace difftx::cli
