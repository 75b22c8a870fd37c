#include "infer/hybrid_forward.h"

#include <algorithm>

#include "core/error.h"
#include "infer/scheduler.h"
#include "model/decoder.h"
#include "model/hybrid_layer.h"

namespace difftx::infer {

using model::LayerKind;

namespace {

using backends::DevicePtr;

template <typename T>
void upload(backends::Backend& b, const backends::DeviceBuffer& to, const std::vector<T>& from) {
  b.upload(to.as<void>(), from.data(), static_cast<int64_t>(from.size() * sizeof(T)));
}

}  // namespace

// The step's sequence mixing: Mamba over the state slots, attention over the paged cache.
class HybridForward::Core : public model::HybridCore {
 public:
  explicit Core(HybridForward& f) : f_(f) {}

  void mamba_conv(int64_t layer, const kernels::MambaDims& dims, const model::LayerTensors& w,
                  model::HybridActivations& a) override {
    const int64_t E = dims.channels, K1 = (dims.conv - 1) * E;
    const DevicePtr<float> windows = f_.states_.windows(f_.places_[layer].index);
    backends::Backend& b = f_.backend_;
    each_run(windows, K1, [&](const RowRun& r) {
      const int64_t at = r.first_row * E;
      if (r.slot < 0)
        b.mamba_conv_step(dims, r.count, a.xs + at, E, w.conv_weight, w.conv_bias, windows,
                          f_.device_row_slots_.as<const int32_t>() + r.first_row, a.u + at, f_.states_.spelling());
      else
        b.mamba_conv_prompt(dims, r.count, a.xs + at, E, w.conv_weight, w.conv_bias, windows + r.slot * K1, a.u + at);
    });
  }

  void mamba_scan(int64_t layer, const kernels::MambaDims& dims, const model::LayerTensors& w,
                  model::HybridActivations& a) override {
    const int64_t E = dims.channels, S = dims.state;
    const DevicePtr<float> states = f_.states_.states(f_.places_[layer].index);
    backends::Backend& b = f_.backend_;
    each_run(states, E * S, [&](const RowRun& r) {
      const int64_t at = r.first_row * E, bc = r.first_row * S;
      if (r.slot < 0)
        b.mamba_scan_step(dims, r.count, a.u + at, a.dt_in + at, w.dt_bias, w.a_log, a.B_ssm + bc, a.C_ssm + bc, S,
                          w.d_skip, states, f_.device_row_slots_.as<const int32_t>() + r.first_row, a.y + at,
                          f_.states_.spelling());
      else
        b.mamba_scan_prompt(dims, r.count, a.u + at, a.dt_in + at, w.dt_bias, w.a_log, a.B_ssm + bc, a.C_ssm + bc, S,
                            w.d_skip, states + r.slot * E * S, a.y + at);
    });
  }

  void attend(int64_t layer, LayerKind kind, model::HybridActivations& a) override {
    const LayerPlace& at = f_.places_[layer];
    const bool cross = kind == LayerKind::cross_attention;
    const int32_t g = cross ? f_.groups_[at.group].source : at.group;
    const int64_t block_layer = cross ? 0 : at.index;  // the source is one layer's group
    const PageIndex& p = f_.pages_[g];
    backends::PagedKv kv = f_.pool_.paged();
    kv.dims.window = kind == LayerKind::sliding_attention ? f_.groups_[g].window : 0;
    const backends::PagedRows rows{f_.rows_,
                                   f_.max_length_,
                                   f_.device_lengths_.as<const int32_t>(),
                                   p.device_tables.as<const int32_t>(),
                                   p.device_blocks.as<const int32_t>(),
                                   f_.longest_run_};
    if (!cross) f_.backend_.paged_store(kv, block_layer, p.device_slots.as<const int32_t>(), f_.rows_, a.k, a.v);
    f_.backend_.paged_attention(kv, block_layer, rows, a.q, a.lambda, a.att);
  }

