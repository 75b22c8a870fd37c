#include "model/model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "kernels/quant/weight_panels.h"

namespace difftx {

Model::Model(const ModelConfig& c, int64_t arena_floats)
    : config(c),
      table(c),
      weights(std::max(table.total_floats(), arena_floats)),
      tensors(bind_tensors(c, table, weights.data())),
      matrices(bind_matrices(c, table, weights.data(), nullptr)) {}

Model::Model(const ModelConfig& c, const MatrixTypes& types)
    : config(c),
      table(c, types),
      weights(table.total_floats()),
      packed(table.packed_bytes()),
      tensors(bind_tensors(c, table, weights.data())),
      matrices(bind_matrices(c, table, weights.data(), packed.data())) {}

int64_t Model::weight_bytes() const {
  int64_t bytes = 0;
  for (const ParamInfo& p : table.params()) bytes += p.bytes();
  return bytes;
}

namespace {

// The matrices the engine multiplies by: every layer's projections and the head (once: when tied
// it is the embedding).
std::vector<WeightMatrix*> engine_matrices(ModelMatrices& m) {
  std::vector<WeightMatrix*> all;
  for (LayerMatrices& l : m.layers)
    for (WeightMatrix* w : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      all.push_back(w);
  all.push_back(&m.lm_head);
  return all;
}

// Gives the whole pages inside [data, data + bytes) back to the system (they read as zeros after).
void release_pages(const void* data, int64_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (start + page - 1) / page * page, last = (start + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace

void Model::build_panels(bool release) const {
  config.require_decoder("the engine (generate, chat, serve, bench)");
  ModelMatrices& m = panels_->matrices;
  m = matrices;
  const void* embedding = matrices.embed.data;
  for (WeightMatrix* w : engine_matrices(m)) {
    if (!w->data || !quant::reads_panels(w->type)) continue;
    // one buffer a matrix, zeroed and filled before the next one is allocated: with `release`,
    // memory holds the stored bytes of the matrices not yet packed and the panels of the others
    Buffer<unsigned char>& out = panels_->bytes.emplace_back(quant::weight_panels_bytes(w->type, w->rows, w->cols));
    const int64_t panels = quant::panel_count(w->rows), panel_bytes = quant::panel_bytes(w->type, w->cols);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < panels; ++p) quant::pack_panels(*w, p, 1, out.data() + p * panel_bytes);
    w->panels = out.data();
    // the tied head is the embedding, whose lookup reads rows back from the panels where it can
    if (release && (w->data != embedding || quant::panels_keep_rows(w->type))) {
      release_pages(w->data, weight_matrix_bytes(w->type, w->rows, w->cols));
      w->data = nullptr;
    }
  }
  if (config.tie_word_embeddings) m.embed = m.lm_head;
}

const ModelMatrices& Model::panel_matrices() const {
  std::call_once(panels_->built, [this] { build_panels(false); });
  return panels_->matrices;
}

const ModelMatrices& Model::panel_matrices_only() {
  bool built_here = false;
  std::call_once(panels_->built, [&] {
    build_panels(true);
    built_here = true;
  });
  DIFFTX_CHECK(built_here, "panel_matrices_only: the panels were built already, beside the stored matrices");
  // `matrices` no longer holds what was released: null there too, so that nothing multiplies by it
  std::vector<WeightMatrix*> stored = engine_matrices(matrices), panelled = engine_matrices(panels_->matrices);
  for (size_t i = 0; i < stored.size(); ++i)
    if (!panelled[i]->data) stored[i]->data = nullptr;
  if (config.tie_word_embeddings) matrices.embed = matrices.lm_head;
  return panels_->matrices;
}

void require_f32_weights(const Model& model, const std::string& what) {
  if (model.table.all_f32()) return;
  for (const ParamInfo& p : model.table.params())
    DIFFTX_CHECK(!p.packed(), what, " needs F32 weights, but tensor '", p.name, "' is held as ",
                 weight_type_name(p.type), " (load the model with its matrices widened to F32)");
}

}  // namespace difftx
