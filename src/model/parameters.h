// The parameter table: every tensor of the model by its docs/SPEC.md §3 name, with its shape and its
// place in one flat F32 arena. The same layout serves weights, gradients and optimizer moments.
// For inference a table may hold matrices in a narrower storage type (kernels/quant/weight_type.h:
// BF16, F16, Q8_0, Q4_0, Q4_K): those live in a second, byte arena and have no F32 place.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/rng.h"
#include "kernels/quant/matmul.h"
#include "model/config.h"

namespace difftx::model {

struct LayerTensors;
struct ModelTensors;
struct LayerMatrices;
struct ModelMatrices;

// Storage types of matrices by tensor name; a matrix not named is F32.
using MatrixTypes = std::map<std::string, kernels::WeightType>;

// How a tensor is initialised (docs/MODEL.md): norm gains 1; linear weights and embeddings
// N(0, 0.02); the residual output projections (o_proj, down_proj) N(0, 0.02 / sqrt(2L)); the
// lambda vectors N(0, 0.1) (docs/SPEC.md §2.2); PolyNorm's weights 1/3 and bias 0 (docs/MODEL.md).
enum class ParamInit { ones, normal, residual_normal, lambda_normal, thirds, zeros };

// One entry of the parameter schema: everything the table, binding, initialisation, weight decay
// and the parameter count need to know about a tensor.
struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset;  // in floats, from the F32 arena's start (64-byte aligned); -1 when packed
  int64_t numel;
  bool decay;      // AdamW weight decay: matrices (ndim >= 2) yes; gains and lambda vectors no
  ParamInit init;
  int64_t layer;                        // -1 for the model-level tensors
  backends::DevicePtr<float> LayerTensors::*layer_view;  // where bind_tensors puts it (layer tensors)
  backends::DevicePtr<float> ModelTensors::*model_view;  // (model-level tensors)
  // The matrices the forward pass multiplies by (projections, embedding, LM head): where
  // bind_matrices puts them; both null for the vectors, which are always F32.
  backends::DeviceMatrix LayerMatrices::*layer_matrix = nullptr;
  backends::DeviceMatrix ModelMatrices::*model_matrix = nullptr;
  kernels::WeightType type = kernels::WeightType::f32;
  int64_t byte_offset = -1;  // in the packed arena (64-byte aligned) when type is not F32

  bool is_matrix() const { return layer_matrix || model_matrix; }
  bool packed() const { return type != kernels::WeightType::f32; }
  // Bytes as held (F32 tensors: 4 per element), wherever the tensor lives.
  int64_t bytes() const { return kernels::weight_matrix_bytes(type, shape[0], numel / shape[0]); }
  // A matrix that may be held in a narrower type (DIFF V2's lambda_proj [H, D] stays F32).
  bool packable() const;
};

class ParameterTable {
 public:
  // types: matrices stored in another type than F32 (by name); naming a tensor that is not one of
  // the config's matrices, or a type whose blocks do not divide a row, is an error.
  explicit ParameterTable(const ModelConfig& config, const MatrixTypes& types = {});
  const std::vector<ParamInfo>& params() const { return params_; }
  const ParamInfo* find(const std::string& name) const;  // null if absent
  int64_t total_floats() const { return total_; }
  int64_t packed_bytes() const { return packed_; }
  bool all_f32() const { return packed_ == 0; }  // trainable: every tensor in the F32 arena

 private:
  std::vector<ParamInfo> params_;
  int64_t total_ = 0;
  int64_t packed_ = 0;
};

