// The parameter table: every tensor of the model by its docs/SPEC.md §3 name, with its shape and its
// place in one flat arena. The same layout serves weights, gradients and optimizer moments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace difftx {

struct LayerTensors;
struct ModelTensors;

// How a tensor is initialised (docs/MODEL.md): norm gains 1; linear weights and embeddings
// N(0, 0.02); the residual output projections (o_proj, down_proj) N(0, 0.02 / sqrt(2L)); the
// lambda vectors N(0, 0.1) (docs/SPEC.md §2.2).
enum class ParamInit { ones, normal, residual_normal, lambda_normal };

// One entry of the parameter schema: everything the table, binding, initialisation, weight decay
// and the parameter count need to know about a tensor.
struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset;  // in floats, from the arena's start (64-byte aligned)
  int64_t numel;
  bool decay;      // AdamW weight decay: matrices (ndim >= 2) yes; gains and lambda vectors no
  ParamInit init;
  int64_t layer;                        // -1 for the model-level tensors
  float* LayerTensors::*layer_view;     // where bind_tensors puts it (layer tensors)
  float* ModelTensors::*model_view;     // (model-level tensors)
};

class ParameterTable {
 public:
  explicit ParameterTable(const ModelConfig& config);
  const std::vector<ParamInfo>& params() const { return params_; }
  const ParamInfo* find(const std::string& name) const;  // null if absent
  int64_t total_floats() const { return total_; }

 private:
  std::vector<ParamInfo> params_;
  int64_t total_ = 0;
};

// Typed pointers into an arena laid out by a ParameterTable (weights or gradients alike).
struct LayerTensors {
  float* input_norm;        // [D]
  float* q_proj;            // [q_width, D]
  float* k_proj;            // [k_width, D]
  float* v_proj;            // [v_width, D]
  float* o_proj;            // [D, out_width]
  float* lambda_q1 = nullptr;  // diff: [d] each
  float* lambda_k1 = nullptr;
  float* lambda_q2 = nullptr;
  float* lambda_k2 = nullptr;
  float* subln = nullptr;      // diff with diff_subln: [2d]
  float* lambda_proj = nullptr;  // diff2: [H, D]
  float* post_norm;         // [D]
  float* gate_proj;         // [F, D]
  float* up_proj;           // [F, D]
  float* down_proj;         // [D, F]
};
struct ModelTensors {
  float* embed;       // [V, D]
  float* final_norm;  // [D]
  float* lm_head;     // [V, D]; equals embed when tied
  std::vector<LayerTensors> layers;
};
ModelTensors bind_tensors(const ModelConfig& config, const ParameterTable& table, float* arena);

// Every tensor by its ParamInit, in table order from one random stream.
void init_parameters(const ModelConfig& config, const ParameterTable& table, float* arena, uint64_t seed);

}  // namespace difftx
