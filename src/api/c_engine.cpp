// The C API's generation (include/difftx/difftx.h): engines, requests, streamed events.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/c_api_internal.h"
#include "api/generation.h"

namespace difftx::api {
namespace {

constexpr int64_t kMaxTextBytes = 4096;  // of a stop string or a bad word

// The engines whose callbacks this thread is running, innermost last (a callback may run another
// engine, whose callback runs inside it): the calls that would re-enter or destroy any of them are
// refused there (freeing an engine on its own thread would join that thread from itself).
thread_local std::vector<const difftx_engine*> in_callbacks;

void refuse_inside_callback(const difftx_engine& e, const char* function) {
  DIFFTX_CHECK(std::find(in_callbacks.begin(), in_callbacks.end(), &e) == in_callbacks.end(), function,
               ": called from inside one of the engine's callbacks");
}

// n C strings (stop strings, bad words), each non-null and at most kMaxTextBytes long.
std::vector<std::string> texts_of(const char* const* items, int32_t n, const char* what) {
  std::vector<std::string> texts;
  const std::span<const char* const> given = items_of(items, n, what);
  for (size_t i = 0; i < given.size(); ++i) {
    DIFFTX_CHECK(given[i] != nullptr, what, "[", i, "] is null");
    texts.emplace_back(given[i], strnlen(given[i], kMaxTextBytes + 1));
    DIFFTX_CHECK(static_cast<int64_t>(texts.back().size()) <= kMaxTextBytes, what, "[", i, "] is longer than ",
                 kMaxTextBytes, " bytes");
  }
  return texts;
}

GenerateArgs generate_args(const difftx_sampling_options& o) {
  GenerateArgs a;
  // The library's max_new_tokens, checked here for the name the caller wrote.
  DIFFTX_CHECK(o.max_tokens >= 0, "max_tokens ", o.max_tokens, " must not be negative");
  a.max_new_tokens = o.max_tokens;
  a.temperature = o.temperature;
  a.top_k = o.top_k;
  a.top_p = o.top_p;
  a.min_p = o.min_p;
  a.seed = o.seed;
  a.presence_penalty = o.presence_penalty;
  a.frequency_penalty = o.frequency_penalty;
  a.repetition_penalty = o.repetition_penalty;
  DIFFTX_CHECK(o.n_stop >= 0 && o.n_stop <= infer::kMaxStopStrings, "n_stop ", o.n_stop, " must be in [0, ",
               infer::kMaxStopStrings, "]");
  a.stop = texts_of(o.stop, o.n_stop, "stop");
  a.logprobs = o.logprobs != 0;
  a.top_logprobs = o.top_logprobs;
  for (const difftx_logit_bias& b : items_of(o.logit_bias, o.n_logit_bias, "logit_bias"))
    a.logit_bias.emplace_back(b.token, b.bias);  // checked as the server's (infer::Sampler)
  a.skip_special_tokens = o.skip_special_tokens != 0;
  DIFFTX_CHECK(o.n_stop_token_ids >= 0 && o.n_stop_token_ids <= infer::kMaxStopTokenIds, "n_stop_token_ids ",
               o.n_stop_token_ids, " must be in [0, ", infer::kMaxStopTokenIds, "]");
  const std::span<const int32_t> ids = items_of(o.stop_token_ids, o.n_stop_token_ids, "stop_token_ids");
  a.stop_token_ids.assign(ids.begin(), ids.end());  // each checked by the engine against the vocabulary
  a.ignore_eos = o.ignore_eos != 0;
  a.include_stop_str = o.include_stop_str_in_output != 0;
  a.min_tokens = o.min_tokens;  // checked by the engine against max_tokens
  DIFFTX_CHECK(o.n_bad_words >= 0 && o.n_bad_words <= infer::kMaxBadWords / 2, "n_bad_words ", o.n_bad_words,
               " must be in [0, ", infer::kMaxBadWords / 2, "]");
  a.bad_words = texts_of(o.bad_words, o.n_bad_words, "bad_words");
  return a;
}

// Queues the request made by `make` (from the model and the sampling arguments) with events going
// to the callback; the request id, or -1.
template <typename Make>
int64_t submit(difftx_engine* handle, const difftx_sampling_options* options, difftx_token_callback callback,
               void* user_data, const char* function, Make make) {
  return guard<int64_t>(-1, [&]() -> int64_t {
    difftx_engine& e = engine_of(handle, function);
    DIFFTX_CHECK(callback != nullptr, function, ": the callback is null");
    const LoadedModel& m = *e.loaded;
    const GenerateArgs args = options ? generate_args(*options) : GenerateArgs{};
    infer::Request r = make(m, args);
    auto id = std::make_shared<int64_t>(0);
    r.on_event = [&e, callback, user_data, id](const infer::TokenEvent& t) {
      int64_t request;
      {  // set by submit below under the same lock (the engine's own thread may step at once)
        std::lock_guard lock(e.mutex);
        request = *id;
        if (t.finish != infer::FinishReason::none) e.open.erase(request);
      }
      std::vector<int32_t> top_ids;
      std::vector<float> top_logprobs;
      for (const infer::TokenLogprob& p : t.top) top_ids.push_back(p.id), top_logprobs.push_back(p.logprob);
      const difftx_token_event event{request, t.id, t.text.data(), static_cast<int32_t>(t.text.size()), t.logprob,
                                     top_ids.data(), top_logprobs.data(), static_cast<int32_t>(top_ids.size()),
                                     static_cast<int32_t>(t.finish), t.error.c_str(), t.prompt_tokens,
                                     t.generated_tokens, t.cached_tokens};
      in_callbacks.push_back(&e);
      callback(&event, user_data);
      in_callbacks.pop_back();
    };
    std::lock_guard lock(e.mutex);
    *id = static_cast<int64_t>(e.engine->submit(std::move(r)));
    e.open.insert(*id);
    return *id;
  });
}

// difftx_engine_options' fields that are infer::EngineOptions' own, each pair given to f.
template <typename C, typename Cpp, typename F>
void engine_fields(C& c, Cpp& o, F f) {
  f(c.kv_tokens, o.kv_tokens), f(c.kv_bytes, o.kv_bytes), f(c.kv_block_tokens, o.kv_block_tokens);
  f(c.max_batch_tokens, o.max_batch_tokens), f(c.max_running, o.max_running), f(c.max_queue, o.max_queue);
  f(c.context, o.context), f(c.prefix_cache, o.prefix_cache);
}

// Marks the engine as being stepped by this thread for the scope; another thread stepping it, or
// its own thread running, is an error.
class Stepping {
 public:
  Stepping(difftx_engine& e, const char* function) : e_(e) {
    refuse_inside_callback(e, function);
    auto mode = difftx_engine::Mode::idle;
    if (!e.mode.compare_exchange_strong(mode, difftx_engine::Mode::stepping)) {
      DIFFTX_CHECK(mode != difftx_engine::Mode::started, function, ": the engine runs its own thread (difftx_engine_start)");
      fail(function, ": another thread is running the engine's steps");
    }
  }
  ~Stepping() { e_.mode = difftx_engine::Mode::idle; }