// Typed device addresses into an arena laid out by a ParameterTable (weights or gradients alike),
// on the model's backend.
struct LayerTensors {
  using F32 = backends::DevicePtr<float>;
  F32 input_norm;        // [D]
  F32 q_proj;            // [q_width, D]
  F32 k_proj;            // [k_width, D]
  F32 v_proj;            // [v_width, D]
  F32 o_proj;            // [D, out_width]
  F32 lambda_q1;  // diff: [d] each
  F32 lambda_k1;
  F32 lambda_q2;
  F32 lambda_k2;
  F32 subln;      // diff with diff_subln: [2d]
  F32 lambda_proj;  // diff2: [H, D]
  F32 post_norm;         // [D]
  F32 gate_proj;         // [F, D]
  F32 up_proj;           // [F, D]
  F32 down_proj;         // [D, F]
  F32 act_weight;  // PolyNorm: [3]
  F32 act_bias;    // PolyNorm: [1]
  // A hybrid stack's layers (config.h HybridConfig, Hugging Face's names in parameters.cpp); the
  // mixer's output projection is o_proj, fc2 is down_proj. E Mamba channels, S state, K conv taps,
  // R dt rank; Hq, Hkv Hugging Face's heads of width d.
  F32 input_norm_bias;  // LayerNorm biases [D]
  F32 post_norm_bias;
  F32 qkv_proj;     // attention: Wqkv [(Hq + 2 Hkv) d, D], a cross layer's [Hq d, D]
  F32 qkv_bias;     // [Wqkv's rows]
  F32 o_bias;       // [D]
  F32 fc1;          // [2F, D]: the gate's rows, then up's
  F32 in_proj;      // Mamba [2E, D] (x's rows, then z's); GMU [E, D]
  F32 conv_weight;  // Mamba [E, 1, K]
  F32 conv_bias;    // [E]
  F32 x_proj;       // [R + 2S, E]: dt's, B's and C's rows
  F32 dt_proj;      // [E, R]
  F32 dt_bias;      // [E]
  F32 a_log;        // [E, S]
  F32 d_skip;       // [E]
};
struct ModelTensors {
  using F32 = backends::DevicePtr<float>;
  F32 embed;       // [V, D]
  F32 final_norm;  // [D]
  F32 lm_head;     // [V, D]; equals embed when tied
  F32 final_norm_bias;  // a hybrid stack's final LayerNorm [D]
  std::vector<LayerTensors> layers;
};
ModelTensors bind_tensors(const ModelConfig& config, const ParameterTable& table, backends::DevicePtr<float> arena);

// Every matrix of the forward pass in its storage type (views into the F32 arena or the packed
// one). The forward blocks (layer.h) multiply by these; the backward uses LayerTensors (F32).
struct LayerMatrices {
  backends::DeviceMatrix q_proj, k_proj, v_proj, o_proj;
  backends::DeviceMatrix lambda_proj;  // diff2 (always F32: [H, D] is tiny)
  backends::DeviceMatrix gate_proj, up_proj, down_proj;
  backends::DeviceMatrix qkv_proj, fc1, in_proj, x_proj, dt_proj;  // a hybrid stack's (LayerTensors)
  // A hybrid stack's fused matrices split by rows (views of the same bytes), which its forward
  // multiplies by: q_proj, k_proj, v_proj (Wqkv), gate_proj, up_proj (fc1), and Mamba's
  // in_proj as mamba_x, mamba_z and x_proj as ssm_dt, ssm_b, ssm_c. The GMU's in_proj is whole.
  backends::DeviceMatrix mamba_x, mamba_z, ssm_dt, ssm_b, ssm_c;
};
struct ModelMatrices {
  backends::DeviceMatrix embed, lm_head;  // lm_head is embed when tied
  std::vector<LayerMatrices> layers;
};
ModelMatrices bind_matrices(const ModelConfig& config, const ParameterTable& table, backends::DevicePtr<float> arena,
                            backends::DevicePtr<unsigned char> packed);

// Every tensor by its ParamInit, in table order from one random stream.
void init_parameters(const ModelConfig& config, const ParameterTable& table, float* arena, uint64_t seed);
// One tensor by its ParamInit into out (p.numel floats), drawing from rng: init_parameters does
// this for each tensor in table order (model/initial_weights.h: the same, a tensor at a time).
void init_tensor(const ModelConfig& config, const ParamInfo& p, Rng& rng, float* out);
// How many draws init_tensor takes from the stream for p (0 for the constant ones).
uint64_t init_draws(const ParamInfo& p);

}  // namespace difftx::model