 private:
  // Every run through `advance`, a run with drafted rows one row at a time along its chain of
  // slots (each slot of `floats` floats at base + slot floats), each link starting as a copy of
  // the one before: the state after each of its rows stays in a slot of its own.
  template <typename Advance>
  void each_run(DevicePtr<float> base, int64_t floats, Advance advance) {
    for (const RowRun& r : f_.runs_) {
      if (r.chain < 0) {
        advance(r);
        continue;
      }
      int32_t from = r.slot;
      for (int64_t j = 0; j < r.count; ++j) {
        const int32_t to = j + 1 < r.count ? f_.chain_slots_[r.chain + j] : r.slot;
        f_.backend_.copy(base + to * floats, base + from * floats, floats * int64_t{sizeof(float)});
        advance(RowRun{r.first_row + j, 1, to});
        from = to;
      }
    }
  }

  HybridForward& f_;
};

HybridForward::HybridForward(const model::Model& model, KvPool& pool, StatePool& states,
                             const std::vector<KvCacheGroup>& groups, int64_t max_rows, int64_t context)
    : model_(model),
      acts_(model.config, 1, max_rows, *model.backend, model::HybridUse::engine),  // refuses a backend without the ops
      matrices_(model.engine_matrices()),
      backend_(*model.backend),
      pool_(pool),
      states_(states),
      groups_(groups),
      places_(model.config.num_hidden_layers),
      max_rows_(max_rows),
      context_(context) {
  const model::ModelConfig& c = model.config;
  DIFFTX_CHECK(c.hybrid, "internal: HybridForward for a model without a hybrid stack");
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].layers.size(); ++i)
      places_[groups_[g].layers[i]] = {static_cast<int32_t>(g), static_cast<int64_t>(i)};
    if (groups_[g].kind == CacheKind::recurrent) recurrent_ = static_cast<int32_t>(g);
  }
  DIFFTX_CHECK(recurrent_ >= 0, "internal: a hybrid stack without a recurrent cache group");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    DIFFTX_CHECK(places_[l].group >= 0 || c.hybrid->layers[l] == LayerKind::gmu, "internal: hybrid layer ", l,
                 " (", model::layer_kind_name(c.hybrid->layers[l]), ") has no cache group");
  const auto in_cross_decoder = [&](LayerKind k) { return k == LayerKind::gmu || k == LayerKind::cross_attention; };
  cross_from_ = c.num_hidden_layers;
  while (cross_from_ > 0 && in_cross_decoder(c.hybrid->layers[cross_from_ - 1])) --cross_from_;
  for (int64_t l = cross_from_; l < c.num_hidden_layers; ++l)
    if (c.hybrid->layers[l] == LayerKind::cross_attention) cross_pages_ = groups_[places_[l].group].source;
  pages_.resize(groups_.size());
  const auto ints = [&](int64_t n) { return backend_.allocate(n * int64_t{sizeof(int32_t)}, false); };
  device_lengths_ = ints(max_rows);
  device_row_slots_ = ints(max_rows);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].kind != CacheKind::full && groups_[g].kind != CacheKind::sliding_window) continue;
    pages_[g].device_slots = ints(max_rows);
    pages_[g].device_tables = ints(max_rows);
  }
}

