// `difftx bench serve --model DIR --concurrency 1,4,16,64 --prompt P --new G [--shared-prefix N]`:
// N streams at once on one engine (infer/engine.h), each a P-token prompt (random tokens, the
// first N shared by all streams) and G greedy new tokens. Per concurrency: aggregate generated
// tokens/s over the whole run, the decode-phase rate (tokens generated while every stream was
// past its first token and none had finished, over that window), time to first token and
// inter-token latency p50/p99, the KV pool's peak use and the prefix-cache hit rate. A warm-up
// run (1 stream, 16 tokens) comes first.
// With --json-schema FILE --tokenizer NAME, every concurrency runs unconstrained and with every
// stream constrained to the schema (grammar/constraint.h; the tokenizer gives the tokens' bytes),
// alternating, --pairs times: the cost of the token masks, also as constraint_s, the time the
// constraints themselves took in the run (run_s). With --draft, every run again with the draft
// (constrained ones too: the drafts keep to the schema's mask).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "benches.h"
#include "cli/device_option.h"
#include "cli/draft_option.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/threading.h"
#include "data/tokenizer_files.h"
#include "grammar/constraint.h"
#include "infer/engine.h"
#include "infer/kv_cache_manager.h"
#include "infer/kv_pool.h"
#include "grammar/json_grammar.h"
#include "io/input_file.h"
#include "measure.h"
#include "model/model_io.h"

namespace difftx::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = p * (static_cast<double>(v.size()) - 1);
  const size_t lo = static_cast<size_t>(std::floor(at)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// A constraint source whose constraints add the time they take (allowed, accept, done) to a
// total: how much of a run the token masks cost, whatever else the machine is doing.
class TimedConstraintSource : public infer::TokenConstraintSource {
 public:
  explicit TimedConstraintSource(std::shared_ptr<const infer::TokenConstraintSource> inner)
      : inner_(std::move(inner)) {}
  int64_t vocab_size() const override { return inner_->vocab_size(); }
  std::unique_ptr<infer::TokenConstraint> start(std::span<const int32_t> stop_tokens) const override {
    return std::make_unique<Timed>(inner_->start(stop_tokens), seconds_);
  }
  double seconds() const { return *seconds_; }

 private:
  class Timed : public infer::TokenConstraint {
    template <class F>
    auto timed(F f) const {
      const auto start = Clock::now();
      auto out = f();
      *total_ += std::chrono::duration<double>(Clock::now() - start).count();
      return out;
    }

   public:
    Timed(std::unique_ptr<infer::TokenConstraint> inner, std::shared_ptr<double> total) : inner_(std::move(inner)), total_(total) {}
    const uint64_t* allowed() override { return timed([&] { return inner_->allowed(); }); }
    void accept(int32_t id) override {
      timed([&] {
        inner_->accept(id);
        return 0;
      });
    }
    bool done() const override { return timed([&] { return inner_->done(); }); }
    std::unique_ptr<infer::TokenConstraint> clone() const override {
      return timed([&] { return std::make_unique<Timed>(inner_->clone(), total_); });
    }

   private:
    std::unique_ptr<infer::TokenConstraint> inner_;
    std::shared_ptr<double> total_;
  };
  std::shared_ptr<const infer::TokenConstraintSource> inner_;
  std::shared_ptr<double> seconds_ = std::make_shared<double>(0);  // the engine's thread only
};

struct ServeResult {
  double aggregate_tok_s = 0, decode_tok_s = 0;
  double seconds = 0;  // the whole run
  double ttft_p50 = 0, ttft_p99 = 0, itl_p50 = 0, itl_p99 = 0;
  int64_t peak_blocks = 0, blocks = 0;
  double prefix_hit_rate = 0;
  int64_t draft_tokens = 0, draft_accepted = 0;
};

ServeResult run_streams(const model::Model& model, const infer::EngineOptions& o, int64_t streams, int64_t prompt,
                        int64_t shared, int64_t new_tokens, uint64_t seed,
                        std::shared_ptr<const infer::TokenConstraintSource> constraint = nullptr) {
  infer::Engine engine(model, nullptr, o);
  Rng rng(seed);
  std::vector<int32_t> prefix(shared);
  for (auto& t : prefix) t = static_cast<int32_t>(rng.below(model.config.vocab_size));
  std::vector<std::vector<Clock::time_point>> times(streams);
  for (int64_t i = 0; i < streams; ++i) {
    infer::Request r{prefix, {}, {}, {}};
    while (static_cast<int64_t>(r.prompt.size()) < prompt)
      r.prompt.push_back(static_cast<int32_t>(rng.below(model.config.vocab_size)));
    r.options.sampling.temperature = 0;
    r.options.max_new_tokens = new_tokens;
    r.options.constraint = constraint;
    r.on_event = [&times, i](const infer::TokenEvent& e) {
      if (e.id >= 0) times[i].push_back(Clock::now());
    };
    engine.submit(std::move(r));
  }
  const Clock::time_point start = Clock::now();
  ServeResult out;
  while (engine.step()) out.peak_blocks = std::max(out.peak_blocks, engine.stats().kv_blocks_used);
  const Clock::time_point end = Clock::now();
  out.seconds = seconds_between(start, end);
  const infer::EngineStats st = engine.stats();
  out.blocks = st.kv_blocks;
  out.prefix_hit_rate = st.prefix_hit_rate();
  out.draft_tokens = st.draft_tokens;
  out.draft_accepted = st.draft_accepted;
  std::vector<double> ttft, itl;
  Clock::time_point all_started = start, first_done = end;
  int64_t total = 0;
  for (const auto& t : times) {
    if (t.empty()) continue;
    total += static_cast<int64_t>(t.size());
    ttft.push_back(seconds_between(start, t.front()));
    for (size_t k = 1; k < t.size(); ++k) itl.push_back(seconds_between(t[k - 1], t[k]));
    all_started = std::max(all_started, t.front());
    first_done = std::min(first_done, t.back());
  }
  int64_t in_window = 0;
  for (const auto& t : times)
    for (const auto& when : t) in_window += when > all_started && when <= first_done;
  out.aggregate_tok_s = total / seconds_between(start, end);
  const double window = seconds_between(all_started, first_done);
  out.decode_tok_s = window > 0 ? in_window / window : 0;
  out.ttft_p50 = percentile(ttft, 0.5), out.ttft_p99 = percentile(ttft, 0.99);
  out.itl_p50 = percentile(itl, 0.5), out.itl_p99 = percentile(itl, 0.99);
  return out;
}

}  // namespace

