#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/timer.h"
#include "data/loader.h"
#include "kernels/attention/attention_quantized.h"
#include "model/decoder.h"

namespace difftx {

PerplexityResult evaluate_perplexity(const Model& model, const std::filesystem::path& data_dir,
                                     const PerplexityOptions& o) {
  const ModelConfig& c = model.config;
  DIFFTX_CHECK(o.seq_len > 0 && o.micro_batch > 0 && o.max_batches >= 0,
               "--seq-len and --micro-batch must be positive and --max-batches not negative");
  DIFFTX_CHECK(o.seq_len <= c.max_position_embeddings, "--seq-len ", o.seq_len, " exceeds the model's max_position_embeddings ",
               c.max_position_embeddings);
  check_logit_bits(o.forward.attention_logit_bits);
  DIFFTX_CHECK(std::filesystem::is_directory(data_dir), data_dir.string(),
               ": data directory does not exist (make one with difftx prepare)");
  data::TokenLoader val(data_dir, "val",
                        {.batch = o.micro_batch, .seq_len = o.seq_len, .sampling = data::Sampling::sequential});
  DIFFTX_CHECK(val.vocab_size() <= c.vocab_size, data_dir.string(), ": the data's vocabulary has ", val.vocab_size(),
               " tokens but the model's vocab_size is ", c.vocab_size, " (data and model do not belong together)");
  const int64_t all_batches = (val.windows() + o.micro_batch - 1) / o.micro_batch;
  const int64_t batches = o.max_batches > 0 ? std::min(o.max_batches, all_batches) : all_batches;

  Activations acts(c, o.micro_batch, o.seq_len);
  std::vector<int32_t> inputs(o.micro_batch * o.seq_len), targets(inputs.size());
  LossSum total;
  PerplexityResult r;
  Timer timer;
  while (r.batches < batches && val.next(inputs.data(), targets.data()) > 0) {
    const LossSum s = decoder_loss(model, acts, inputs.data(), targets.data(), o.forward);
    total.sum += s.sum;
    total.count += s.count;
    ++r.batches;
    if (o.progress)
      o.progress({r.batches, batches, total.count, total.count ? total.sum / total.count : 0.0, timer.seconds()});
  }
  DIFFTX_CHECK(total.count > 0, data_dir.string(), ": the val split gave no targets");
  r.tokens = total.count;
  r.loss = total.sum / total.count;
  r.perplexity = std::exp(r.loss);
  r.seconds = timer.seconds();
  return r;
}

}  // namespace difftx
