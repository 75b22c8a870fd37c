// The forward pass of a hybrid stack (config.h HybridConfig: Phi-4-mini-flash's SambaY,
// docs/MODEL.md "SambaY") over whole sequences, beside decoder.h's for docs/SPEC.md's decoder:
// the layers of model/hybrid_layer.h, then the final LayerNorm and the head. Each sequence's Mamba
// layers start from a zero conv window and state; attention is the fused forward over the
// sequence's own keys and values (the shared layer's kept for the cross layers). Everything is
// computed by the model's backend (backends/backend.h) on its memory; inputs and targets are in
// host memory, logits come back to it. Forward only: `difftx logits` and `eval`; the engine's
// step is infer/hybrid_forward.h.
#pragma once
#include <cstdint>

#include "backends/backend.h"
#include "model/decoder.h"
#include "model/hybrid_activations.h"
#include "model/model.h"

namespace difftx::model {

// The stack over `inputs` [B, T] (host memory); fills acts.h_final.
void hybrid_forward(const Model& model, HybridActivations& acts, const int32_t* inputs);
// Logits of every position, out [B * T, V] in host memory.
void hybrid_logits(const Model& model, HybridActivations& acts, const int32_t* inputs, float* out);
// Evaluation: summed loss and count over the counted targets [B, T] (kIgnoreId does not count).
LossSum hybrid_loss(const Model& model, HybridActivations& acts, const int32_t* inputs, const int32_t* targets);

}  // namespace difftx::model