int bench_serve(cli::Args& args) {
  const bool json = args.flag("json");
  const std::string dir = args.require("model");
  const auto concurrency = args.get_int_list("concurrency", "1,4,16,64", cli::IntRange{1, 4096});
  const int64_t prompt = args.get_int("prompt", 128, cli::IntRange{1, int64_t{1} << 20});
  const int64_t new_tokens = args.get_int("new", 64, cli::IntRange{1, int64_t{1} << 20});
  const int64_t shared = args.get_int("shared-prefix", 0, cli::IntRange{0, int64_t{1} << 20});
  infer::EngineOptions o;
  o.spelling = OptionSpelling::flag;
  o.kv = kernels::parse_kv_storage(args.get("kv-dtype", "bf16"));
  o.max_batch_tokens = args.get_int("max-batch-tokens", o.max_batch_tokens, cli::IntRange{1, 1 << 20});
  const auto schema_file = args.get("json-schema");
  const auto tokenizer_name = args.get("tokenizer");
  const int64_t pairs = args.get_int("pairs", 2, cli::IntRange{1, 100});
  backends::Backend& device = cli::device_option(args);
  cli::DraftOption draft = cli::draft_option(args);
  args.finish();
  DIFFTX_CHECK(!schema_file || tokenizer_name, "--json-schema needs --tokenizer (the tokens' bytes)");
  DIFFTX_CHECK(shared <= prompt, "--shared-prefix ", shared, " exceeds --prompt ", prompt);
  model::Model model = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
  model.move_to(device);
  model.engine_matrices_only();  // as `difftx serve` holds it
  draft.load(device, nullptr, model);
  DIFFTX_CHECK(prompt + new_tokens <= model.config.max_position_embeddings, "--prompt + --new exceed the context");
  const int64_t most = *std::max_element(concurrency.begin(), concurrency.end());
  o.max_running = std::max<int64_t>(most, 1);
  // Room for `most` sequences of prompt + new tokens at once, each holding its blocks in every
  // cache group (a hybrid's sliding-window groups keep all of a short sequence's blocks).
  const int64_t per_sequence = infer::sequence_blocks(infer::kv_cache_groups(model.config),
                                                      prompt + new_tokens + o.kv_block_tokens, o.kv_block_tokens);
  o.kv_bytes = most * per_sequence * infer::KvPool::block_bytes(model.config, o.kv, o.kv_block_tokens);
  const std::string device_name = device.info().name;  // on every row, as rows travel alone (grep, run.sh)
  print_row(json, {str("op", "setup"), str("device", device_name), num("threads", thread_count(), 0),
                   str("model", dir), num("prompt", prompt, 0), num("new", new_tokens, 0),
                   num("shared_prefix", shared, 0), str("kv", kernels::kv_storage_name(o.kv))});
  std::shared_ptr<const infer::TokenConstraintSource> constraint;
  if (schema_file) {
    const data::Tokenizer tokenizer = data::load_tokenizer(*tokenizer_name);
    DIFFTX_CHECK(tokenizer.vocab_size() <= model.config.vocab_size, "the tokenizer's ", tokenizer.vocab_size(),
                 " tokens exceed the model's vocabulary of ", model.config.vocab_size);
    o.sample_vocab = tokenizer.vocab_size();
    constraint = std::make_shared<TimedConstraintSource>(
        grammar::json_schema_constraint(grammar::parse_schema_text(io::read_whole_file(*schema_file), *schema_file),
                                        grammar::TokenVocabulary::of(tokenizer, tokenizer.vocab_size())));
  }
  run_streams(model, o, 1, std::min<int64_t>(prompt, 16), 0, std::min<int64_t>(new_tokens, 16), 99);  // warm-up
  const auto timed = std::dynamic_pointer_cast<const TimedConstraintSource>(constraint);
  infer::EngineOptions drafted = o;  // with --draft: each run again with the draft
  draft.apply(drafted);
  const auto row = [&](int64_t n, const ServeResult& r, bool constrained, double constraint_seconds,
                       infer::DraftMode mode) {
    print_row(json, {str("op", "serve_bench"), str("device", device_name), num("concurrency", n, 0),
                     num("constrained", constrained, 0), str("draft", infer::draft_mode_name(mode)),
                     num("draft_tokens", r.draft_tokens, 0),
                     num("draft_acceptance",
                         r.draft_tokens ? static_cast<double>(r.draft_accepted) / r.draft_tokens : 0, 3),
                     num("constraint_s", constraint_seconds, 3), num("run_s", r.seconds, 3),
                     num("aggregate_tok_s", r.aggregate_tok_s, 2), num("decode_tok_s", r.decode_tok_s, 2),
                     num("ttft_p50_s", r.ttft_p50, 4), num("ttft_p99_s", r.ttft_p99, 4), num("itl_p50_s", r.itl_p50, 4),
                     num("itl_p99_s", r.itl_p99, 4), num("kv_peak_blocks", r.peak_blocks, 0),
                     num("kv_blocks", r.blocks, 0), num("prefix_hit_rate", r.prefix_hit_rate, 3)});
  };
  std::vector<const infer::EngineOptions*> engines = {&o};  // without the draft, then with it
  if (draft.mode != infer::DraftMode::none) engines.push_back(&drafted);
  for (int64_t n : concurrency)
    for (int64_t k = 0; k < (constraint ? pairs : 1); ++k)
      for (bool constrained : {false, true})
        for (const infer::EngineOptions* with : engines) {
          if (constrained && !constraint) continue;
          const double before = constrained ? timed->seconds() : 0;
          const ServeResult r = run_streams(model, *with, n, prompt, shared, new_tokens, static_cast<uint64_t>(n),
                                            constrained ? constraint : nullptr);
          row(n, r, constrained, constrained ? timed->seconds() - before : 0, with->draft);
        }
  return 0;
}

}  // namespace difftx::bench