 private:
  difftx_engine& e_;
};

}  // namespace
}  // namespace difftx::api

using namespace difftx;
using namespace difftx::api;

extern "C" {

difftx_engine_options difftx_engine_default_options(void) {
  const infer::EngineOptions o;
  difftx_engine_options c{};
  c.kv_dtype = "bf16";
  engine_fields(c, o, to_c);
  c.draft_tokens = o.draft_tokens;
  return c;
}

difftx_engine* difftx_engine_create(difftx_model* model, const difftx_engine_options* options) {
  return guard<difftx_engine*>(nullptr, [&] {
    const LoadedModel& m = model_of(model, "difftx_engine_create");
    const difftx_engine_options c = options ? *options : difftx_engine_default_options();
    infer::EngineOptions o;
    o.kv = kernels::parse_kv_storage(c.kv_dtype ? c.kv_dtype : "bf16");
    engine_fields(c, o, from_c);
    auto e = std::make_unique<difftx_engine>();
    e->loaded = model->loaded;
    // The struct has no unset count: its default is taken as not given, so that only another
    // count without a draft is an error.
    const std::optional<int64_t> draft_tokens =
        c.draft_tokens != infer::kDefaultDraftTokens ? std::optional<int64_t>(c.draft_tokens) : std::nullopt;
    e->draft = load_draft(c.draft ? c.draft : "", draft_tokens, *m.model.backend, m.tokenizer.get(), m.model,
                          OptionSpelling::field);
    o = engine_options(m, o);
    e->draft.apply(o);
    e->engine = std::make_unique<infer::Engine>(m.model, m.tokenizer.get(), o);
    return e.release();
  });
}

void difftx_engine_free(difftx_engine* engine) {
  if (engine == nullptr) return;
  guard<int>(0, [&] {
    refuse_inside_callback(*engine, "difftx_engine_free");
    DIFFTX_CHECK(engine->mode != difftx_engine::Mode::stepping,
                 "difftx_engine_free: another thread is running the engine's steps");
    // From here submits are refused, also from callbacks; a started engine's thread cancels what
    // is left and ends, so that no callback runs once the handle goes.
    engine->engine->stop();
    if (engine->mode != difftx_engine::Mode::started) {
      std::vector<int64_t> open;
      {
        std::lock_guard lock(engine->mutex);
        open.assign(engine->open.begin(), engine->open.end());
      }
      for (int64_t id : open) engine->engine->cancel(static_cast<infer::Engine::RequestId>(id));
      engine->engine->run_until_idle();
    }
    engine->engine.reset();
    delete engine;
    return 0;
  });
}

difftx_sampling_options difftx_sampling_default_options(const difftx_model* model) {
  infer::RequestOptions o;
  if (model != nullptr && model->loaded)  // the model's defaults were checked when it loaded
    o = guard<infer::RequestOptions>(infer::RequestOptions{},
                                     [&] { return request_options(*model->loaded, GenerateArgs{}); });
  const infer::SamplingOptions& s = o.sampling;
  return difftx_sampling_options{o.max_new_tokens, s.temperature, s.top_k, s.top_p, s.min_p, s.seed,
                                 s.presence_penalty, s.frequency_penalty, s.repetition_penalty, nullptr, 0, 0, 0,
                                 nullptr, 0,
                                 GenerateArgs{}.skip_special_tokens, nullptr, 0, 0, 0, 0, nullptr, 0};
}

int64_t difftx_engine_submit(difftx_engine* engine, const char* prompt, const difftx_sampling_options* options,
                             difftx_token_callback callback, void* user_data) {
  return submit(engine, options, callback, user_data, "difftx_engine_submit",
                [&](const LoadedModel& m, const GenerateArgs& a) {
                  return text_request(m, required(prompt, "prompt"), a);
                });
}

int64_t difftx_engine_submit_ids(difftx_engine* engine, const int32_t* ids, int32_t n,
                                 const difftx_sampling_options* options, difftx_token_callback callback,
                                 void* user_data) {
  return submit(engine, options, callback, user_data, "difftx_engine_submit_ids",
                [&](const LoadedModel& m, const GenerateArgs& a) {
                  const std::span<const int32_t> list = items_of(ids, n, "ids");
                  return ids_request(m, std::vector<int32_t>(list.begin(), list.end()), a);
                });
}

int64_t difftx_engine_submit_chat(difftx_engine* engine, const difftx_chat_message* messages, int32_t n,
                                  const difftx_sampling_options* options, difftx_token_callback callback,
                                  void* user_data) {
  return submit(engine, options, callback, user_data, "difftx_engine_submit_chat",
                [&](const LoadedModel& m, const GenerateArgs& a) {
                  return chat_request(m, chat_messages(messages, n), a);
                });
}

int32_t difftx_engine_cancel(difftx_engine* engine, int64_t request) {
  return guard<int32_t>(-1, [&] {
    difftx_engine& e = engine_of(engine, "difftx_engine_cancel");
    DIFFTX_CHECK(request >= 1, "difftx_engine_cancel: request ", request, " is not an id (ids are positive)");
    e.engine->cancel(static_cast<infer::Engine::RequestId>(request));
    return 0;
  });
}

int32_t difftx_engine_step(difftx_engine* engine) {
  return guard<int32_t>(-1, [&] {
    difftx_engine& e = engine_of(engine, "difftx_engine_step");
    Stepping scope(e, "difftx_engine_step");
    return e.engine->step() ? 1 : 0;
  });
}

int32_t difftx_engine_run(difftx_engine* engine) {
  return guard<int32_t>(-1, [&] {
    difftx_engine& e = engine_of(engine, "difftx_engine_run");
    Stepping scope(e, "difftx_engine_run");
    e.engine->run_until_idle();
    return 0;
  });
}

int32_t difftx_engine_start(difftx_engine* engine) {
  return guard<int32_t>(-1, [&] {
    difftx_engine& e = engine_of(engine, "difftx_engine_start");
    refuse_inside_callback(e, "difftx_engine_start");
    auto mode = difftx_engine::Mode::idle;
    if (!e.mode.compare_exchange_strong(mode, difftx_engine::Mode::started)) {
      DIFFTX_CHECK(mode == difftx_engine::Mode::started, "difftx_engine_start: another thread is running the engine's steps");
      return 0;  // started already
    }
    try {
      e.engine->start();
    } catch (...) {
      e.mode = difftx_engine::Mode::idle;
      throw;
    }
    return 0;
  });
}

int32_t difftx_engine_get_stats(const difftx_engine* engine, difftx_engine_stats* stats) {
  return guard<int32_t>(-1, [&] {
    DIFFTX_CHECK(engine != nullptr && engine->engine, "difftx_engine_get_stats: the engine is null");
    DIFFTX_CHECK(stats != nullptr, "difftx_engine_get_stats: stats is null");
    const infer::EngineStats s = engine->engine->stats();
    *stats = difftx_engine_stats{s.waiting, s.running, s.kv_blocks, s.kv_blocks_used, s.kv_blocks_cached,
                                 s.kv_block_tokens, s.prefix_lookup_tokens, s.prefix_hit_tokens, s.prompt_tokens,
                                 s.generated_tokens, s.preemptions, s.steps, {}, s.draft_tokens, s.draft_accepted};
    for (int i = 0; i < 5; ++i) stats->finished[i] = s.finished[i];
    return 0;
  });
}

}  // extern "C"