// The step's integers from the plan: lengths, each page group's slots and tables, the Mamba
// runs and state slots (a sequence's first step zeroes its slot), the rows that want logits.
void HybridForward::index_step(const StepPlan& plan) {
  const std::vector<BatchRow>& rows = plan.rows;
  const int64_t R = static_cast<int64_t>(rows.size()), P = pool_.block_tokens();
  DIFFTX_CHECK(R >= 1 && R <= max_rows_, "batch of ", R, " rows: must be in [1, ", max_rows_, "]");
  rows_ = R;
  max_length_ = 0;
  longest_run_ = longest_run(rows);
  lengths_.resize(R);
  logit_rows_.clear();
  for (int64_t i = 0; i < R; ++i) {
    const BatchRow& r = rows[i];
    DIFFTX_CHECK(r.position >= 0 && r.position < context_, "row position ", r.position,
                 " is outside the context of ", context_);
    lengths_[i] = static_cast<int32_t>(r.position + 1);
    max_length_ = std::max(max_length_, r.position + 1);
    if (r.logits) logit_rows_.push_back(static_cast<int32_t>(i));
  }
  backend_.upload(device_lengths_.as<void>(), lengths_.data(), R * int64_t{sizeof(int32_t)});
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (!pages_[g].device_slots) continue;
    PageIndex& p = pages_[g];
    p.slots.resize(R);
    p.tables.resize(R);
    p.blocks.clear();
    std::vector<int32_t> start;
    for (const auto& table : plan.tables[g]) {
      start.push_back(static_cast<int32_t>(p.blocks.size()));
      p.blocks.insert(p.blocks.end(), table.begin(), table.end());
    }
    for (int64_t i = 0; i < R; ++i) {
      const std::span<const int32_t> table = plan.tables[g][rows[i].table];
      const int64_t pos = rows[i].position, b = pos / P;
      DIFFTX_CHECK(b < static_cast<int64_t>(table.size()) && table[b] >= 0, "row position ", pos,
                   " has no block in its table of ", table.size(), " (group ", g, ")");
      p.slots[i] = static_cast<int32_t>(table[b] * P + pos % P);
      p.tables[i] = start[rows[i].table];
    }
    if (static_cast<int64_t>(p.blocks.size()) > p.block_capacity) {
      p.block_capacity = std::max<int64_t>(static_cast<int64_t>(p.blocks.size()), 2 * p.block_capacity);
      p.device_blocks = backend_.allocate(p.block_capacity * int64_t{sizeof(int32_t)}, false);
    }
    upload(backend_, p.device_slots, p.slots);
    upload(backend_, p.device_tables, p.tables);
    upload(backend_, p.device_blocks, p.blocks);
  }
  // Mamba: the state slot of each slice; runs of rows of one slice at consecutive positions, each
  // slice's in position order (its generated rows come first in the plan but follow its prompt
  // rows); the rows of one-row slices together through the step kernels.
  const std::vector<Slice>& slices = plan.slices;
  std::vector<int32_t> slot(slices.size());
  for (size_t t = 0; t < slices.size(); ++t) {
    const std::span<const int32_t> table = plan.tables[recurrent_][t];
    DIFFTX_CHECK(static_cast<int64_t>(table.size()) >= 1 + slices[t].lookahead,
                 "internal: a sequence with ", table.size(), " state slots for ", slices[t].lookahead, " drafted rows");
    slot[t] = table[0];
    if (slices[t].first == 0) states_.clear(slot[t]);
  }
  runs_.clear();
  chain_slots_.clear();
  row_slots_.assign(R, -1);
  std::vector<std::vector<RowRun>> of_slice(slices.size());
  for (int64_t i = 0; i < R;) {
    const int32_t t = rows[i].table;
    int64_t n = 1;
    while (i + n < R && rows[i + n].table == t && rows[i + n].position == rows[i].position + n) ++n;
    if (slices[t].count == 1) row_slots_[i] = slot[t];
    else if (slices[t].lookahead == 0) of_slice[t].push_back({i, n, slot[t]});
    else {  // a sequence's last token and its drafted tokens, all generated: one run
      DIFFTX_CHECK(n == slices[t].count, "internal: a slice's drafted rows apart from its last token's");
      const std::span<const int32_t> table = plan.tables[recurrent_][t];
      of_slice[t].push_back({i, n, slot[t], static_cast<int64_t>(chain_slots_.size())});
      chain_slots_.insert(chain_slots_.end(), table.begin() + 1, table.begin() + n);
    }
    i += n;
  }
  for (int64_t i = 0; i < R;) {  // the one-row slices' runs of rows
    if (row_slots_[i] < 0) {
      ++i;
      continue;
    }
    int64_t n = 1;
    while (i + n < R && row_slots_[i + n] >= 0) ++n;
    runs_.push_back({i, n, -1});
    i += n;
  }
  for (std::vector<RowRun>& of : of_slice) {
    std::sort(of.begin(), of.end(), [&](const RowRun& x, const RowRun& y) {
      return rows[x.first_row].position < rows[y.first_row].position;
    });
    runs_.insert(runs_.end(), of.begin(), of.end());
  }
  upload(backend_, device_row_slots_, row_slots_);
}

