#include "model/model.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"

namespace difftx::model {

Model::Model(const ModelConfig& c, int64_t arena_floats)
    : config(c),
      table(c),
      backend(&backends::cpu_backend()),
      weights(backend->allocate(std::max(table.total_floats(), arena_floats) * int64_t{sizeof(float)})) {
  bind_views();
}

Model::Model(const ModelConfig& c, const MatrixTypes& types)
    : config(c),
      table(c, types),
      backend(&backends::cpu_backend()),
      weights(backend->allocate(table.total_floats() * int64_t{sizeof(float)})),
      packed(backend->allocate(table.packed_bytes())) {
  bind_views();
}

void Model::bind_views() {
  tensors = bind_tensors(config, table, weights.as<float>());
  matrices = bind_matrices(config, table, weights.as<float>(), packed.as<unsigned char>());
}

int64_t Model::weight_bytes() const {
  int64_t bytes = 0;
  for (const ParamInfo& p : table.params()) bytes += p.bytes();
  return bytes;
}

void Model::move_to(backends::Backend& device) {
  if (&device == backend) return;
  DIFFTX_CHECK(!engine_->matrices.embed.data && engine_->storage.empty(),
               "move_to: the engine's matrices were built on ", backend->info().name);
  backends::DeviceBuffer on_device_weights = device.allocate(weights.bytes(), false);
  backends::DeviceBuffer on_device_packed = device.allocate(packed.bytes(), false);
  device.upload(on_device_weights.as<void>(), host_weights(), weights.bytes());
  device.upload(on_device_packed.as<void>(), host_packed(), packed.bytes());
  device.synchronize();
  weights = std::move(on_device_weights);  // the host's copy goes back as the old buffers go
  packed = std::move(on_device_packed);
  backend = &device;
  bind_views();
}

namespace {

// The matrices the engine multiplies by: every layer's projections and the head (once: when tied
// it is the embedding). A hybrid stack's are the split views of its fused matrices (and the
// GMU's in_proj, which is whole), not the fused ones.
std::vector<backends::DeviceMatrix*> engine_products(const ModelConfig& c, ModelMatrices& m) {
  std::vector<backends::DeviceMatrix*> all;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    LayerMatrices& l = m.layers[i];
    for (backends::DeviceMatrix* w : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      all.push_back(w);
    if (!c.hybrid) continue;
    for (backends::DeviceMatrix* w : {&l.mamba_x, &l.mamba_z, &l.ssm_dt, &l.ssm_b, &l.ssm_c, &l.dt_proj})
      all.push_back(w);
    if (c.hybrid->layers[i] == LayerKind::gmu) all.push_back(&l.in_proj);
  }
  all.push_back(&m.lm_head);
  return all;
}

}  // namespace

void Model::build_engine_matrices(bool release) const {
  ModelMatrices& m = engine_->matrices;
  m = matrices;
  const backends::DevicePtr<const void> embedding = matrices.embed.data;
  for (backends::DeviceMatrix* w : engine_products(config, m)) {
    if (!w->data) continue;
    // one matrix at a time, so that with `release` memory holds the stored bytes of the matrices
    // not yet prepared and the prepared form of the others
    backends::PreparedMatrix prepared = backend->prepare_matrix(*w, release, w->data == embedding);
    *w = prepared.matrix;
    if (prepared.storage) engine_->storage.push_back(std::move(prepared.storage));
  }
  if (config.tie_word_embeddings) m.embed = m.lm_head;
}

const ModelMatrices& Model::engine_matrices() const {
  std::call_once(engine_->built, [this] { build_engine_matrices(false); });
  return engine_->matrices;
}

const ModelMatrices& Model::engine_matrices_only() {
  bool built_here = false;
  std::call_once(engine_->built, [&] {
    build_engine_matrices(true);
    built_here = true;
  });
  DIFFTX_CHECK(built_here, "engine_matrices_only: the engine's matrices were built already, beside the stored ones");
  // `matrices` no longer holds what was released: null there too, so that nothing multiplies by it
  std::vector<backends::DeviceMatrix*> stored = engine_products(config, matrices),
                                       prepared = engine_products(config, engine_->matrices);
  for (size_t i = 0; i < stored.size(); ++i)
    if (!prepared[i]->data) stored[i]->data = nullptr;
  if (config.tie_word_embeddings) matrices.embed = matrices.lm_head;
  return engine_->matrices;
}

void require_f32_weights(const Model& model, const std::string& what) {
  if (model.table.all_f32()) return;
  for (const ParamInfo& p : model.table.params())
    DIFFTX_CHECK(!p.packed(), what, " needs F32 weights, but tensor '", p.name, "' is held as ",
                 kernels::weight_type_name(p.type), " (load the model with its matrices widened to F32)");
}

}  // namespace difftx::model
