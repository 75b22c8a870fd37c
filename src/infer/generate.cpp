#include "infer/generate.h"

#include <algorithm>

#include "core/error.h"
#include "core/timer.h"
#include "infer/engine.h"

namespace difftx::infer {

GenerateResult generate(const model::Model& model, std::span<const int32_t> prompt, const GenerateOptions& o,
                        const std::function<void(const TokenEvent&)>& on_event) {
  DIFFTX_CHECK(o.max_new_tokens >= 0, option_name("max_new_tokens", o.spelling), " ", o.max_new_tokens,
               " must not be negative");
  const int64_t context = sequence_context(o.context, model.config, o.spelling);
  // One request on its own engine, whose KV pool holds what this request can use.
  EngineOptions eo;
  eo.kv = o.kv;
  eo.context = context;
  eo.kv_tokens = std::min(context, static_cast<int64_t>(prompt.size()) + o.max_new_tokens);
  eo.max_running = 1;
  eo.prefix_cache = false;
  eo.sample_vocab = o.sample_vocab;
  eo.draft = o.draft;
  eo.draft_tokens = o.draft_tokens;
  eo.draft_model = o.draft_model;
  eo.spelling = o.spelling;
  Engine engine(model, o.tokenizer, eo);

  GenerateResult r;
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  Request request{std::vector<int32_t>(prompt.begin(), prompt.end()), {}, {}, {}};
  request.options.sampling = o.sampling;
  request.options.max_new_tokens = o.max_new_tokens;
  request.options.stop_tokens = o.stop_tokens;
  request.options.stop_strings = o.stop_strings;
  request.options.constraint = o.constraint;
  request.options.silent_tokens = o.silent_tokens;
  Timer timer;
  bool first = true;
  request.on_event = [&](const TokenEvent& e) {
    if (first) r.prefill_seconds = timer.seconds(), timer.reset(), first = false;
    if (e.id >= 0) ++r.new_tokens;
    on_event(e);
    r.finish = e.finish;
    if (e.finish == FinishReason::error) r.error = e.error;
  };
  engine.submit(std::move(request));
  engine.run_until_idle();
  if (first) r.prefill_seconds = timer.seconds(), timer.reset();
  r.decode_seconds = timer.seconds();
  r.stopped_at_stop_token = r.finish == FinishReason::stop;
  r.draft_tokens = engine.stats().draft_tokens;
  r.draft_accepted = engine.stats().draft_accepted;
  r.context_full = r.finish == FinishReason::length && r.new_tokens < o.max_new_tokens;
  // Every drawn token but the last went back through the model (a stop token ends after its own).
  r.decode_steps = r.stopped_at_stop_token ? r.new_tokens : std::max<int64_t>(0, r.new_tokens - 1);
  return r;
}

}  // namespace difftx::infer
