// `difftx bench infer`: prefill and decode tokens/s per variant of the small and base presets
// at contexts 512 and 4096 (random weights), the V2 / baseline decode ratio at the same kv
// heads, and split-KV single-query attention on a long one-kv-head cache.
//
// `--model DIR ...` instead times model directories of any format (e.g. a Hugging Face
// checkpoint): load time, resident memory, prefill of --prompt tokens and 128 decode steps.
//
// Per (preset, variant, context C): prefill C - 64 tokens, then 64 decode steps (greedy, through
// the engine as `difftx generate` runs), so decoding runs at a cache of about C tokens; best of
// --repeats after a warm-up. Decode GB/s counts
// the bytes one step must read: every weight matrix once (the LM head included) and the cache.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "benches.h"
#include "cli/device_option.h"
#include "cli/draft_option.h"
#include "data/generation_defaults.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/threading.h"
#include "core/timer.h"
#include "kernels/attention/decode_attention.h"
#include "infer/generate.h"
#include "infer/kv_pool.h"
#include "infer/model_prompt.h"
#include "io/input_file.h"
#include "measure.h"
#include "model/model.h"
#include "model/model_io.h"
#include "model/storage_plan.h"
#include "source_dir.h"

namespace difftx::bench {

using kernels::KvStorage;
using model::Model;

namespace {

namespace fs = std::filesystem;
constexpr int64_t kDecodeSteps = 64;

struct InferRate {
  double prefill_tok_s = 0, decode_tok_s = 0;
  int64_t draft_tokens = 0, draft_accepted = 0;  // of the last run (the same every run: greedy)
  double decode_cpu_tok_s = 0;  // per CPU second of the process: what a one-thread run gets when
                                // other processes share the cores (the wall rate then drops)
};

// One timed run: prefill `prompt` tokens, then `steps` decode steps; keeps the best rates seen.
void time_inference(const Model& model, const std::vector<int32_t>& tokens, int64_t prompt, int64_t steps, KvStorage kv,
                    InferRate& best, const cli::DraftOption* draft = nullptr) {
  infer::GenerateOptions o;
  if (draft) draft->apply(o);
  o.sampling.temperature = 0;
  o.max_new_tokens = steps + 1;  // the first token comes from the prefill
  o.kv = kv;
  double prefill_cpu = 0;
  const std::span<const int32_t> ids(tokens.data(), static_cast<size_t>(prompt));
  const infer::GenerateResult r = infer::generate(model, ids, o, [&](const infer::TokenEvent&) {
    if (prefill_cpu == 0) prefill_cpu = process_cpu_seconds();
  });
  best.prefill_tok_s = std::max(best.prefill_tok_s, prompt / r.prefill_seconds);
  best.draft_tokens = r.draft_tokens, best.draft_accepted = r.draft_accepted;
  if (r.decode_steps == 0) return;
  best.decode_tok_s = std::max(best.decode_tok_s, r.decode_steps / r.decode_seconds);
  best.decode_cpu_tok_s = std::max(best.decode_cpu_tok_s, r.decode_steps / (process_cpu_seconds() - prefill_cpu));
}

void bench_split_kv(bool json) {
  // One kv head, 16K keys: without splitting, one thread would read the whole cache.
  const kernels::DecodeAttentionDims dims{{kernels::AttentionKind::baseline, 8, 1, 64}, 16384};
  Rng rng(5);
  std::vector<float> q(8 * 64), keys(dims.capacity * 64), values(dims.capacity * 64), out(8 * 64);
  for (auto* v : {&q, &keys, &values})
    for (auto& x : *v) x = static_cast<float>(rng.uniform(-1, 1));
  for (int64_t max_chunks : {int64_t{1}, int64_t{0}}) {
    kernels::DecodeAttentionScratch scratch(dims, max_chunks);
    const void* key_page = keys.data();
    const void* value_page = values.data();
    const kernels::DecodeAttentionRow row{q.data(), dims.capacity, kernels::KvPages{&key_page, &value_page}, nullptr,
                                          out.data()};
    const Timing t = measure([&] { backends::cpu::kernels().decode_attention_rows(dims, {&row, 1}, scratch); });
    const double gb = 2.0 * dims.capacity * 64 * 4 / 1e9;
    print_row(json, {str("op", "decode_attention"), str("case", "baseline H=8 Hkv=1 d=64 cache=16384"),
                     num("chunks", kernels::decode_attention_chunks(scratch, dims.capacity), 0),
                     num("us", t.median_ms * 1e3, 1), num("gb_s", gb / (t.median_ms * 1e-3), 1)});
  }
}

// Resident memory of this process now (VmRSS), in bytes.
double resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return 1024.0 * std::stod(line.substr(6));
  return 0;
}

// What a sequence of `length` tokens holds of the cache, per token (the engine's blocks of 32
// tokens; a hybrid stack's windows and Mamba state included).
double kv_bytes_per_token(const Model& model, KvStorage kv, int64_t length) {
  return static_cast<double>(infer::KvPool::sequence_bytes(model.config, kv, 32, length)) / static_cast<double>(length);
}

// Bytes a decode step reads at a cache of `length` tokens: every weight as the model holds it,
// except an untied embedding (one row per token), and the cache.
double decode_bytes(const Model& model, KvStorage kv, int64_t length) {
  const model::ParamInfo& embed = *model.table.find("model.embed_tokens.weight");
  const double unread = model.config.tie_word_embeddings ? 0.0 : static_cast<double>(embed.bytes());
  return static_cast<double>(model.weight_bytes()) - unread +
         kv_bytes_per_token(model, kv, length) * static_cast<double>(length);
}

// The type holding most of a model's weight bytes ("q8_0", ...).
std::string main_weight_type(const Model& model) {
  std::map<std::string, int64_t> bytes;
  for (const model::ParamInfo& p : model.table.params()) bytes[kernels::weight_type_name(p.type)] += p.bytes();
  return std::max_element(bytes.begin(), bytes.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
}

// Model directories of any format, matrices as stored (or converted to `dtype` in memory): each
// one's load time (the conversion included) and resident memory (weight panels built, as
// `difftx generate` holds it), a warm-up (16 tokens and 4 steps), then per repeat a prefill of
// `prompt` random tokens (or the prompt file's) and `steps` decode steps after it, with the draft
// too where one is given; the models interleaved within each repeat (load from other processes
// falls on all alike); best of the repeats, and each model's rates over the first's.
void bench_model_dirs(const std::vector<std::string>& dirs, backends::Backend& device, int64_t prompt, int64_t steps,
                      int repeats, KvStorage kv, std::optional<kernels::WeightType> dtype, bool json,
                      cli::DraftOption& draft, const std::optional<std::string>& prompt_file) {
  std::vector<Model> models;
  std::vector<double> load_s, rss_gb;
  models.reserve(dirs.size());
  for (const std::string& dir : dirs) {
    const double rss_before = resident_bytes();
    Timer timer;
    models.push_back([&] {  // the loaded model goes before the resident memory is read
      Model loaded = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
      return dtype ? model::convert_matrices(loaded, model::storage_plan(loaded.config, *dtype)) : std::move(loaded);
    }());
    models.back().move_to(device);
    models.back().engine_matrices_only();  // as `difftx generate` holds it
    load_s.push_back(timer.seconds());
    rss_gb.push_back((resident_bytes() - rss_before) / 1e9);
    const model::ModelConfig& c = models.back().config;
    DIFFTX_CHECK(prompt + steps <= c.max_position_embeddings, dir, ": --prompt ", prompt, " + --new ", steps,
                 " tokens exceed max_position_embeddings ", c.max_position_embeddings);
  }
  Rng rng(4);
  std::vector<int32_t> tokens(prompt + steps);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(1 << 30));
  std::vector<std::vector<int32_t>> inputs;  // the same draw in every model's vocabulary
  for (const Model& m : models) {
    inputs.emplace_back(tokens);
    for (auto& t : inputs.back()) t %= static_cast<int32_t>(m.config.vocab_size);
  }
  if (prompt_file) {  // the file's text through the first model's tokenizer, as `difftx generate` frames it
    const data::Tokenizer tokenizer = infer::load_model_tokenizer(dirs[0], std::nullopt, models[0].config);
    const infer::FramedPrompt framed =
        infer::frame_prompt(tokenizer, data::read_generation_defaults(dirs[0]), io::read_whole_file(*prompt_file),
                            models[0].config, dirs[0]);
    prompt = static_cast<int64_t>(framed.ids.size());
    for (auto& input : inputs) input = framed.ids;
    DIFFTX_CHECK(prompt + steps <= models[0].config.max_position_embeddings, *prompt_file, ": its ", prompt,
                 " tokens + --new ", steps, " exceed max_position_embeddings");
    draft.load(device, &tokenizer, models[0]);
  } else {
    draft.load(device, nullptr, models[0]);
  }
  const bool drafting = draft.mode != infer::DraftMode::none;
  std::vector<InferRate> rates(models.size()), warm_up(models.size()), drafted(models.size());
  for (size_t i = 0; i < models.size(); ++i) {  // warm-up, as llama.cpp's peer does: thread pools, page faults
    time_inference(models[i], inputs[i], std::min<int64_t>(prompt, 16), std::min<int64_t>(steps, 4), kv, warm_up[i]);
    if (drafting) time_inference(models[i], inputs[i], prompt, std::min<int64_t>(steps, 4), kv, warm_up[i], &draft);
  }
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < models.size(); ++i) {
      time_inference(models[i], inputs[i], prompt, steps, kv, rates[i]);
      if (drafting) time_inference(models[i], inputs[i], prompt, steps, kv, drafted[i], &draft);
    }
  for (size_t i = 0; i < models.size(); ++i) {
    const Model& model = models[i];
    const model::ModelConfig& c = model.config;
    print_row(json, {str("op", "infer_model"), str("model", dirs[i]),
                     str("variant", c.hybrid ? "hybrid" : kernels::attention_kind_name(c.attention)),
                     str("weights", main_weight_type(model)), num("weight_gb", model.weight_bytes() / 1e9, 2),
                     num("params_m", c.total_parameters() / 1e6, 1), num("load_s", load_s[i], 1),
                     num("rss_gb", rss_gb[i], 2), num("prompt", prompt, 0), num("new", steps, 0),
                     num("prefill_tok_s", rates[i].prefill_tok_s, 1), num("decode_tok_s", rates[i].decode_tok_s, 2),
                     num("decode_cpu_tok_s", rates[i].decode_cpu_tok_s, 2), str("kv", kernels::kv_storage_name(kv)),
                     num("kv_bytes_per_token", kv_bytes_per_token(model, kv, prompt + steps), 0),
                     num("decode_gb_s", decode_bytes(model, kv, prompt + steps) * rates[i].decode_tok_s / 1e9, 1),
                     num("decode_over_first", rates[i].decode_tok_s / rates[0].decode_tok_s, 3),
                     num("prefill_over_first", rates[i].prefill_tok_s / rates[0].prefill_tok_s, 3)});
    if (!drafting) continue;
    const InferRate& d = drafted[i];
    print_row(json, {str("op", "infer_model_draft"), str("model", dirs[i]),
                     str("draft", infer::draft_mode_name(draft.mode)),
                     str("draft_model", draft.mode == infer::DraftMode::model ? draft.spec : ""),
                     num("draft_tokens_max", draft.tokens, 0),
                     num("prompt", prompt, 0), num("new", steps, 0), num("decode_tok_s", d.decode_tok_s, 2),
                     num("no_draft_decode_tok_s", rates[i].decode_tok_s, 2),
                     num("speedup", d.decode_tok_s / rates[i].decode_tok_s, 3), num("drafted", d.draft_tokens, 0),
                     num("accepted", d.draft_accepted, 0),
                     num("acceptance", d.draft_tokens ? static_cast<double>(d.draft_accepted) / d.draft_tokens : 0,
                         3)});
  }
}

}  // namespace

