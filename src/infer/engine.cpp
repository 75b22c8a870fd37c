#include "infer/engine.h"

#include <algorithm>
#include <exception>
#include <deque>

#include "core/checked.h"
#include "core/enum_names.h"
#include "core/rng.h"
#include "data/tokenizer.h"
#include "infer/engine_state.h"

namespace difftx::infer {

const char* finish_reason_name(FinishReason reason) {
  static constexpr EnumName<FinishReason> names[] = {
      {FinishReason::none, "none"},           {FinishReason::stop, "stop"},   {FinishReason::length, "length"},
      {FinishReason::cancelled, "cancelled"}, {FinishReason::error, "error"}};
  return name_of(names, reason);
}

const char* draft_mode_name(DraftMode mode) {
  static constexpr EnumName<DraftMode> names[] = {
      {DraftMode::none, "none"}, {DraftMode::ngram, "ngram"}, {DraftMode::model, "model"}};
  return name_of(names, mode);
}

namespace {

constexpr int64_t kDefaultPoolBytes = int64_t{1} << 30;
constexpr uint64_t kDraftStream = 0x6472616674;  // "draft": the draft sampler's field of the request's seed

// An option's name in the engine's errors, as the options spell it.
std::string named(const EngineOptions& o, std::string_view field) { return option_name(field, o.spelling); }

int64_t pool_blocks(const model::Model& model, const EngineOptions& o) {
  const model::ModelConfig& c = model.config;
  const int64_t block_bytes = KvPool::block_bytes(c, o.kv, o.kv_block_tokens);
  if (o.kv_tokens > 0) return sequence_blocks(kv_cache_groups(c), o.kv_tokens, o.kv_block_tokens);
  if (o.kv_bytes > 0) {
    const int64_t blocks = o.kv_bytes / block_bytes;
    DIFFTX_CHECK(blocks >= 1, named(o, "kv_bytes"), " ", o.kv_bytes, " holds no KV block (one is ", block_bytes,
                 " bytes)");
    return blocks;
  }
  const int64_t for_context = sequence_blocks(kv_cache_groups(c), c.max_position_embeddings,
                                                    o.kv_block_tokens);
  const int64_t most = KvPool::max_blocks(*model.backend, c, o.kv, o.kv_block_tokens);
  return std::max<int64_t>(1, std::min({for_context, kDefaultPoolBytes / block_bytes, most}));
}

void check_options(const EngineOptions& o) {
  const std::string kv_tokens = named(o, "kv_tokens"), kv_bytes = named(o, "kv_bytes");
  DIFFTX_CHECK(o.kv_tokens >= 0 && o.kv_bytes >= 0, kv_tokens, " and ", kv_bytes, " must not be negative");
  // The CLI's bound, for the callers that skip it (the C API): sequence_blocks would overflow.
  DIFFTX_CHECK(o.kv_tokens <= kMaxCount, kv_tokens, " ", o.kv_tokens, " must be at most 2^40");
  DIFFTX_CHECK(o.max_batch_tokens >= 1 && o.max_batch_tokens <= (1 << 20), named(o, "max_batch_tokens"), " ",
               o.max_batch_tokens, " must be in [1, 1048576]");
  DIFFTX_CHECK(o.max_running >= 1 && o.max_running <= (1 << 16), named(o, "max_running"), " ", o.max_running,
               " must be in [1, 65536]");
  DIFFTX_CHECK(o.max_queue >= 0 && o.max_queue <= (1 << 24), named(o, "max_queue"), " ", o.max_queue,
               " must be in [0, 2^24]");
  DIFFTX_CHECK(o.sample_vocab >= 0, "sample_vocab ", o.sample_vocab, " must not be negative");
  DIFFTX_CHECK(o.draft_tokens >= 1 && o.draft_tokens <= kMaxDraftTokens, named(o, "draft_tokens"), " ", o.draft_tokens,
               " must be in [1, ", kMaxDraftTokens, "]");
  DIFFTX_CHECK(o.draft != DraftMode::model || o.draft_model, "draft mode `model` needs a draft model (",
               named(o, "draft"), ")");
}

// A draft model runs through BatchForward (model_drafter.h): docs/SPEC.md's decoder, whatever the target.
void check_draft_model(const model::Model& target, const EngineOptions& o) {
  if (!o.draft_model) return;
  const model::ModelConfig& d = o.draft_model->config;
  d.require_decoder(concat("a draft model (", named(o, "draft"), ")"));
  DIFFTX_CHECK(d.vocab_size == target.config.vocab_size, "the draft model's vocab_size ", d.vocab_size,
               " differs from the target's ", target.config.vocab_size, ": they must share the vocabulary");
}

}  // namespace

int64_t sequence_context(int64_t context, const model::ModelConfig& config, OptionSpelling spelling) {
  DIFFTX_CHECK(context >= 0 && context <= config.max_position_embeddings, option_name("context", spelling), " ",
               context, " must be in [1, max_position_embeddings = ", config.max_position_embeddings,
               "] (0: max_position_embeddings)");
  return context > 0 ? context : config.max_position_embeddings;
}

Engine::Engine(const model::Model& model, const data::Tokenizer* tokenizer, const EngineOptions& options)
    : Engine(model, tokenizer, options, nullptr) {}

Engine::Engine(const model::Model& model, const data::Tokenizer* tokenizer, const EngineOptions& options,
               StepForward forward)
    : model_(model), tokenizer_(tokenizer), options_(options) {
  check_options(options_);
  check_draft_model(model, options_);
  const model::ModelConfig& c = model.config;
  const int64_t limit = sequence_context(options_.context, c, options_.spelling);
  const int64_t blocks = pool_blocks(model, options_);
  const int64_t vocab = options_.sample_vocab > 0 ? options_.sample_vocab : c.vocab_size;
  DIFFTX_CHECK(vocab <= c.vocab_size, "sample_vocab ", vocab, " exceeds the model's vocab_size ", c.vocab_size);
  // The context: what the pool holds of one sequence alone (a preempted sequence always fits again).
  const int64_t held = sequence_tokens(kv_cache_groups(c), blocks, options_.kv_block_tokens, limit);
  DIFFTX_CHECK(held >= 1, "the KV pool's ", blocks, " blocks hold no token of this model's ",
               kv_cache_groups(c).size(), " cache groups; ask for more with ", named(options_, "kv_tokens"), " or ",
               named(options_, "kv_bytes"));
  state_ = std::make_unique<State>(model, tokenizer, options_, blocks, held, vocab, std::move(forward));
  state_->counters.kv_blocks = state_->kv.blocks();
  state_->counters.kv_block_tokens = options_.kv_block_tokens;
  state_->counters.prefix_cache = prefix_cache_name(state_->kv.prefix_cache());
  state_->stats = state_->counters;
}

Engine::~Engine() { stop(); }

int64_t Engine::context() const { return state_->context; }

Engine::RequestId Engine::submit(Request r) {
  const int64_t n = static_cast<int64_t>(r.prompt.size()), V = model_.config.vocab_size;
  DIFFTX_CHECK(n >= 1, "the prompt has no tokens");
  DIFFTX_CHECK(n <= state_->context, "the prompt is ", n, " tokens, longer than the context of ", state_->context,
               " tokens");
  for (int64_t i = 0; i < n; ++i)
    DIFFTX_CHECK(r.prompt[i] >= 0 && r.prompt[i] < V, "prompt token ", r.prompt[i], " at position ", i,
                 " is outside the vocabulary [0, ", V, ")");
  const RequestOptions& o = r.options;
  DIFFTX_CHECK(o.max_new_tokens >= 0, "max_new_tokens ", o.max_new_tokens, " must not be negative");
  DIFFTX_CHECK(o.top_logprobs >= 0 && o.top_logprobs <= kMaxTopLogprobs, "top_logprobs ", o.top_logprobs,
               " must be in [0, ", kMaxTopLogprobs, "]");
  if (o.prompt_logprobs) {
    DIFFTX_CHECK(*o.prompt_logprobs >= 0 && *o.prompt_logprobs <= kMaxTopLogprobs, "prompt_logprobs ",
                 *o.prompt_logprobs, " must be in [0, ", kMaxTopLogprobs, "]");
    for (int64_t i = 1; i < n; ++i)
      DIFFTX_CHECK(r.prompt[i] < state_->vocab, "prompt token ", r.prompt[i], " at position ", i,
                   " has no logprob: it is outside the ids the model draws [0, ", state_->vocab, ")");
  }
  DIFFTX_CHECK(o.min_tokens >= 0 && o.min_tokens <= o.max_new_tokens, "min_tokens ", o.min_tokens,
               " must be in [0, max_new_tokens ", o.max_new_tokens, "]");
  DIFFTX_CHECK(o.stop_strings.empty() || tokenizer_, "stop strings need the model's tokenizer");
  DIFFTX_CHECK(o.stop_strings.size() <= kMaxStopStrings, o.stop_strings.size(), " stop strings: at most ",
               kMaxStopStrings);
  for (const std::string& s : o.stop_strings) DIFFTX_CHECK(!s.empty(), "a stop string must not be empty");
  DIFFTX_CHECK(!o.reasoning || (!o.reasoning->markers.open.empty() && !o.reasoning->markers.close.empty()),
               "a reasoning block's markers must not be empty");
  for (int32_t id : o.stop_tokens)
    DIFFTX_CHECK(id >= 0 && id < V, "stop token ", id, " is outside the vocabulary [0, ", V, ")");
  DIFFTX_CHECK(o.bad_words.size() <= kMaxBadWords, o.bad_words.size(), " bad words: at most ", kMaxBadWords);
  for (const std::vector<int32_t>& word : o.bad_words) {
    DIFFTX_CHECK(!word.empty() && word.size() <= kMaxBadWordTokens, "a bad word of ", word.size(),
                 " tokens: each must have 1 to ", kMaxBadWordTokens);
    for (int32_t id : word)
      DIFFTX_CHECK(id >= 0 && id < V, "bad word token ", id, " is outside the vocabulary [0, ", V, ")");
  }
  DIFFTX_CHECK(std::is_sorted(o.silent_tokens.begin(), o.silent_tokens.end()), "silent_tokens must be ascending");
  DIFFTX_CHECK(!o.constraint || o.constraint->vocab_size() == state_->vocab, "the constraint covers ",
               o.constraint ? o.constraint->vocab_size() : 0, " token ids, but the engine draws from ", state_->vocab);
  for (int32_t id : o.forced)
    DIFFTX_CHECK(id >= 0 && id < state_->vocab, "forced token ", id, " is outside the vocabulary [0, ", state_->vocab, ")");
  const DraftMode draft = o.draft.value_or(options_.draft);
  DIFFTX_CHECK(draft != DraftMode::model || state_->model_drafter,
               "draft `model` was asked for, but the engine has no draft model (", named(options_, "draft"), ")");
  DIFFTX_CHECK(o.draft_tokens >= 0 && o.draft_tokens <= kMaxDraftTokens, "draft_tokens ", o.draft_tokens,
               " must be in [0, ", kMaxDraftTokens, "] (0: the engine's)");
  const int64_t draft_tokens = o.draft_tokens > 0 ? o.draft_tokens : options_.draft_tokens;
  std::lock_guard lock(mutex_);
  DIFFTX_CHECK(!stopping_, "the engine is stopping: no new requests");
  // The queue is what waits beyond the running slots free at the last step: requests that arrive
  // together while a slot is free are not refused for waiting on each other. (waiting counts the
  // incoming too.)
  const int64_t free_slots = std::max<int64_t>(0, options_.max_running - state_->stats.running);
  if (state_->stats.waiting >= options_.max_queue + free_slots)
    throw EngineFull(concat("the queue is full (", options_.max_queue, " requests waiting)"));
  const RequestId id = state_->next_id++;
  // The sampler checks its options.
  auto seq = std::make_unique<Sequence>(id, std::move(r), state_->vocab);
  seq->draft_mode = draft;
  seq->draft_tokens = draft_tokens;
  // A draft model proposes under the request's options where they change its choice: sampled,
  // biased or penalised (else the greedy proposal of ModelDrafter serves).
  const SamplingOptions& sampling = seq->request.options.sampling;
  if (draft == DraftMode::model && (sampling.temperature > 0 || !sampling.logit_bias.empty() || sampling.penalised())) {
    SamplingOptions drafting = sampling;
    // Its own stream of draws, unrelated to the target's (splitmix64's state is a counter: a seed
    // one step away would replay the target's draws one behind).
    drafting.seed = derive_rng(drafting.seed, {kDraftStream}).next_u64();
    seq->draft_sampler = std::make_unique<Sampler>(drafting, state_->vocab);
  }
  state_->incoming.push_back(std::move(seq));
  ++state_->stats.waiting;
  work_.notify_one();
  return id;
}

void Engine::cancel(RequestId id) {
  std::lock_guard lock(mutex_);
  // Only ids handed out, each once: an id not yet issued would cancel the request that later gets
  // it, and made-up or repeated ids would grow the list until the next step.
  std::vector<RequestId>& cancels = state_->cancels;
  if (id == 0 || id >= state_->next_id || std::find(cancels.begin(), cancels.end(), id) != cancels.end()) return;
  cancels.push_back(id);
  work_.notify_one();
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mutex_);
  return state_->stats;
}

void Engine::run_until_idle() {
  while (step()) {
  }
}

void Engine::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Engine::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    work_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] {
        return stopping_ || !state_->incoming.empty() || !state_->cancels.empty() || state_->stats.running > 0 ||
               state_->stats.waiting > 0;
      });
      if (stopping_) break;
    }
    try {
      step();
    } catch (const std::exception& e) {  // the thread stays up: the requests end with the error
      fail_all(e.what());
    }
  }
  // Every request still there ends as cancelled.
  {
    std::lock_guard lock(mutex_);
    for (const auto& s : state_->incoming) state_->cancels.push_back(s->id);
    for (const auto& s : state_->scheduler.waiting()) state_->cancels.push_back(s->id);
    for (const auto& s : state_->scheduler.running()) state_->cancels.push_back(s->id);
  }
  step();
}

}  // namespace difftx::infer
