// `difftx eval`: validation loss and perplexity of a model directory on prepared data.
#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "cli/device_option.h"
#include "data/loader.h"
#include "eval/perplexity.h"
#include "model/model_io.h"

namespace difftx::cli {
namespace {

int run_eval(Args& args) {
  const std::string dir = args.require("model");
  const std::string data_dir = args.require("data");
  const int64_t seq_len = args.get_int("seq-len", 256, kSequenceLength);
  const int64_t micro_batch = args.get_int("micro-batch", 8, kMicroBatch);
  eval::PerplexityOptions o;
  o.max_batches = args.get_int("max-batches", o.max_batches, kNonNegative);
  const bool quiet = args.flag("quiet");
  backends::Backend& device = device_option(args);
  args.finish();
  model::Model model = model::load_model_dir(dir, model::MatrixPrecision::as_stored);
  model.move_to(device);
  if (!quiet)
    o.progress = [](const eval::PerplexityProgress& p) {
      const double rate = p.tokens / std::max(p.seconds, 1e-9);
      const double eta = p.seconds / p.batches_done * (p.batches_total - p.batches_done);
      std::fprintf(stderr, "\reval batch %lld/%lld | loss %.4f | %.0f tok/s | ETA %.0f s   ", (long long)p.batches_done,
                   (long long)p.batches_total, p.loss, rate, eta);
      if (p.batches_done == p.batches_total) std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
  data::TokenLoader val = data::sequential_loader(data_dir, "val", micro_batch, seq_len);
  const eval::PerplexityResult r = eval::evaluate_perplexity(model, val, o);
  std::printf("val loss %.4f | perplexity %.3f | %lld tokens in %lld batches | %.1f s\n", r.loss, r.perplexity,
              (long long)r.tokens, (long long)r.batches, r.seconds);
  return 0;
}

}  // namespace

DIFFTX_COMMAND("eval", "validation loss and perplexity of a model on prepared data",
               "  --model DIR           a model directory (config.json + model.safetensors)\n"
               DIFFTX_DEVICE_HELP
               "  --data DIR            prepared data (difftx prepare); its val split is read in order\n"
               "  --seq-len T           tokens per window (default 256)\n"
               "  --micro-batch B       windows per forward (default 8)\n"
               "  --max-batches N       stop after N batches (default 0: the whole split)\n"
               "  --quiet               no progress line",
               run_eval);

}  // namespace difftx::cli
