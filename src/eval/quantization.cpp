#include "eval/quantization.h"

#include "core/error.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx::eval {

std::vector<results::QuantizationPoint> quantization_sweep(const model::Model& model, data::TokenLoader& val,
                                                           const std::vector<int>& bits, PerplexityOptions options) {
  DIFFTX_CHECK(!bits.empty(), "quantization sweep: no bit widths given");
  for (int b : bits) kernels::check_logit_bits(b);
  std::vector<results::QuantizationPoint> points;
  for (int b : bits) {
    options.forward.attention_logit_bits = b;
    const PerplexityResult r = evaluate_perplexity(model, val, options);
    points.push_back({b, r.loss, r.tokens});
  }
  return points;
}

}  // namespace difftx::eval
