// `difftx analyze quant`: val loss with absmax fake-quantized attention logits (paper Figure 8).
#include <algorithm>
#include <cstdio>

#include "cli/analyze_targets.h"
#include "eval/analysis_json.h"
#include "kernels/attention/attention_quantized.h"
#include "model/model_io.h"

namespace difftx::cli {

int analyze_quant(Args& args) {
  const std::string model_dir = args.require("model");
  const std::string data_dir = args.require("data");
  std::vector<int> bits;
  for (int64_t b : args.get_int_list("bits", "0,16,8,6,4", IntRange{0, 64})) bits.push_back(static_cast<int>(b));
  PerplexityOptions o;
  o.seq_len = args.get_int("seq-len", o.seq_len, kSequenceLength);
  o.micro_batch = args.get_int("micro-batch", o.micro_batch, kMicroBatch);
  o.max_batches = args.get_int("max-batches", o.max_batches, kNonNegative);
  const bool quiet = args.flag("quiet");
  const std::string json_path = args.get("json", "");
  args.finish();
  for (int b : bits) check_logit_bits(b);  // before loading anything

  const Model model = load_model_dir(model_dir);
  int current = 0;
  if (!quiet)
    o.progress = [&current](const PerplexityProgress& p) {
      std::fprintf(stderr, "\rbits %d: batch %lld/%lld | loss %.4f   ", current, (long long)p.batches_done,
                   (long long)p.batches_total, p.loss);
      std::fflush(stderr);
    };
  std::vector<QuantizationPoint> points;
  for (int b : bits) {  // one at a time, so that the progress line can name the bit width
    current = b;
    auto point = quantization_sweep(model, data_dir, {b}, o);
    points.push_back(point.front());
  }
  if (!quiet) std::fprintf(stderr, "\n");

  const auto plain = std::find_if(points.begin(), points.end(), [](const QuantizationPoint& p) { return p.bits == 0; });
  std::printf("attention logit quantization: %s, %lld val tokens per point, absmax per (sequence, map)\n",
              attention_kind_name(model.config.attention), (long long)points.front().result.tokens);
  std::printf("  %-6s %10s %12s\n", "bits", "val loss", "vs fp32");
  for (const QuantizationPoint& p : points) {
    const std::string label = p.bits == 0 ? "fp32" : std::to_string(p.bits);
    if (plain != points.end() && p.bits != 0)
      std::printf("  %-6s %10.4f %+12.4f\n", label.c_str(), p.result.loss, p.result.loss - plain->result.loss);
    else
      std::printf("  %-6s %10.4f %12s\n", label.c_str(), p.result.loss, "");
  }
  write_analysis_json(json_path, {{"quantization", quantization_json(points)}});
  return 0;
}

}  // namespace difftx::cli
