// `difftx analyze quant`: val loss with absmax fake-quantized attention logits (paper Figure 8).
#include <algorithm>
#include <cstdio>

#include "cli/analyze_targets.h"
#include "core/error.h"
#include "data/loader.h"
#include "eval/quantization.h"
#include "kernels/attention/attention_quantized.h"
#include "model/model_io.h"

namespace difftx::cli {

using namespace difftx::eval;  // the analyses this command runs

std::vector<int> logit_bits_option(Args& args, const std::string& name, const std::string& fallback) {
  std::vector<int> bits;
  for (int64_t b : args.get_int_list(name, fallback, IntRange{0, 64})) {
    try {
      kernels::check_logit_bits(static_cast<int>(b));
    } catch (const Error& e) {
      fail("--", name, " expects bit widths the quantizer takes: ", e.what());
    }
    bits.push_back(static_cast<int>(b));
  }
  return bits;
}

int analyze_quant(Args& args) {
  const std::string model_dir = args.require("model");
  const std::string data_dir = args.require("data");
  const std::vector<int> bits = logit_bits_option(args, "bits", "0,16,8,6,4");
  const int64_t seq_len = args.get_int("seq-len", 256, kSequenceLength);
  const int64_t micro_batch = args.get_int("micro-batch", 8, kMicroBatch);
  PerplexityOptions o;
  o.max_batches = args.get_int("max-batches", o.max_batches, kNonNegative);
  const bool quiet = args.flag("quiet");
  const std::string json_path = args.get("json", "");
  args.finish();

  const model::Model model = model::load_model_dir(model_dir);
  data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
  int current = 0;
  if (!quiet)
    o.progress = [&current](const PerplexityProgress& p) {
      std::fprintf(stderr, "\rbits %d: batch %lld/%lld | loss %.4f   ", current, (long long)p.batches_done,
                   (long long)p.batches_total, p.loss);
      std::fflush(stderr);
    };
  results::Analyses analyses;
  std::vector<results::QuantizationPoint>& points = analyses.quantization;
  for (int b : bits) {  // one at a time, so that the progress line can name the bit width
    current = b;
    auto point = quantization_sweep(model, val, {b}, o);
    points.push_back(point.front());
  }
  if (!quiet) std::fprintf(stderr, "\n");

  const auto plain =
      std::find_if(points.begin(), points.end(), [](const results::QuantizationPoint& p) { return p.bits == 0; });
  std::printf("attention logit quantization: %s, %lld val tokens per point, absmax per (sequence, map)\n",
              kernels::attention_kind_name(model.config.attention), (long long)points.front().val_tokens);
  std::printf("  %-6s %10s %12s\n", "bits", "val loss", "vs fp32");
  for (const results::QuantizationPoint& p : points) {
    const std::string label = p.bits == 0 ? "fp32" : std::to_string(p.bits);
    if (plain != points.end() && p.bits != 0)
      std::printf("  %-6s %10.4f %+12.4f\n", label.c_str(), p.val_loss, p.val_loss - plain->val_loss);
    else
      std::printf("  %-6s %10.4f %12s\n", label.c_str(), p.val_loss, "");
  }
  write_analysis_json(json_path, analyses);
  return 0;
}

}  // namespace difftx::cli
