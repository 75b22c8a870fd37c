#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/timer.h"
#include "data/dataset.h"
#include "kernels/attention/attention_quantized.h"
#include "model/decoder.h"
#include "model/hybrid_decoder.h"

namespace difftx::eval {

PerplexityResult evaluate_perplexity(const model::Model& model, data::TokenLoader& val, const PerplexityOptions& o) {
  const model::ModelConfig& c = model.config;
  const int64_t B = val.batch(), T = val.seq_len();
  DIFFTX_CHECK(!val.is_random(), "perplexity: the loader must read its split in order (data::sequential_loader)");
  DIFFTX_CHECK(o.max_batches >= 0, "--max-batches must not be negative");
  DIFFTX_CHECK(T <= c.max_position_embeddings, "--seq-len ", T, " exceeds the model's max_position_embeddings ",
               c.max_position_embeddings);
  kernels::check_logit_bits(o.forward.attention_logit_bits);
  data::check_fits_vocabulary(val.dataset(), c.vocab_size, "the model");
  val.rewind();
  const int64_t all_batches = (val.windows() + B - 1) / B;
  const int64_t batches = o.max_batches > 0 ? std::min(o.max_batches, all_batches) : all_batches;

  // One of the two forward passes: docs/SPEC.md's decoder, or a hybrid stack (hybrid_decoder.h).
  DIFFTX_CHECK(!c.hybrid || o.forward.attention_logit_bits == 0, "perplexity: quantized attention logits are not ",
               "implemented for a hybrid model");
  std::optional<model::Activations> acts;
  std::optional<model::HybridActivations> hybrid_acts;
  if (c.hybrid) hybrid_acts.emplace(c, B, T, *model.backend);
  else acts.emplace(c, B, T, model::ActivationUse::forward_only, *model.backend);
  std::vector<int32_t> inputs(B * T), targets(inputs.size());
  model::LossSum total;
  PerplexityResult r;
  Timer timer;
  while (r.batches < batches && val.next(inputs.data(), targets.data()) > 0) {
    const model::LossSum s = c.hybrid ? model::hybrid_loss(model, *hybrid_acts, inputs.data(), targets.data())
                               : model::decoder_loss(model, *acts, inputs.data(), targets.data(), o.forward);
    total.sum += s.sum;
    total.count += s.count;
    ++r.batches;
    if (o.progress)
      o.progress({r.batches, batches, total.count, total.count ? total.sum / total.count : 0.0, timer.seconds()});
  }
  DIFFTX_CHECK(total.count > 0, val.dataset().dir.string(), ": the val split gave no targets");
  r.tokens = total.count;
  r.loss = total.sum / total.count;
  r.perplexity = std::exp(r.loss);
  r.seconds = timer.seconds();
  return r;
}

}  // namespace difftx::eval
