// One decoder layer of docs/SPEC.md §1, written once: an attention block and an MLP block, each with a
// forward and a backward, computed through the pass's backend (backends/backend.h). Two drivers
// loop over them: the decoder (decoder.cpp: training forward and backward, eval, logits) and the
// engine's step (infer/batch_forward.cpp: rows of many sequences whose attention reads the paged
// KV cache). Blocks read and write the tensors of a LayerActivations (activations.h).
#pragma once
#include <cstdint>

#include "backends/backend.h"
#include "model/activations.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx::model {

// The causal attention between the projections and o_proj, the one step the drivers differ in:
// over the batch's own keys and values (training, prefill) or over a KV cache (decode).
class AttentionCore {
 public:
  virtual ~AttentionCore() = default;
  // s.q, s.k (after RoPE), s.v and s.lambda in; s.att [N, out_width] out (before the head norm).
  virtual void attend(int64_t layer, LayerActivations& s) = 0;
};

// Attention over the batch's own keys and values: the fused kernel, keeping what its backward
// needs in s.saved, or with logit_bits > 0 the fake-quantized kernel of attention_quantized.h.
class BatchAttention : public AttentionCore {
 public:
  BatchAttention(backends::Backend& backend, const kernels::AttentionDims& dims, int logit_bits)
      : backend_(backend), dims_(dims), logit_bits_(logit_bits) {}
  void attend(int64_t layer, LayerActivations& s) override;

 private:
  backends::Backend& backend_;
  kernels::AttentionDims dims_;
  int logit_bits_;
};

// What each layer computes from its weights alone, computed once where the weights stay fixed
// (inference: layer_constants): DIFF V1's and GDA's lambda per layer, and DIFF V1's head-norm gain
// times (1 - lambda_init). Two small ops a layer fewer in every step (on a GPU, two dispatches
// the attention waits for); the same ops as a pass would run, so the same bits.
struct LayerConstants {
  backends::DeviceBuffer lambdas;          // [layers]; empty where the variant has no layer lambda
  backends::DeviceBuffer head_norm_gains;  // [layers][2d]; empty without the head norm
};
LayerConstants layer_constants(backends::Backend& backend, const ModelConfig& config, const ModelTensors& tensors);

// What a pass over the layers shares: the backend, the shape, the RoPE table and the positions.
struct LayerPass {
  backends::Backend& backend;
  const ModelConfig& config;
  int64_t B, T;            // rows N = B * T, token-major
  int64_t position;        // position of every sequence's first row (unless positions is set)
  const backends::DeviceRope& rope;
  backends::DevicePtr<float> head_norm_gain;  // [2d] scratch: DIFF V1's gain times (1 - lambda_init)
  // The engine's batches (infer/engine.h): each row's own position [N], and the reduction order
  // of the projections: rows [0, gemv_rows) in the decode GEMV's, the rest in the prefill GEMM's
  // (MatmulOrder). Null and -1: positions from `position`, the order by size.
  backends::DevicePtr<const int64_t> positions{};
  int64_t gemv_rows = -1;
  // Inference: the residual stream adds up in s.x (the projections accumulate into it), with no
  // s.y to keep for a backward pass: an add and a copy a layer fewer.
  bool residual_in_place = false;
  // Inference: the layers' constants, which the pass then reads instead of computing (the
  // attention core reads the lambdas itself). Null: computed in each pass.
  const LayerConstants* constants = nullptr;
  int64_t rows() const { return B * T; }
};

// y[N, out] (= or +=) x[N, in] W^T for the pass's rows, in the pass's reduction orders. Every
// projection of the forward blocks goes through this one call.
void project(const LayerPass& pass, const backends::DeviceMatrix& W, backends::DevicePtr<const float> x,
             backends::DevicePtr<float> y, bool accumulate = false);

// s.y = s.x + o_proj(HeadNorm(Attention(RoPE(q, k), v))) with q, k, v from RMSNorm(s.x)
// (paper Eq. 4; the head norm only for DIFF V1, docs/SPEC.md §2.2 Eq. 3). Fills s.h1 to s.att_final.
// w gives the vectors (norm gains, lambdas), m the matrices in their storage types. With
// residual_in_place, s.x += o_proj(...) instead.
void attention_block_forward(const LayerPass& pass, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                             LayerActivations& s, AttentionCore& core);
// out = s.y + down(silu(gate(h2)) * up(h2)), h2 = RMSNorm(s.y) (paper Eq. 5). out is the next
// layer's input and may not alias s.y. With residual_in_place, s.x in place of s.y, and out must
// be s.x.
void mlp_block_forward(const LayerPass& pass, const LayerTensors& w, const LayerMatrices& m, LayerActivations& s,
                       backends::DevicePtr<float> out);

// Backward of the blocks (F32 weights only), accumulating weight gradients into gw and using
// acts' scratch.
// dx holds d loss / d (block output) on entry and d loss / d (block input) on return.
void mlp_block_backward(const LayerPass& pass, const LayerTensors& w, LayerTensors& gw, LayerActivations& s,
                        Activations& acts, backends::DevicePtr<float> dx);
void attention_block_backward(const LayerPass& pass, const LayerTensors& w, LayerTensors& gw, int64_t layer,
                              LayerActivations& s, Activations& acts, backends::DevicePtr<float> dx);

}  // namespace difftx::model
