#include "eval/quantization.h"

#include "core/error.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx {

std::vector<QuantizationPoint> quantization_sweep(const Model& model, const std::filesystem::path& data_dir,
                                                  const std::vector<int>& bits, PerplexityOptions options) {
  DIFFTX_CHECK(!bits.empty(), "quantization sweep: no bit widths given");
  for (int b : bits) check_logit_bits(b);
  std::vector<QuantizationPoint> points;
  for (int b : bits) {
    options.forward.attention_logit_bits = b;
    points.push_back({b, evaluate_perplexity(model, data_dir, options)});
  }
  return points;
}

}  // namespace difftx
