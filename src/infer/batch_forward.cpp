#include "infer/batch_forward.h"

#include <algorithm>

#include "core/error.h"
#include "model/decoder.h"
#include "model/layer.h"

namespace difftx::infer {
namespace {

using backends::DevicePtr;

// The attention of a step: every row's keys and values into its blocks, then every row over
// its sequence's positions [0, position]. A layer lambda comes from the layers' constants.
class PagedAttention : public model::AttentionCore {
 public:
  PagedAttention(backends::Backend& backend, const backends::PagedKv& kv, DevicePtr<const int32_t> slots,
                 const backends::PagedRows& rows, const model::LayerConstants& constants)
      : backend_(backend), kv_(kv), slots_(slots), rows_(rows), constants_(constants) {}

  void attend(int64_t layer, model::LayerActivations& s) override {
    backend_.paged_store(kv_, layer, slots_, rows_.count, s.k, s.v);
    const DevicePtr<const float> lambda =
        constants_.lambdas ? constants_.lambdas.as<const float>() + layer : DevicePtr<const float>(s.lambda);
    backend_.paged_attention(kv_, layer, rows_, s.q, lambda, s.att);
  }

 private:
  backends::Backend& backend_;
  const backends::PagedKv& kv_;
  DevicePtr<const int32_t> slots_;
  const backends::PagedRows& rows_;
  const model::LayerConstants& constants_;
};

template <typename T>
void upload(backends::Backend& b, const backends::DeviceBuffer& to, const std::vector<T>& from, int64_t n) {
  b.upload(to.as<void>(), from.data(), n * int64_t{sizeof(T)});
}

}  // namespace

int64_t longest_run(std::span<const BatchRow> rows) {
  int64_t longest = rows.empty() ? 0 : 1, run = 1;
  for (size_t i = 1; i < rows.size(); ++i) {
    run = rows[i].table == rows[i - 1].table && rows[i].position == rows[i - 1].position + 1 ? run + 1 : 1;
    longest = std::max(longest, run);
  }
  return longest;
}

BatchForward::BatchForward(const model::Model& model, KvPool& pool, int64_t max_rows, int64_t context)
    : model_(model),
      matrices_(model.engine_matrices()),
      backend_(*model.backend),
      pool_(pool),
      max_rows_(max_rows),
      acts_(model.config, 1, max_rows, model::ActivationUse::engine, *model.backend, context),
      constants_(model::layer_constants(*model.backend, model.config, model.tensors)) {
  const auto ints = [&](int64_t n, int64_t bytes) { return backend_.allocate(n * bytes, false); };
  positions_ = ints(max_rows, sizeof(int64_t));
  slots_ = ints(max_rows, sizeof(int32_t));
  lengths_ = ints(max_rows, sizeof(int32_t));
  tables_ = ints(max_rows, sizeof(int32_t));
}

void BatchForward::upload_index(int64_t R) {
  StepIndex& x = index_;
  upload(backend_, positions_, x.positions, R);
  backend_.upload(acts_.tokens, x.tokens.data(), R * int64_t{sizeof(int32_t)});
  upload(backend_, slots_, x.slots, R);
  upload(backend_, lengths_, x.lengths, R);
  upload(backend_, tables_, x.tables, R);
  const auto B = static_cast<int64_t>(x.blocks.size());
  if (B > block_capacity_) {
    block_capacity_ = std::max<int64_t>(B, 2 * block_capacity_);
    blocks_ = backend_.allocate(block_capacity_ * int64_t{sizeof(int32_t)}, false);
  }
  upload(backend_, blocks_, x.blocks, B);
  const auto L = static_cast<int64_t>(x.logit_rows.size());
  backend_.upload(acts_.row_index, x.logit_rows.data(), L * int64_t{sizeof(int32_t)});
}

const float* BatchForward::run(std::span<const BatchRow> rows, int64_t gemv_rows,
                               std::span<const std::span<const int32_t>> tables) {
  const model::ModelConfig& c = model_.config;
  const int64_t R = static_cast<int64_t>(rows.size()), D = c.hidden_size, V = c.vocab_size;
  const int64_t P = pool_.block_tokens();
  DIFFTX_CHECK(R >= 1 && R <= max_rows_, "batch of ", R, " rows: must be in [1, ", max_rows_, "]");
  // The step's integers: each row's position and token, the slot its keys and values go to, how
  // many positions it reads, and where its sequence's block table starts in `blocks`.
  StepIndex& x = index_;
  x.blocks.clear();
  std::vector<int32_t> table_start;
  for (const auto& table : tables) {
    table_start.push_back(static_cast<int32_t>(x.blocks.size()));
    x.blocks.insert(x.blocks.end(), table.begin(), table.end());
  }
  x.positions.resize(R);
  x.tokens.resize(R);
  x.slots.resize(R);
  x.lengths.resize(R);
  x.tables.resize(R);
  x.logit_rows.clear();
  int64_t max_length = 0;
  for (int64_t i = 0; i < R; ++i) {
    const BatchRow& r = rows[i];
    DIFFTX_CHECK(r.position >= 0 && r.position < acts_.rope.table.max_T, "row position ", r.position,
                 " is outside the context of ", acts_.rope.table.max_T);
    const std::span<const int32_t> table = tables[r.table];
    DIFFTX_CHECK(r.position / P < static_cast<int64_t>(table.size()), "row position ", r.position,
                 " has no block in its table of ", table.size());
    x.positions[i] = r.position;
    x.tokens[i] = r.token;
    x.slots[i] = static_cast<int32_t>(table[r.position / P] * P + r.position % P);
    x.lengths[i] = static_cast<int32_t>(r.position + 1);
    x.tables[i] = table_start[r.table];
    if (r.logits) x.logit_rows.push_back(static_cast<int32_t>(i));
    max_length = std::max(max_length, r.position + 1);
  }
  upload_index(R);

  model::LayerActivations& s = acts_.layers[0];
  backend_.embed(matrices_.embed, acts_.tokens, s.x, R);
  const backends::PagedKv kv = pool_.paged();
  const backends::PagedRows paged{R,
                                  max_length,
                                  lengths_.as<const int32_t>(),
                                  tables_.as<const int32_t>(),
                                  blocks_.as<const int32_t>(),
                                  longest_run(rows)};
  PagedAttention attention(backend_, kv, slots_.as<const int32_t>(), paged, constants_);
  model::LayerPass pass{backend_, c, 1, R, 0, acts_.rope.table, acts_.head_norm_gain};
  pass.constants = &constants_;
  pass.positions = positions_.as<const int64_t>();
  pass.gemv_rows = gemv_rows;
  pass.residual_in_place = true;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const model::LayerTensors& w = model_.tensors.layers[l];
    const model::LayerMatrices& m = matrices_.layers[l];
    model::attention_block_forward(pass, w, m, l, s, attention);
    model::mlp_block_forward(pass, w, m, s, s.x);  // the next layer's input
  }
  // The final norm and the LM head over the rows that want logits. The head takes the GEMV order
  // for every such row (at most one per sequence and step, where the GEMM would repack the
  // whole head for a few rows): a row's logits still depend on that row alone.
  const auto L = static_cast<int64_t>(x.logit_rows.size());
  if (L == 0) return nullptr;
  backend_.gather_rows(s.x, acts_.row_index, L, D, acts_.x_final);
  backend_.rmsnorm_forward(acts_.x_final, model_.tensors.final_norm, acts_.h_final, acts_.rstd_final, L, D,
                           static_cast<float>(c.rms_norm_eps));
  return logits_.compute(backend_, matrices_.lm_head, acts_.h_final, L, V);
}

}  // namespace difftx::infer
