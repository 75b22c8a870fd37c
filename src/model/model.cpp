#include "model/model.h"

#include <algorithm>

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

const ModelMatrices& Model::panel_matrices() const {
  std::call_once(panels_->built, [this] {
    ModelMatrices& m = panels_->matrices;
    m = matrices;
    std::vector<WeightMatrix*> targets;  // the head once when tied (it is the embedding)
    for (LayerMatrices& l : m.layers)
      for (WeightMatrix* w : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
        targets.push_back(w);
    targets.push_back(&m.lm_head);
    std::vector<int64_t> offsets;
    int64_t total = 0;
    for (WeightMatrix* w : targets) {
      const bool packs = w->data && quant::reads_panels(w->type);
      offsets.push_back(packs ? total : -1);
      if (packs) total += (quant::weight_panels_bytes(w->type, w->rows, w->cols) + 63) / 64 * 64;
    }
    if (total == 0) return;
    panels_->bytes.resize(total);
    for (size_t i = 0; i < targets.size(); ++i) {
      if (offsets[i] < 0) continue;
      WeightMatrix& w = *targets[i];
      unsigned char* out = panels_->bytes.data() + offsets[i];
      const int64_t panels = (w.rows + quant::kPanelHeight - 1) / quant::kPanelHeight;
      const int64_t panel_bytes = quant::panel_bytes(w.type, w.cols);
#pragma omp parallel for schedule(static)
      for (int64_t p = 0; p < panels; ++p) quant::pack_panels(w, p, 1, out + p * panel_bytes);
      w.panels = out;
    }
    if (config.tie_word_embeddings) m.embed = m.lm_head;
  });
  return panels_->matrices;
}

void require_f32_weights(const Model& model, const std::string& what) {
  if (model.table.all_f32()) return;
  for (const ParamInfo& p : model.table.params())
    DIFFTX_CHECK(!p.packed(), what, " needs F32 weights, but tensor '", p.name, "' is held as ",
                 weight_type_name(p.type), " (load the model with its matrices widened to F32)");
}

}  // namespace difftx
