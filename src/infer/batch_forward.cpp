#include "infer/batch_forward.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "core/arena_plan.h"
#include "core/error.h"

namespace difftx {
namespace {

// The attention of a step: every row's keys and values into its blocks, then every row over
// its sequence's positions [0, position].
class PagedAttention : public AttentionCore {
 public:
  PagedAttention(KvPool& pool, std::span<const BatchRow> rows, std::span<const std::span<const int32_t>> tables,
                 std::vector<const void*>& pages, std::vector<int64_t>& page_at, std::vector<AttentionRow>& out_rows,
                 DecodeAttentionScratch& scratch)
      : pool_(pool), rows_(rows), tables_(tables), pages_(pages), page_at_(page_at), out_rows_(out_rows),
        scratch_(scratch) {}

  void attend(int64_t layer, LayerActivations& s, const float* lambda) override {
    const DecodeAttentionDims& a = pool_.dims();
    const int64_t P = pool_.block_tokens(), R = static_cast<int64_t>(rows_.size());
    const int64_t kw = a.k_width(), vw = a.v_width(), qw = a.attention_dims().q_width(), ow = a.out_width();
    for (int64_t i = 0; i < R; ++i) {
      const BatchRow& r = rows_[i];
      const int32_t block = tables_[r.table][r.position / P];
      store_kv(a, pool_.keys(block, layer), pool_.values(block, layer), r.position % P, 1, s.k + i * kw, s.v + i * vw);
    }
    pages_.clear();
    page_at_.clear();
    for (const auto& table : tables_) {
      page_at_.push_back(static_cast<int64_t>(pages_.size()));
      for (int32_t b : table) pages_.push_back(pool_.keys(b, layer));
      for (int32_t b : table) pages_.push_back(pool_.values(b, layer));
    }
    out_rows_.clear();
    const bool per_row_lambda = a.lambda_source() == LambdaSource::token_logits;
    for (int64_t i = 0; i < R; ++i) {
      const BatchRow& r = rows_[i];
      const void* const* keys = pages_.data() + page_at_[r.table];
      out_rows_.push_back({s.q + i * qw, r.position + 1, KvPages{keys, keys + tables_[r.table].size()},
                           per_row_lambda ? lambda + i * a.H : lambda, s.att + i * ow});
    }
    decode_attention_rows(a, out_rows_, scratch_);
  }

 private:
  KvPool& pool_;
  std::span<const BatchRow> rows_;
  std::span<const std::span<const int32_t>> tables_;
  std::vector<const void*>& pages_;
  std::vector<int64_t>& page_at_;
  std::vector<AttentionRow>& out_rows_;
  DecodeAttentionScratch& scratch_;
};

}  // namespace

BatchForward::BatchForward(const Model& model, KvPool& pool, int64_t max_rows, int64_t context)
    : model_(model), matrices_(model.panel_matrices()), pool_(pool), max_rows_(max_rows), scratch_(pool.dims(), 0, 1) {
  const ModelConfig& c = model.config;
  rope_storage_.resize(rope_table_floats(context, c.head_dim));
  rope_ = rope_table_build(rope_storage_.data(), context, c.head_dim, c.rope_theta, c.rope_scaling);
  const AttentionVariant a = c.attention_variant();
  const int64_t D = c.hidden_size, F = c.intermediate_size, H = c.num_attention_heads, N = max_rows;
  LayerActivations& s = s_;
  float** slots[] = {&s.x, &s.h1, &s.rstd1, &s.q, &s.k, &s.v, &s.lambda_logits, &s.att, &s.att_final, &s.sub_rstd,
                     &s.y, &s.h2, &s.rstd2, &s.gate, &s.up, &s.act, &head_norm_gain_};
  const int64_t sizes[] = {N * D, N * D, N, N * a.q_width(), N * a.k_width(), N * a.v_width(), N * H,
                           N * a.out_width(), N * a.out_width(), N * H, N * D, N * D, N, N * F, N * F, N * F,
                           2 * c.head_dim};
  ArenaPlan plan;
  int64_t offsets[std::size(sizes)];
  for (size_t i = 0; i < std::size(sizes); ++i) offsets[i] = plan.reserve(sizes[i]);
  arena_.resize(plan.size());
  for (size_t i = 0; i < std::size(sizes); ++i) *slots[i] = arena_.data() + offsets[i];
  if (!c.has_head_norm()) s.att_final = s.att;
}

const float* BatchForward::run(std::span<const BatchRow> rows, int64_t gemv_rows,
                               std::span<const std::span<const int32_t>> tables) {
  const ModelConfig& c = model_.config;
  const int64_t R = static_cast<int64_t>(rows.size()), D = c.hidden_size, V = c.vocab_size;
  DIFFTX_CHECK(R >= 1 && R <= max_rows_, "batch of ", R, " rows: must be in [1, ", max_rows_, "]");
  positions_.resize(R);
  tokens_.resize(R);
  for (int64_t i = 0; i < R; ++i) {
    positions_[i] = rows[i].position;
    tokens_[i] = rows[i].token;
    DIFFTX_CHECK(rows[i].position >= 0 && rows[i].position < rope_.max_T, "row position ", rows[i].position,
                 " is outside the context of ", rope_.max_T);
  }
  LayerActivations& s = s_;
  embed_tokens(matrices_.embed, tokens_.data(), s.x, R);
  PagedAttention attention(pool_, rows, tables, pages_, page_at_, attention_rows_, scratch_);
  LayerPass pass{c, 1, R, 0, rope_, head_norm_gain_};
  pass.positions = positions_.data();
  pass.gemv_rows = gemv_rows;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerTensors& w = model_.tensors.layers[l];
    const LayerMatrices& m = matrices_.layers[l];
    attention_block_forward(pass, w, m, l, s, attention);
    mlp_block_forward(pass, w, m, s, s.x);  // the next layer's input
  }
  // The final norm and the LM head over the rows that want logits. The head takes the GEMV order
  // for every such row (at most one per sequence and step, where the GEMM would repack the
  // whole head for a few rows): a row's logits still depend on that row alone.
  int64_t L = 0;
  for (const BatchRow& r : rows) L += r.logits;
  if (L == 0) return nullptr;
  if (hidden_.size() < 2 * L * D) hidden_.resize(2 * max_rows_ * D);
  if (logits_.size() < L * V) logits_.resize(L * V);
  float* gathered = hidden_.data();
  float* normed = gathered + L * D;
  for (int64_t i = 0, j = 0; i < R; ++i)
    if (rows[i].logits) std::memcpy(gathered + j++ * D, s.x + i * D, sizeof(float) * D);
  rmsnorm_forward(gathered, model_.tensors.final_norm, normed, s.rstd1, L, D, static_cast<float>(c.rms_norm_eps));
  LayerPass head{c, 1, L, 0, rope_, head_norm_gain_};
  head.gemv_rows = L;
  project(head, matrices_.lm_head, normed, logits_.data());
  return logits_.data();
}

}  // namespace difftx
