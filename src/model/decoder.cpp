#include "model/decoder.h"

#include <algorithm>
#include <vector>

#include "backends/host_result.h"
#include "core/error.h"
#include "kernels/attention/attention_quantized.h"

namespace difftx::model {

using kernels::Trans;

namespace {

using backends::DevicePtr;
using F32 = DevicePtr<float>;

int64_t count_targets(const int32_t* targets, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += targets[i] != kIgnoreId;
  return count;
}

LayerPass layer_pass(const Model& model, Activations& acts) {
  return {*model.backend, model.config, acts.B, acts.T, 0, acts.rope.table, acts.head_norm_gain};
}

// The host's token ids (checked) into acts.tokens.
void upload_tokens(const Model& model, Activations& acts, const int32_t* inputs) {
  const int64_t V = model.config.vocab_size;
  for (int64_t i = 0; i < acts.N; ++i)
    DIFFTX_CHECK(inputs[i] >= 0 && inputs[i] < V, "token id ", inputs[i], " at position ", i,
                 " is outside the vocabulary [0, ", V, ")");
  acts.backend->upload(acts.tokens, inputs, acts.N * int64_t{sizeof(int32_t)});
}

void backward_layers(const Model& model, Activations& acts, ModelTensors& g) {
  const ModelConfig& c = model.config;
  const LayerPass pass = layer_pass(model, acts);
  const F32 dx = acts.d_resid;  // gradient w.r.t. the residual stream, layer by layer
  PhaseClock clock(acts.profile);
  for (int64_t l = c.num_hidden_layers - 1; l >= 0; --l) {
    const LayerTensors& w = model.tensors.layers[l];
    mlp_block_backward(pass, w, g.layers[l], acts.layers[l], acts, dx);
    clock.lap(StepPhase::mlp_backward);
    attention_block_backward(pass, w, g.layers[l], l, acts.layers[l], acts, dx);
    clock.lap(StepPhase::attention_backward);
  }
  model.backend->embedding_backward(acts.tokens, dx, g.embed, acts.N, c.hidden_size);
  clock.lap(StepPhase::embedding);
}

}  // namespace

void lm_head(const Model& model, DevicePtr<const float> h, F32 logits, int64_t rows) {
  const backends::DeviceMatrix& W = model.matrices.lm_head;
  // Where the model trains, an F32 head is training's dense product (the bits its backward
  // pairs with); elsewhere it is a matmul like every other weight type.
  if (W.type == kernels::WeightType::f32 && model.backend->trains())
    model.backend->gemm(Trans::N, Trans::T, rows, W.rows, W.cols, 1.0f, h, backends::device_cast<const float>(W.data),
                        0.0f, logits);
  else
    model.backend->matmul(W, h, logits, rows, false, kernels::MatmulOrder::by_size);
}

void decoder_forward(const Model& model, Activations& acts, const int32_t* inputs, const ForwardOptions& options,
                     AttentionCore* core) {
  kernels::check_logit_bits(options.attention_logit_bits);
  DIFFTX_CHECK(acts.backend == model.backend, "the activations are planned on ", acts.backend->info().name,
               ", the model is on ", model.backend->info().name);
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size;
  BatchAttention batch(*model.backend, c.attention_dims(acts.B, acts.T), options.attention_logit_bits);
  AttentionCore& attention = core ? *core : batch;
  const LayerPass pass = layer_pass(model, acts);
  PhaseClock clock(acts.profile);

  upload_tokens(model, acts, inputs);
  model.backend->embed(model.matrices.embed, acts.tokens, acts.layers[0].x, N);
  clock.lap(StepPhase::embedding);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerActivations& s = acts.layers[l];
    const LayerTensors& w = model.tensors.layers[l];
    const LayerMatrices& m = model.matrices.layers[l];
    attention_block_forward(pass, w, m, l, s, attention);
    clock.lap(StepPhase::attention_forward);
    mlp_block_forward(pass, w, m, s, l + 1 < c.num_hidden_layers ? acts.layers[l + 1].x : acts.x_final);
    clock.lap(StepPhase::mlp_forward);
  }
  model.backend->rmsnorm_forward(acts.x_final, model.tensors.final_norm, acts.h_final, acts.rstd_final, N, D,
                                 static_cast<float>(c.rms_norm_eps));
  clock.lap(StepPhase::final_norm);
}

