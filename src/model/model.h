// A model in memory: its config, its parameter table and the weights arenas, on one backend
// (backends/backend.h). Models are made and loaded on the CPU; move_to() places one on another
// device.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx::model {

// Model::engine_matrices's copy, built once.
struct EngineMatrices {
  std::once_flag built;
  std::vector<backends::DeviceBuffer> storage;  // the prepared matrices' memory (CPU: GEMM panels)
  ModelMatrices matrices;
};

struct Model {
  // Every tensor in F32 (trainable), on the CPU. arena_floats: a larger weights arena than the
  // table needs (zero padding after the last tensor), for collectives that move the arena in equal
  // shards (train/data_parallel.h).
  explicit Model(const ModelConfig& config, int64_t arena_floats = 0);
  // For inference: the matrices `types` names stored in those types (parameters.h), the rest F32.
  Model(const ModelConfig& config, const MatrixTypes& types);
  Model(Model&&) = default;

  ModelConfig config;
  ParameterTable table;
  backends::Backend* backend;       // where the weights are and the model computes
  backends::DeviceBuffer weights;   // the F32 tensors, laid out by `table`
  backends::DeviceBuffer packed;    // the matrices in other storage types, laid out by `table`
  ModelTensors tensors;             // F32 views into `weights` (null for packed matrices)
  ModelMatrices matrices;           // every matrix of the forward pass in its storage type

  // The arenas on the host (a model on the CPU backend): for loading, saving and training. An
  // error for a model on another device.
  float* host_weights() const { return weights.as<float>().host(); }
  unsigned char* host_packed() const { return packed.as<unsigned char>().host(); }
  int64_t weight_floats() const { return weights.bytes() / static_cast<int64_t>(sizeof(float)); }

  // Bytes of every weight as held in memory (the tied head counted once).
  int64_t weight_bytes() const;

  // Moves the weights to `device` (a copy there, the host's memory given back); nothing to do
  // when the model is there already. Before engine_matrices().
  void move_to(backends::Backend& device);

  // `matrices` in the backend's own form for its products (Backend::prepare_matrix; the CPU's
  // GEMM panels for the BF16, F16 and block-type matrices whose GEMM at this CPU level reads
  // them): the engine's products (infer/batch_forward.h). Built on the first call (once, from any
  // thread) and kept, so that such matrices are held twice.
  const ModelMatrices& engine_matrices() const;
  // The same, built now with each matrix's stored bytes given back as soon as its prepared form
  // holds them all, so that memory holds those weights once (a tied Q4_K head keeps them: the token
  // lookup cannot read its rows back from the panels). For processes that only run the engine:
  // afterwards `matrices` has null data for them (a product by them is an error; saving the model
  // would write zeros), and only engine_matrices() multiplies by them. An error once
  // engine_matrices() was called.
  const ModelMatrices& engine_matrices_only();

 private:
  void build_engine_matrices(bool release) const;
  void bind_views();

  std::unique_ptr<EngineMatrices> engine_ = std::make_unique<EngineMatrices>();
};

// Training, checkpoints and the analyses that read weights need every tensor in F32; `what`
// names the operation in the error.
void require_f32_weights(const Model& model, const std::string& what);

}  // namespace difftx::model
