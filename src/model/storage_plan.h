// Converting a model's matrices to an inference storage type (docs/FORMATS.md "Weight storage
// types"): which type each matrix gets, and the conversion itself.
#pragma once
#include <optional>
#include <span>

#include "model/model.h"

namespace difftx::model {

// The storage type of every matrix when a model is converted to `type`:
//   - every projection (q, k, v, o, gate, up, down), the embedding and the LM head in `type`;
//   - for the 4-bit types (q4_0, q4_k) the embedding and the LM head in q8_0 (docs/EXPERIMENTS.md
//     has what this buys);
//   - a matrix whose rows are not whole blocks of its type in bf16;
//   - DIFF V2's lambda_proj and every vector stay F32.
// `head`, when given, replaces the embedding's and the LM head's type (llama.cpp's
// --token-embedding-type / --output-tensor-type). F32 everywhere gives an empty map.
MatrixTypes storage_plan(const ModelConfig& config, kernels::WeightType type,
                         std::optional<kernels::WeightType> head = std::nullopt);

// A copy of `model` (in any precision) with its matrices held as `types` says: quantized from F32
// by kernels/quant/quantize.h, or widened first where the source is itself packed.
Model convert_matrices(const Model& model, const MatrixTypes& types);

// One tensor of that conversion: p's F32 weights `widened` into `dst` (p.bytes() bytes), in
// p.type: quantized (rows on the OpenMP threads), or copied when p is F32.
void convert_tensor(const ParamInfo& p, std::span<const float> widened, unsigned char* dst);

}  // namespace difftx::model