int64_t HybridForward::keep_logit_rows(int64_t gemv_rows) {
  const model::ModelConfig& c = model_.config;
  const auto L = static_cast<int64_t>(logit_rows_.size());
  model::HybridActivations& a = acts_;
  const int64_t D = c.hidden_size, E = c.hybrid->mamba_channels(D);
  backend_.upload(a.row_index, logit_rows_.data(), L * int64_t{sizeof(int32_t)});
  backend_.gather_rows(a.x, a.row_index, L, D, a.h);
  backend_.copy(a.x, a.h, L * D * int64_t{sizeof(float)});
  backend_.gather_rows(a.memory, a.row_index, L, E, a.gated);
  backend_.copy(a.memory, a.gated, L * E * int64_t{sizeof(float)});
  int64_t gemv = 0;
  for (int64_t i = 0; i < L; ++i) {  // ascending: each entry moves to or below where it was
    const int32_t from = logit_rows_[i];
    lengths_[i] = lengths_[from];
    if (cross_pages_ >= 0) pages_[cross_pages_].tables[i] = pages_[cross_pages_].tables[from];
    gemv += from < gemv_rows;
    logit_rows_[i] = static_cast<int32_t>(i);
  }
  rows_ = L;
  backend_.upload(device_lengths_.as<void>(), lengths_.data(), L * int64_t{sizeof(int32_t)});
  if (cross_pages_ >= 0) {
    const PageIndex& p = pages_[cross_pages_];
    backend_.upload(p.device_tables.as<void>(), p.tables.data(), L * int64_t{sizeof(int32_t)});
  }
  return gemv;
}

const float* HybridForward::run(const StepPlan& plan) {
  const model::ModelConfig& c = model_.config;
  const int64_t D = c.hidden_size, V = c.vocab_size;
  index_step(plan);
  const int64_t R = rows_;
  model::HybridActivations& a = acts_;
  std::vector<int32_t> tokens(R);
  for (int64_t i = 0; i < R; ++i) tokens[i] = plan.rows[i].token;
  backend_.upload(a.tokens, tokens.data(), R * int64_t{sizeof(int32_t)});
  backend_.embed(matrices_.embed, a.tokens, a.x, R);
  model::HybridPass pass{backend_, c, R, plan.gemv_rows};
  Core core(*this);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    if (l == cross_from_) {
      if (logit_rows_.empty()) return nullptr;
      if (static_cast<int64_t>(logit_rows_.size()) < rows_) {
        pass.gemv_rows = keep_logit_rows(plan.gemv_rows);
        pass.rows = rows_;
      }
    }
    model::hybrid_layer_forward(pass, model_.tensors.layers[l], matrices_.layers[l], l, a, core);
  }
  // The final norm and the LM head (the GEMV order) over the rows that want logits.
  const auto L = static_cast<int64_t>(logit_rows_.size());
  if (L == 0) return nullptr;
  backend_.upload(a.row_index, logit_rows_.data(), L * int64_t{sizeof(int32_t)});
  backend_.gather_rows(a.x, a.row_index, L, D, a.h);
  hybrid_final_norm(pass, model_.tensors, a.h, a.h_final, L, a);
  return logits_.compute(backend_, matrices_.lm_head, a.h_final, L, V);
}

}  // namespace difftx::infer
