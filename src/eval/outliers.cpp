#include "eval/outliers.h"

#include <algorithm>
#include <cmath>

#include "core/buffer.h"
#include "core/error.h"
#include "core/parallel_errors.h"
#include "core/threading.h"
#include "core/timer.h"
#include "data/dataset.h"
#include "eval/attention_maps.h"
#include "kernels/attention/attention_logits.h"
#include "model/decoder.h"
#include "model/taps.h"

namespace difftx::eval {

OutlierResult measure_outliers(const model::Model& model, data::TokenLoader& val, const OutlierOptions& o) {
  const model::ModelConfig& c = model.config;
  const int64_t B = val.batch();
  DIFFTX_CHECK(o.tokens > 0, "outliers: --tokens must be positive");
  DIFFTX_CHECK(!val.is_random(), "outliers: the loader must read its split in order (data::sequential_loader)");
  DIFFTX_CHECK(val.seq_len() <= c.max_position_embeddings, "outliers: --seq-len ", val.seq_len(),
               " exceeds the model's max_position_embeddings ", c.max_position_embeddings);
  data::check_fits_vocabulary(val.dataset(), c.vocab_size, "the model");

  Timer timer;
  const int64_t T = val.seq_len(), D = c.hidden_size, L = c.num_hidden_layers;
  OutlierResult r;
  r.sequences = std::min((o.tokens + T - 1) / T, val.windows());
  r.tokens = r.sequences * T;
  r.layer_logits_top1.assign(L, 0.0);
  r.layer_hidden_top1.assign(L, 0.0);

  model::Activations acts(c, B, T);
  std::vector<int32_t> inputs(B * T), targets(inputs.size());
  const int threads = thread_count();
  Buffer<float> scores(threads * T * T);  // one T x T logit map per thread
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  AbsValueStats logits("attention logits"), hidden("hidden states");

  for (int pass = 1; pass <= 2; ++pass) {
    std::vector<AbsValueStats> parts(threads, logits.worker());
    val.rewind();
    int64_t done = 0;
    while (done < r.sequences) {
      const int64_t filled = val.next(inputs.data(), targets.data());
      DIFFTX_CHECK(filled > 0, val.dataset().dir.string(), ": the val split ended after ", done, " sequences");
      const int64_t rows = std::min(filled, r.sequences - done);
      model::decoder_forward(model, acts, inputs.data());
      for (int64_t l = 0; l < L; ++l) {
        // Logits: one (sequence, map) per work item, each thread with its own map and accumulator.
        const model::LayerTap a = model::layer_tap(c, acts, l);
        const int64_t maps = kernels::attention_map_count(a.dims);
        float logit_max = 0;
        ParallelErrors errors;  // attention_map_logits checks its arguments
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(max : logit_max)
        for (int64_t item = 0; item < rows * maps; ++item) errors.run(item, [&] {
          float* S = scores.data() + thread_index() * T * T;
          kernels::attention_map_logits(a.dims, a.q, a.k, item / maps, item % maps, scale, S);
          for (int64_t t = 0; t < T; ++t) {
            const float* row = S + t * T;
            parts[thread_index()].add(row, t + 1);
            for (int64_t s = 0; s <= t; ++s) logit_max = std::max(logit_max, std::fabs(row[s]));
          }
        });
        errors.rethrow();
        // Hidden states: the output of layer l (its residual stream), rows [0, rows) of the batch.
        const float* x = a.residual_out;
        const int64_t n = rows * T * D;
        hidden.add(x, n);
        float hidden_max = 0;
        for (int64_t i = 0; i < n; ++i) hidden_max = std::max(hidden_max, std::fabs(x[i]));
        r.layer_logits_top1[l] = std::max<double>(r.layer_logits_top1[l], logit_max);
        r.layer_hidden_top1[l] = std::max<double>(r.layer_hidden_top1[l], hidden_max);
      }
      done += rows;
      if (o.progress) o.progress(pass, done, r.sequences);
    }
    for (const AbsValueStats& part : parts) logits.merge(part);
    if (pass == 1) {
      logits.start_refinement();
      hidden.start_refinement();
    }
  }
  r.logits = logits.summary();
  r.hidden = hidden.summary();
  r.seconds = timer.seconds();
  return r;
}

}  // namespace difftx::eval