int bench_infer(cli::Args& args) {
  const bool json = args.flag("json");
  const bool quick = args.flag("quick");
  if (const auto models = args.list("model"); !models.empty()) {
    const int64_t prompt = args.get_int("prompt", 512, cli::IntRange{1, int64_t{1} << 20});
    const int64_t steps = args.get_int("new", 2 * kDecodeSteps, cli::IntRange{1, int64_t{1} << 20});
    const int repeats = static_cast<int>(args.get_int("repeats", 1, cli::IntRange{1, 100}));
    const KvStorage kv = kernels::parse_kv_storage(args.get("kv-dtype", "bf16"));
    const auto dtype_name = args.get("dtype");
    const std::optional<kernels::WeightType> dtype =
        dtype_name ? std::optional(kernels::parse_weight_type(*dtype_name)) : std::nullopt;
    backends::Backend& device = cli::device_option(args);
    cli::DraftOption draft = cli::draft_option(args);
    const auto prompt_file = args.get("prompt-file");
    args.finish();
    print_row(json, {str("op", "setup"), str("device", device.info().name), num("threads", thread_count(), 0)});
    bench_model_dirs(models, device, prompt, steps, repeats, kv, dtype, json, draft, prompt_file);
    return 0;
  }
  const std::string presets_arg = args.get("preset", quick ? "small" : "small,base");
  const auto contexts = args.get_int_list("contexts", quick ? "512" : "512,4096", cli::kSequenceLength);
  const int repeats = static_cast<int>(args.get_int("repeats", 2, cli::IntRange{1, 1000}));
  args.finish();
  DIFFTX_CHECK(repeats >= 1, "--repeats must be positive");
  for (int64_t c : contexts) DIFFTX_CHECK(c > kDecodeSteps, "--contexts: ", c, " must exceed ", kDecodeSteps);

  print_row(json, {str("op", "setup"), num("threads", thread_count(), 0), num("decode_steps", kDecodeSteps, 0),
                   num("repeats", repeats, 0)});
  std::stringstream presets(presets_arg);
  std::string preset;
  const char* variants[] = {"baseline", "diff", "diff2"};
  while (std::getline(presets, preset, ',')) {
    std::vector<Model> models;
    for (const char* variant : variants) {
      model::ModelConfig config =
          model::config_from_file((fs::path(DIFFTX_SOURCE_DIR) / "configs" / preset / (std::string(variant) + ".json")).string());
      // RoPE has no learned positions, so random-weight models may run past the preset's limit.
      config.max_position_embeddings = std::max(config.max_position_embeddings, *std::max_element(contexts.begin(), contexts.end()));
      models.emplace_back(config);
      model::init_parameters(config, models.back().table, models.back().host_weights(), 1);
    }
    DIFFTX_CHECK(models[2].config.num_key_value_heads == models[0].config.num_key_value_heads, "preset ", preset,
                 ": diff2 and baseline kv heads differ");
    for (int64_t context : contexts) {
      Rng rng(4);
      std::vector<int32_t> tokens(context);
      for (auto& t : tokens) t = static_cast<int32_t>(rng.below(models[0].config.vocab_size));
      InferRate rates[3], warm_up[3];
      for (int v = 0; v < 3; ++v)  // warm-up: thread pools, page faults
        time_inference(models[v], tokens, 64, 4, KvStorage::f32, warm_up[v]);
      // Variants interleaved within each repeat, so that load from other processes on this
      // shared machine falls on all of them alike; best of the repeats.
      for (int r = 0; r < repeats; ++r)
        for (int v = 0; v < 3; ++v)
          time_inference(models[v], tokens, context - kDecodeSteps, kDecodeSteps, KvStorage::f32, rates[v]);
      for (int v = 0; v < 3; ++v) {
        const model::ModelConfig& config = models[v].config;
        print_row(json, {str("op", "infer"), str("preset", preset), str("variant", variants[v]), num("context", context, 0),
                         num("params_m", config.total_parameters() / 1e6, 2), num("kv_heads", config.num_key_value_heads, 0),
                         num("prefill_tok_s", rates[v].prefill_tok_s, 0), num("decode_tok_s", rates[v].decode_tok_s, 1),
                         num("decode_cpu_tok_s", rates[v].decode_cpu_tok_s, 1),
                         num("decode_gb_s", decode_bytes(models[v], KvStorage::f32, context) * rates[v].decode_tok_s / 1e9, 1)});
      }
      for (int v : {2, 1})
        print_row(json, {str("op", "ratio"), str("preset", preset), num("context", context, 0),
                         str("what", std::string(variants[v]) + "_decode_over_baseline"),
                         num("value", rates[v].decode_tok_s / rates[0].decode_tok_s, 3),
                         num("cpu_time_value", rates[v].decode_cpu_tok_s / rates[0].decode_cpu_tok_s, 3)});
    }
  }
  bench_split_kv(json);
  return 0;
}

}  // namespace difftx::bench
