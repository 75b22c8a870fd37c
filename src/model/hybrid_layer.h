// One layer of a hybrid stack (config.h HybridConfig: Phi-4-mini-flash's SambaY, docs/MODEL.md
// "SambaY"): x += mixer(LN(x)); x += fc2(up * silu(gate)), [gate | up] = fc1(LN(x)), with LN a
// LayerNorm with a bias. The mixers: Mamba-1 (the memory layer also keeps its scan output), DIFF
// V1 attention over a sliding window or the whole causal past (biased Wqkv and out_proj, the head
// norm), the GMU, and cross-attention over the shared layer's keys and values.
//
// Two drivers run these layers, as layer.h's run the decoder's: the whole-sequence forward
// (model/hybrid_decoder.cpp: `logits`, `eval`) and the engine's step (infer/hybrid_forward.cpp).
// What differs between them is a HybridCore's: where each sequence's Mamba conv window and state
// come from, and where attention's keys and values are; and the rows' reduction orders
// (HybridPass::gemv_rows). Every op works per row, so a row's bits depend on its own sequence.
#pragma once
#include <cstdint>

#include "backends/backend.h"
#include "kernels/mamba.h"
#include "model/hybrid_activations.h"
#include "model/parameters.h"

namespace difftx::model {

struct HybridPass {
  backends::Backend& backend;
  const ModelConfig& config;
  int64_t rows;            // N: the rows of `HybridActivations` the layer runs over
  int64_t gemv_rows = -1;  // rows [0, gemv_rows) in MatmulOrder::gemv, the rest gemm; -1: by_size for all
};

// A driver's sequence mixing: what reads or carries state across a sequence's rows.
class HybridCore {
 public:
  virtual ~HybridCore() = default;
  // u = silu(conv(xs) + bias) over the rows, each sequence continuing its conv window.
  virtual void mamba_conv(int64_t layer, const kernels::MambaDims& dims, const LayerTensors& w,
                          HybridActivations& a) = 0;
  // y = the selective scan of (u, dt_in, B_ssm, C_ssm) with the D skip, each sequence continuing its state.
  virtual void mamba_scan(int64_t layer, const kernels::MambaDims& dims, const LayerTensors& w,
                          HybridActivations& a) = 0;
  // att = the layer's differential attention of q (lambda computed) over its keys and values: the
  // rows' own k and v (stored for later rows where the driver keeps them), the last
  // sliding_window of them for a sliding layer, the shared layer's for a cross layer.
  virtual void attend(int64_t layer, LayerKind kind, HybridActivations& a) = 0;
};

kernels::MambaDims hybrid_mamba_dims(const ModelConfig& config);

// Layer `layer` over the rows: a.x is its input and its output.
void hybrid_layer_forward(const HybridPass& p, const LayerTensors& w, const LayerMatrices& m, int64_t layer,
                          HybridActivations& a, HybridCore& core);

// out[rows, D] = the final LayerNorm of x[rows, D] (mean and rstd: a's).
void hybrid_final_norm(const HybridPass& p, const ModelTensors& t, backends::DevicePtr<const float> x,
                       backends::DevicePtr<float> out, int64_t rows, HybridActivations& a);

}  // namespace difftx::model
