// A model in memory: its config, its parameter table and the weights arenas.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "model/config.h"
#include "model/parameters.h"

namespace difftx {

// Model::panel_matrices's copy, built once.
struct PanelMatrices {
  std::once_flag built;
  std::vector<Buffer<unsigned char>> bytes;  // a matrix's panels each
  ModelMatrices matrices;
};

struct Model {
  // Every tensor in F32 (trainable). arena_floats: a larger weights arena than the table needs
  // (zero padding after the last tensor), for collectives that move the arena in equal shards
  // (train/data_parallel.h).
  explicit Model(const ModelConfig& config, int64_t arena_floats = 0);
  // For inference: the matrices `types` names stored in those types (parameters.h), the rest F32.
  Model(const ModelConfig& config, const MatrixTypes& types);
  Model(Model&&) = default;

  ModelConfig config;
  ParameterTable table;
  Buffer<float> weights;           // the F32 tensors, laid out by `table`
  Buffer<unsigned char> packed;    // the matrices in other storage types, laid out by `table`
  ModelTensors tensors;            // F32 views into `weights` (null for packed matrices)
  ModelMatrices matrices;          // every matrix of the forward pass in its storage type

  // Bytes of every weight as held in memory (the tied head counted once).
  int64_t weight_bytes() const;

  // `matrices` with GEMM panels (kernels/quant/weight_panels.h) for the BF16, F16 and block-type
  // matrices whose GEMM at this CPU level reads them: the engine's products
  // (infer/batch_forward.h). Built on the first call (once, from any thread) and kept, so they
  // hold those matrices' bytes a second time.
  const ModelMatrices& panel_matrices() const;
  // The same, built now with each matrix's stored bytes given back to the system as soon as its
  // panels are written, so that memory holds those weights once (a tied Q4_K head keeps them: the
  // token lookup cannot read its rows back from the panels). For processes that only run the
  // engine: afterwards `matrices` has null data for them (a product by them is an error; saving
  // the model would write zeros), and only panel_matrices() multiplies by them. An error once
  // panel_matrices() was called.
  const ModelMatrices& panel_matrices_only();

 private:
  void build_panels(bool release) const;

  std::unique_ptr<PanelMatrices> panels_ = std::make_unique<PanelMatrices>();
};

// Training, checkpoints and the analyses that read weights need every tensor in F32; `what`
// names the operation in the error.
void require_f32_weights(const Model& model, const std::string& what);

}  // namespace difftx
