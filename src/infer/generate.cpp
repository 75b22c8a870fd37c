#include "infer/generate.h"

#include <algorithm>

#include "core/error.h"
#include "core/timer.h"
#include "infer/session.h"

namespace difftx {

GenerateResult generate(const Model& model, std::span<const int32_t> prompt, const GenerateOptions& o,
                        const std::function<void(int32_t)>& on_token) {
  DIFFTX_CHECK(o.max_new_tokens >= 0, "--max-new-tokens ", o.max_new_tokens, " must not be negative");
  const int64_t vocab = o.sample_vocab > 0 ? o.sample_vocab : model.config.vocab_size;
  DIFFTX_CHECK(vocab <= model.config.vocab_size, "generate: sample_vocab ", vocab, " exceeds the model's vocab_size ",
               model.config.vocab_size);
  InferenceSession session(model, o.context, o.kv);
  Sampler sampler(o.sampling, vocab);
  GenerateResult r;
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  Timer timer;
  const float* logits = session.prefill(prompt);
  r.prefill_seconds = timer.seconds();
  timer.reset();
  while (r.new_tokens < o.max_new_tokens) {
    const int32_t id = sampler.sample(logits);
    if (std::find(o.stop_tokens.begin(), o.stop_tokens.end(), id) != o.stop_tokens.end()) {
      r.stopped_at_stop_token = true;
      break;
    }
    on_token(id);
    ++r.new_tokens;
    if (r.new_tokens == o.max_new_tokens) break;
    if (session.length() == session.context()) {
      r.context_full = true;
      break;
    }
    logits = session.decode(id);
    ++r.decode_steps;
  }
  r.decode_seconds = timer.seconds();
  return r;
}

}  // namespace difftx