double decoder_forward_backward(const Model& model, Activations& acts, const int32_t* inputs,
                                const int32_t* targets, ModelTensors& grads, float grad_scale) {
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size, V = c.vocab_size;
  backends::Backend& b = *model.backend;
  require_f32_weights(model, "training");
  DIFFTX_CHECK(acts.d_resid, "decoder_forward_backward: the activations were not planned for training");
  decoder_forward(model, acts, inputs);
  b.upload(acts.targets, targets, N * int64_t{sizeof(int32_t)});

  // LM head and cross-entropy, fused per chunk of rows so that [N, V] never exists: the
  // chunk's dlogits (scaled to the whole batch's mean) feed the head's backward at once.
  PhaseClock clock(acts.profile);
  const int64_t total = count_targets(targets, N);
  const F32 dh = acts.d_norm_out;  // d h_final
  double loss_sum = 0;
  for (int64_t r0 = 0; r0 < N; r0 += acts.logit_rows) {
    const int64_t rows = std::min(acts.logit_rows, N - r0);
    lm_head(model, acts.h_final + r0 * D, acts.logits, rows);
    int64_t count = 0;
    const double mean =
        b.cross_entropy_forward_backward(acts.logits, acts.targets + r0, acts.logits, rows, V, kIgnoreId, &count);
    loss_sum += mean * count;
    const float chunk_scale = total > 0 ? grad_scale * static_cast<float>(count) / static_cast<float>(total) : 0.0f;
    if (chunk_scale != 1.0f) b.scale(acts.logits, acts.logits, chunk_scale, rows * V);
    // dh = dlogits W, dW += dlogits^T h
    b.gemm(Trans::N, Trans::N, rows, D, V, 1.0f, acts.logits, model.tensors.lm_head, 0.0f, dh + r0 * D);
    b.gemm(Trans::T, Trans::N, V, D, rows, 1.0f, acts.logits, acts.h_final + r0 * D, 1.0f, grads.lm_head);
  }
  clock.lap(StepPhase::lm_head_xent);
  b.rmsnorm_backward(acts.x_final, model.tensors.final_norm, acts.rstd_final, dh, acts.d_resid, grads.final_norm, N, D);
  clock.lap(StepPhase::final_norm);
  backward_layers(model, acts, grads);
  return total > 0 ? loss_sum / total : 0.0;
}

LossSum decoder_loss(const Model& model, Activations& acts, const int32_t* inputs, const int32_t* targets,
                     const ForwardOptions& options) {
  const ModelConfig& c = model.config;
  const int64_t N = acts.N, D = c.hidden_size, V = c.vocab_size;
  decoder_forward(model, acts, inputs, options);
  model.backend->upload(acts.targets, targets, N * int64_t{sizeof(int32_t)});
  LossSum out;
  for (int64_t r0 = 0; r0 < N; r0 += acts.logit_rows) {
    const int64_t rows = std::min(acts.logit_rows, N - r0);
    lm_head(model, acts.h_final + r0 * D, acts.logits, rows);
    int64_t count = 0;
    out.sum += model.backend->cross_entropy_sum(acts.logits, acts.targets + r0, rows, V, kIgnoreId, &count);
    out.count += count;
  }
  return out;
}

void decoder_logits(const Model& model, Activations& acts, const int32_t* inputs, float* out,
                    const ForwardOptions& options) {
  decoder_forward(model, acts, inputs, options);
  backends::HostResult logits(*model.backend, out, acts.N * model.config.vocab_size * int64_t{sizeof(float)});
  lm_head(model, acts.h_final, logits.as<float>(), acts.N);
  logits.land();
}

void decoder_row_logits(const Model& model, Activations& acts, const int64_t* rows, int64_t n, float* out) {
  if (n <= 0) return;
  const int64_t D = model.config.hidden_size;
  DIFFTX_CHECK(n <= acts.N, "decoder_row_logits: ", n, " rows of a forward of ", acts.N);
  std::vector<int32_t> index(n);
  for (int64_t i = 0; i < n; ++i) {
    DIFFTX_CHECK(rows[i] >= 0 && rows[i] < acts.N, "decoder_row_logits: row ", rows[i], " is outside the ", acts.N,
                 " positions");
    index[i] = static_cast<int32_t>(rows[i]);
  }
  backends::Backend& b = *model.backend;
  b.upload(acts.row_index, index.data(), n * int64_t{sizeof(int32_t)});
  const backends::DeviceBuffer gathered = b.allocate(n * D * int64_t{sizeof(float)}, false);
  b.gather_rows(acts.h_final, acts.row_index, n, D, gathered.as<float>());
  backends::HostResult logits(b, out, n * model.config.vocab_size * int64_t{sizeof(float)});
  lm_head(model, gathered.as<const float>(), logits.as<float>(), n);
  logits.land();
}

}  // namespace difftx::model
