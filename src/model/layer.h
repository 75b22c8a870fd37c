// One decoder layer of docs/SPEC.md §1, written once: an attention block and an MLP block, each with a
// forward and a backward. Three drivers loop over them: the training forward and its backward
// (decoder.cpp) and the decode step (infer/session.cpp: a batch of one token whose attention
// reads keys and values from the KV cache). Blocks read and write the tensors of a
// LayerActivations (activations.h); the decode step points one at its single-token buffers.
#pragma once
#include <cstdint>

#include "kernels/quant/matmul.h"
#include "model/activations.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx {

// y[N, out] (= or +=) x[N, in] W^T, W stored [out, in] = [W.rows, W.cols] (docs/SPEC.md §1). Every
// projection of the forward blocks and the LM head goes through this one call. F32 weights: a
// batch of one row runs the GEMV kernel, larger batches the GEMM (the training path); weights in
// another storage type run the kernels of kernels/quant/matmul.h. order: by_size is that choice;
// gemv and gemm give each row the same bits whatever the other rows are (MatmulOrder, the
// batched engine), for every type.
void linear(const WeightMatrix& W, const float* x, float* y, int64_t N, bool accumulate = false,
            MatmulOrder order = MatmulOrder::by_size);

// out[N, D] = the rows of the embedding E [V, D] that `tokens` name, widened to F32; a token
// outside [0, V) is an error.
void embed_tokens(const WeightMatrix& E, const int32_t* tokens, float* out, int64_t N);

// docs/SPEC.md §2.2 Eq. 2 (diff): the layer's lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init.
double diff_lambda(const ModelConfig& config, const LayerTensors& layer, int64_t layer_index);

// The causal attention between the projections and o_proj, the one step the drivers differ in:
// over the batch's own keys and values (training, prefill) or over a KV cache (decode).
class AttentionCore {
 public:
  virtual ~AttentionCore() = default;
  // s.q, s.k (after RoPE), s.v and lambda in; s.att [N, out_width] out (before the head norm).
  virtual void attend(int64_t layer, LayerActivations& s, const float* lambda) = 0;
};

// Attention over the batch's own keys and values: the fused kernel, keeping what its backward
// needs in s.saved, or with logit_bits > 0 the fake-quantized kernel of attention_quantized.h.
class BatchAttention : public AttentionCore {
 public:
  BatchAttention(const AttentionDims& dims, int logit_bits) : dims_(dims), logit_bits_(logit_bits) {}
  void attend(int64_t layer, LayerActivations& s, const float* lambda) override;

 private:
  AttentionDims dims_;
  int logit_bits_;
};

// What a pass over the layers shares: the shape, the RoPE table and the positions.
struct LayerPass {
  const ModelConfig& config;
  int64_t B, T;            // rows N = B * T, token-major
  int64_t position;        // position of every sequence's first row (unless positions is set)
  const RopeTable& rope;
  float* head_norm_gain;   // [2d] scratch: DIFF V1's gain times (1 - lambda_init)
  // The engine's batches (infer/engine.h): each row's own position [N], and the reduction order
  // of the projections: rows [0, gemv_rows) in the decode GEMV's, the rest in the prefill GEMM's
  // (MatmulOrder). Null and -1: positions from `position`, the order by size.
  const int64_t* positions = nullptr;
  int64_t gemv_rows = -1;
  int64_t rows() const { return B * T; }
};

// y[N, out] (= or +=) x[N, in] W^T for the pass's rows, in the pass's reduction orders.
void project(const LayerPass& pass, const WeightMatrix& W, const float* x, float* y, bool accumulate = false);

// The lambda the attention kernels take (variant.h): null, &s.lambda or s.lambda_logits.
const float* layer_lambda(const ModelConfig& config, const LayerActivations& s);

// s.y = s.x + o_proj(HeadNorm(Attention(RoPE(q, k), v))) with q, k, v from RMSNorm(s.x)
// (paper Eq. 4; the head norm only for DIFF V1, docs/SPEC.md §2.2 Eq. 3). Fills s.h1 to s.att_final.
// w gives the vectors (norm gains, lambdas), m the matrices in their storage types.
void attention_block_forward(const LayerPass& pass, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                             LayerActivations& s, AttentionCore& core);
// out = s.y + down(silu(gate(h2)) * up(h2)), h2 = RMSNorm(s.y) (paper Eq. 5). out is the next
// layer's input and may not alias s.y.
void mlp_block_forward(const LayerPass& pass, const LayerTensors& w, const LayerMatrices& m, LayerActivations& s,
                       float* out);

// Backward of the blocks (F32 weights only), accumulating weight gradients into gw and using
// acts' scratch.
// dx holds d loss / d (block output) on entry and d loss / d (block input) on return.
void mlp_block_backward(const LayerPass& pass, const LayerTensors& w, LayerTensors& gw, LayerActivations& s,
                        Activations& acts, float* dx);
void attention_block_backward(const LayerPass& pass, const LayerTensors& w, LayerTensors& gw, int64_t layer,
                              LayerActivations& s, Activations& acts, float* dx);

}  // namespace difftx
